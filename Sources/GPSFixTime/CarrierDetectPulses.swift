#if canImport(Glibc)
import Glibc
#endif
import CTimeService
import GPSFix
import GPSFixDevices

/// Pulses from a serial port's carrier-detect line (DCD), where receivers without a
/// kernel PPS device wire their pulse: a thread waits in `TIOCMIWAIT` for the line to
/// change and stamps each rising edge as the call returns. Scheduling latency makes it
/// coarser than the kernel's stamp (tens of microseconds; a USB adapter, a millisecond).
/// A pulse narrower than that (a timing receiver's 10 µs) is over before the line can be
/// read: a UART's driver counts the change it latched, which tells the pulse came
/// (``CarrierLine``). A USB adapter reports the line's state every 1 to 16 ms and latches
/// nothing: a pulse narrower than that may never reach it.
///
/// It waits on the port the reader has open (a duplicate of its descriptor), since the
/// port is held exclusively. A thread waiting on a line that never changes stays in the
/// kernel until the line changes or the port closes, even after its consumer left.
public struct CarrierDetectPulses: PulseSource {
    public let port: SerialPort
    public var name: String { "DCD of \(port.path)" }

    public init(port: SerialPort) {
        self.port = port
    }

    public func pulses() -> AsyncThrowingStream<PulseEdge, any Error> {
        let port = self.port
        return PulseThread.pulses(of: port.path) { outlet, isStopped in
            var waitedBefore = false
            while !isStopped() {
                // A wait failed: the reader may not have seen the line go yet, and a copy
                // of its descriptor taken at once would fail at once, again and again.
                if waitedBefore { usleep(500_000) }
                // The port is reopened after an unplug: wait for the reader to open it.
                guard let descriptor = port.duplicateOpenDescriptor() else {
                    usleep(500_000)
                    continue
                }
                defer { close(descriptor) }
                waitedBefore = true  // the loop below ends only when stopped, or when a wait fails
                while !isStopped() {
                    // The line is read just before each wait, so an edge while the last
                    // was being sent is not taken for this wait's. The kernel counts from
                    // its own reading as the wait begins: an edge in the microseconds
                    // between the two is counted here and wakes no one, and the wake
                    // after it is taken for a rise (a pulse's width late), or, begun high,
                    // a rise is missed.
                    var seconds: Int64 = 0
                    var nanoseconds = 0
                    guard let before = CarrierLine.read(descriptor),
                        gpsfix_wait_for_carrier_change(descriptor, &seconds, &nanoseconds) == 0,
                        let after = CarrierLine.read(descriptor)
                    else {
                        if errno == EINTR { continue }
                        if errno == EINVAL || errno == ENOTTY {
                            return outlet.finish(throwing: PulseSourceError.noModemStatus(path: port.path))
                        }
                        break  // the port closed or vanished: wait for it to be reopened
                    }
                    if CarrierLine.wakeMarksPulse(before: before, after: after) {
                        outlet.send(WallTime(seconds: Int(seconds), nanoseconds: nanoseconds))
                    }
                }
            }
            outlet.finish()
        }
    }
}

/// A carrier-detect line as read: its level, and the count of its changes the driver keeps
/// (`nil` where it keeps none).
struct CarrierLine {
    var level: Bool
    var changes: UInt32?

    /// The line of `descriptor` now; `nil`, with errno set, when it cannot be read.
    static func read(_ descriptor: Int32) -> CarrierLine? {
        var line = gpsfix_carrier_line()
        guard gpsfix_read_carrier_line(descriptor, &line) == 0 else { return nil }
        return CarrierLine(level: line.level != 0, changes: line.counted != 0 ? line.changes : nil)
    }

    /// Whether a wake of the wait begun with the line `before`, the line then `after`, was
    /// stamped at a pulse's rising edge. A wait begun with the line down ends at its first
    /// change, a rise, whether or not the line is still up when read: a pulse over by then
    /// is counted, not seen. A wait begun with it up ends at a fall, even when the count
    /// says it rose again since: that stamp would be a pulse's width late. A line found up
    /// rose, counted or not (a driver whose count lags its level).
    static func wakeMarksPulse(before: CarrierLine, after: CarrierLine) -> Bool {
        guard !before.level else { return false }
        guard let counted = before.changes, let now = after.changes else { return after.level }
        return now != counted || after.level
    }
}
