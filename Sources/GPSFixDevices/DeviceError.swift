#if canImport(Glibc)
import Glibc
#endif

/// Why a device could not be opened or read, saying what to do about it.
public enum DeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path does not exist (unplugged, or a wrong name).
    case notFound(path: String)
    /// The process may not open the device: the file's mode and group.
    case permissionDenied(path: String)
    /// The kernel refuses the device to the process whatever the file's mode: a device
    /// cgroup's allow-list (systemd's `DeviceAllow=`) that does not name it.
    case notAllowed(path: String)
    /// Another process holds the port exclusively.
    case busy(path: String)
    /// The device went away while being read (unplugged, hang-up, pty master closed).
    case vanished(path: String)
    /// Autobaud heard no valid sentence at any speed.
    case noSentences(path: String)
    /// The bytes at the speed the line is set to have made no frames for a while: the
    /// receiver came back at another (a power cycle took a speed it had not saved).
    case speedLost(path: String, bps: Int?)
    /// A speed the port does not support.
    case unsupportedSpeed(Int)
    /// The device refused what was asked of it (a gpsd answering a WATCH with an ERROR):
    /// asked again after a longer wait than a device that is absent.
    case refused(path: String, message: String)
    /// A network source could not be reached, or did not answer in time (no gpsd
    /// listening, its host down).
    case unreachable(path: String, message: String)
    /// Any other system error, with the call that failed.
    case system(path: String, call: String, errno: Int32)

    public var description: String {
        switch self {
        case .notFound(let path):
            "\(path) does not exist: check the device is plugged in, or name it by its /dev/serial/by-id link"
        case .permissionDenied(let path):
            "Permission denied on \(path): add the service user to the dialout group"
        case .notAllowed(let path):
            "\(path) is not allowed to the service: add it to the unit's device list (systemctl edit gpsfixd.service: DeviceAllow=\(path) rw)"
        case .busy(let path):
            "\(path) is held by another process (gpsd, ModemManager, a terminal): stop it or choose another port"
        case .vanished(let path):
            "\(path) went away"
        case .noSentences(let path):
            "no valid NMEA sentence from \(path) at any common speed: is it a GPS receiver, and is it sending?"
        case .speedLost(let path, let bps):
            "what \(path) sends\(bps.map { " at \($0) bps" } ?? "") has made no frames for a while: finding its speed again"
        case .unsupportedSpeed(let speed):
            "\(speed) bps is not a supported serial speed"
        case .refused(let path, let message):
            "\(path) refused the request: \(message)"
        case .unreachable(let path, let message):
            "\(path) cannot be reached: \(message)"
        case .system(let path, let call, let errno):
            "\(call) on \(path) failed: \(String(cString: strerror(errno)))"
        }
    }

    /// The error for a failed `call` on `path`, from `errno`.
    static func from(errno code: Int32, path: String, call: String) -> DeviceError {
        switch code {
        case ENOENT, ENODEV, ENXIO: .notFound(path: path)
        case EACCES: .permissionDenied(path: path)
        // A file's mode answers EACCES; only an allow-list of devices answers EPERM to an open.
        case EPERM: .notAllowed(path: path)
        case EBUSY: .busy(path: path)
        case EIO, EBADF: .vanished(path: path)
        default: .system(path: path, call: call, errno: code)
        }
    }
}
