#if canImport(Glibc)
import Glibc
#endif
import CTimeService
import GPSFix
import NIOConcurrencyHelpers

/// An NTP shared-memory segment (ntpd's and chrony's `SHM` refclock, unit N at key
/// `0x4E545030 + N`), written with the mode 1 count/valid protocol as gpsd writes it.
///
/// Units 0 and 1 are created owner-only (0600), as ntpd creates them, so only root can
/// feed them; higher units are created 0666. One of them that exists already, writable by
/// another user (created by one before the daemon started), is refused: its writer could
/// feed the clock that trusts it. Each sample's leap second warning is the
/// segment's `leap` (ntpd's `LEAP_ADDSECOND` 1, `LEAP_DELSECOND` 2), as gpsd writes it.
///
/// Written from the receiver-time and pulse tasks: each write is under a pthread mutex
/// (`NIOLock`), which ThreadSanitizer sees; the segment's address never changes.
public final class SharedMemoryRefclock: TimeSink, @unchecked Sendable {
    public let unit: Int
    public var name: String { "shm:NTP\(unit)" }
    private let segment: UnsafeMutablePointer<gpsfix_shm_time>
    private let lock = NIOLock()

    /// Attaches unit `unit`, creating it when needed: owner-only for units 0 and 1.
    public convenience init(unit: Int) throws(TimeSinkError) {
        try self.init(unit: unit, ownerOnly: unit < 2)
    }

    /// Attaches unit `unit`, creating it when needed, `ownerOnly` or writable by all. Throws
    /// when the system refuses (a segment owned by another user, or IPC forbidden), or
    /// when an `ownerOnly` unit exists writable by another user.
    init(unit: Int, ownerOnly: Bool) throws(TimeSinkError) {
        self.unit = unit
        var mode: UInt32 = 0, owner: UInt32 = 0
        guard let attached = gpsfix_shm_attach(Int32(unit), ownerOnly ? 0o600 : 0o666, &mode, &owner) else {
            let code = errno  // before the message's string is made
            if code == 0 { throw .writableByOthers(segment: "NTP\(unit)", mode: Int(mode), owner: Int(owner)) }
            throw .system(call: "shmget/shmat(NTP\(unit))", errno: code)
        }
        segment = attached
    }

    deinit { gpsfix_shm_detach(segment) }

    /// The units of the `index`th device (from 0): receiver time in 2n and pulses in
    /// 2n + 1 when run as root, as gpsd does; otherwise from unit 2 on (2n + 2, 2n + 3),
    /// since units 0 and 1 are root's.
    public static func units(forDeviceAt index: Int, asRoot: Bool) -> (receiverTime: Int, pulse: Int) {
        let first = 2 * index + (asRoot ? 0 : 2)
        return (first, first + 1)
    }

    public func send(_ sample: TimeSample, precision: Int) throws(TimeSinkError) {
        lock.withLock {
            gpsfix_shm_write(
                segment, Int64(sample.real.seconds), sample.real.nanoseconds, Int64(sample.clock.seconds),
                sample.clock.nanoseconds, sample.leap.clockDisciplineValue, Int32(precision))
        }
    }
}
