#if canImport(Glibc)
import Glibc
#endif
import CTimeService
import GPSFix

/// chrony's SOCK refclock: each sample is one `struct sock_sample` datagram to the Unix
/// socket chronyd listens on (`refclock SOCK /run/chrony.clk.ttyUSB0.sock`).
///
/// Every sample is sent to the path afresh (`sendto`), never through a connection made
/// once: a socket that appears after the daemon started is used from the next sample, and
/// chronyd restarting (a new socket at the same path) is survived without a reconnect.
/// A sample's leap second warning goes in the datagram's `leap`; chronyd inserts or
/// deletes the second at the end of that day (of June or December only).
public final class ChronySocket: TimeSink {
    /// chrony's `SOCK_MAGIC`.
    static let magic: Int32 = 0x534f_434b

    public let path: String
    public var name: String { "chrony:\(path)" }
    private let descriptor: Int32

    /// A sink for the socket at `path`, which need not exist yet.
    public init(path: String) throws(TimeSinkError) {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(call: "socket", errno: errno) }
    }

    deinit { close(descriptor) }

    /// gpsd's socket names for a device: receiver time to `DIR/chrony.clk.BASENAME.sock`,
    /// pulses to `DIR/chrony.BASENAME.sock`, BASENAME the device path's last component.
    public static func paths(forDevice device: String, in directory: String) -> (receiverTime: String, pulse: String) {
        let base = device.split(separator: "/").last.map(String.init) ?? device
        return ("\(directory)/chrony.clk.\(base).sock", "\(directory)/chrony.\(base).sock")
    }

    public func send(_ sample: TimeSample, precision: Int) throws(TimeSinkError) {
        var datagram = gpsfix_sock_sample()
        datagram.tv = timeval(tv_sec: sample.clock.seconds, tv_usec: sample.clock.nanoseconds / 1000)
        // chrony's sock_sample: the offset between the true time and the system clock at
        // the measurement, from the exact clock reading. The timeval only dates the
        // measurement; an offset taken from it would carry its truncation, up to 1 µs.
        let (seconds, attoseconds) = sample.real.duration(since: sample.clock).components
        datagram.offset = Double(seconds) + Double(attoseconds) / 1e18
        datagram.pulse = 0  // the sample carries whole seconds, pulses included
        datagram.leap = sample.leap.clockDisciplineValue
        datagram.magic = Self.magic
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let utf8 = Array(path.utf8)
            guard utf8.count < raw.count else { return false }
            raw.copyBytes(from: utf8)
            return true
        }
        guard fits else { throw .system(call: "sendto (path too long)", errno: ENAMETOOLONG) }
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, &datagram, MemoryLayout<gpsfix_sock_sample>.size, Int32(MSG_NOSIGNAL), socketAddress,
                       socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard sent < 0 else { return }
        switch errno {
        case ENOENT, ECONNREFUSED, ENOTSOCK: throw .noListener(path)
        case EAGAIN, ENOBUFS: throw .notTaken(path)
        case let code: throw .system(call: "sendto", errno: code)
        }
    }
}
