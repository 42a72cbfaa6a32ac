#if canImport(Glibc)
import Glibc
#endif

/// The Unix socket's file: a stale one from a crashed run is replaced, a live one is
/// never stolen.
enum SocketPath {
    enum Problem: Error, CustomStringConvertible {
        case inUse(String)
        case notASocket(String)
        case tooLong(String)

        var description: String {
            switch self {
            case .inUse(let path): "\(path) is in use by a running server: stop it, or choose another --socket"
            case .notASocket(let path): "\(path) exists and is not a socket: remove it, or choose another --socket"
            case .tooLong(let path): "\(path) is too long for a Unix socket path"
            }
        }
    }

    /// Makes `path` free to bind: removes a socket nobody answers on, refuses a live one.
    static func prepare(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // nothing there
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw Problem.notASocket(path) }
        if try isAnswering(path) { throw Problem.inUse(path) }
        unlink(path)
    }

    /// Whether a server accepts connections on `path`.
    static func isAnswering(_ path: String) throws -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw Problem.tooLong(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0
    }
}
