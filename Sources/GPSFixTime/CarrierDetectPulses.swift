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
                    var seconds: Int64 = 0
                    var nanoseconds = 0
                    let level = gpsfix_wait_for_carrier_change(descriptor, &seconds, &nanoseconds)
                    if level == 1 {
                        outlet.send(WallTime(seconds: Int(seconds), nanoseconds: nanoseconds))
                    } else if level < 0 {
                        if errno == EINTR { continue }
                        if errno == EINVAL || errno == ENOTTY {
                            return outlet.finish(throwing: PulseSourceError.noModemStatus(path: port.path))
                        }
                        break  // the port closed or vanished: wait for it to be reopened
                    }
                }
            }
            outlet.finish()
        }
    }
}
