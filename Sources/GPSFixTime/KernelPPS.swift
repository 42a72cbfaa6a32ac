#if canImport(Glibc)
import Glibc
#endif
import CTimeService
import GPSFix
import GPSFixDevices

/// Pulses from the kernel's PPS API (RFC 2783, Linux's `/dev/ppsN`): the kernel stamps
/// each assert edge in its interrupt handler, so the stamp is as good as the machine's.
///
/// A thread of its own waits in `PPS_FETCH`, two seconds at a time, so that it notices
/// its consumer leaving.
public struct KernelPPS: PulseSource {
    public let path: String
    public var name: String { path }

    public init(path: String) {
        self.path = path
    }

    /// The `/dev/ppsN` the kernel attached to the serial port at `serialPath` through the
    /// PPS line discipline (a GPIO's names no port), read from `/sys/class/pps/*/path`.
    public static func device(forSerialPort serialPath: String, sysfs: String = "/sys/class/pps") -> String? {
        guard let directory = opendir(sysfs) else { return nil }
        defer { closedir(directory) }
        let wanted = resolved(serialPath)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix("pps") else { continue }
            guard let text = contents(of: "\(sysfs)/\(name)/path") else { continue }
            let attached = text.trimmingWhitespace()
            if !attached.isEmpty, attached == serialPath || resolved(attached) == wanted { return "/dev/\(name)" }
        }
        return nil
    }

    /// What the kernel says the PPS device at `path` (links resolved) is attached to: the
    /// serial line of the PPS line discipline, an empty string for none (a GPIO), or `nil`
    /// when it knows no such device (not there yet).
    public static func attachment(of path: String, sysfs: String = "/sys/class/pps") -> String? {
        let name = resolved(path).split(separator: "/").last.map(String.init) ?? path
        return contents(of: "\(sysfs)/\(name)/path").map { $0.trimmingWhitespace() }
    }

    public func pulses() -> AsyncThrowingStream<PulseEdge, any Error> {
        let path = self.path
        return PulseThread.pulses(of: path) { outlet, isStopped in
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 || errno == EACCES else {
                return outlet.finish(throwing: PulseSourceError.system(path: path, call: "open", errno: errno))
            }
            // Read-only is enough to fetch; it keeps the device's capture settings.
            let fd = descriptor >= 0 ? descriptor : open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return outlet.finish(throwing: PulseSourceError.system(path: path, call: "open", errno: errno)) }
            defer { close(fd) }
            var capabilities: Int32 = 0
            guard gpsfix_pps_capabilities(fd, &capabilities) == 0 else {
                return outlet.finish(throwing: PulseSourceError.system(path: path, call: "ioctl(PPS_GETCAP)", errno: errno))
            }
            _ = gpsfix_pps_capture_assert(fd)
            var lastSequence: UInt32?
            while !isStopped() {
                var sequence: UInt32 = 0
                var seconds: Int64 = 0
                var nanoseconds = 0
                guard gpsfix_pps_fetch(fd, 2, &sequence, &seconds, &nanoseconds) == 0 else {
                    if errno == ETIMEDOUT || errno == EINTR { continue }
                    return outlet.finish(throwing: PulseSourceError.system(path: path, call: "ioctl(PPS_FETCH)", errno: errno))
                }
                // A fetch that returns the same edge again is no new pulse.
                guard sequence != lastSequence, seconds != 0 else { continue }
                lastSequence = sequence
                outlet.send(WallTime(seconds: Int(seconds), nanoseconds: nanoseconds))
            }
            outlet.finish()
        }
    }

    /// `path` with its links resolved, or as given when it cannot be (not there).
    private static func resolved(_ path: String) -> String {
        SerialPort.resolved(path) ?? path
    }

    private static func contents(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}

/// Why a pulse source stopped.
public enum PulseSourceError: Error, Hashable, Sendable, CustomStringConvertible {
    case system(path: String, call: String, errno: Int32)
    /// The line cannot report carrier changes (a pseudo-terminal, a USB adapter without
    /// modem-status interrupts).
    case noModemStatus(path: String)

    public var description: String {
        switch self {
        case .system(let path, let call, let errno): "\(path): \(call) failed: \(String(cString: strerror(errno)))"
        case .noModemStatus(let path): "\(path) cannot report carrier-detect changes (no modem-status interrupts)"
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        return String(text)
    }
}
