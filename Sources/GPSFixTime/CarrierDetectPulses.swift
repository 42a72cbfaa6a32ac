#if canImport(Glibc)
import Glibc
#endif
import CTimeService
import GPSFix
import GPSFixDevices
import Synchronization

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

    public func pulses() -> AsyncThrowingStream<WallTime, any Error> {
        let port = self.port
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: WallTime.self, throwing: (any Error).self)
        let stopped = Atomic<Bool>(false)
        continuation.onTermination = { _ in stopped.store(true, ordering: .releasing) }
        let started = DeviceThread.start(named: "gpsfix-pps") {
            while !stopped.load(ordering: .acquiring) {
                // The port is reopened after an unplug: wait for the reader to open it.
                guard let descriptor = port.duplicateOpenDescriptor() else {
                    usleep(500_000)
                    continue
                }
                defer { close(descriptor) }
                while !stopped.load(ordering: .acquiring) {
                    let level = gpsfix_wait_for_carrier_change(descriptor)
                    let stamp = WallTime.systemNow()
                    if level == 1 {
                        continuation.yield(stamp)
                    } else if level < 0 {
                        if errno == EINTR { continue }
                        if errno == EINVAL || errno == ENOTTY {
                            return continuation.finish(throwing: PulseSourceError.noModemStatus(path: port.path))
                        }
                        break  // the port closed or vanished: wait for it to be reopened
                    }
                }
            }
            continuation.finish()
        }
        if !started { continuation.finish(throwing: PulseSourceError.system(path: port.path, call: "pthread_create", errno: EAGAIN)) }
        return stream
    }
}
