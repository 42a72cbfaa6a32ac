#if canImport(Glibc)
import Glibc
#endif
import ProcessTable

/// The Unix socket's file: a stale one from a crashed run is replaced, a live one is
/// never stolen.
enum SocketPath {
    enum Problem: Error, CustomStringConvertible {
        case inUse(String)
        case notASocket(String)
        case tooLong(String)
        /// Connecting to find out whether it is live failed otherwise than being refused.
        case unknown(String, errno: Int32)

        var description: String {
            switch self {
            case .inUse(let path): "\(path) is in use by a running server: stop it, or choose another --socket"
            case .notASocket(let path): "\(path) exists and is not a socket: remove it, or choose another --socket"
            case .tooLong(let path): "\(path) is too long for a Unix socket path"
            case .unknown(let path, let errno):
                "\(path) may be in use (connecting to it failed: \(String(cString: strerror(errno)))): "
                    + "check who owns it, or choose another --socket"
            }
        }
    }

    /// Makes `path` free to bind: removes a socket nobody answers on (a connection to it
    /// is refused), refuses a live one, and leaves alone one it cannot tell. A connection
    /// its permissions deny is told by this network namespace's table of sockets: when a
    /// listener of that name may be there (another user's live server), the socket is left
    /// alone; when none is (a stale socket of root's, from a run by hand, kept in
    /// /run/gpsfixd across restarts), it is removed, where it would have kept the service
    /// from starting.
    static func prepare(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // nothing there
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw Problem.notASocket(path) }
        do {
            if try isAnswering(path) { throw Problem.inUse(path) }
        } catch Problem.unknown(_, let errno) where errno == EACCES || errno == EPERM {
            if ProcessTable().mayBeListening(onUnixPath: path) { throw Problem.unknown(path, errno: errno) }
        }
        // A folder where this user may not remove it (a sticky /tmp): said, not left to bind.
        if unlink(path) != 0, errno != ENOENT { throw Problem.unknown(path, errno: errno) }
    }

    /// Whether a server accepts connections on `path`: `false` only when the connection
    /// is refused (no one listens); an error that says neither throws.
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
        guard result != 0 else { return true }
        let error = errno
        guard error == ECONNREFUSED else { throw Problem.unknown(path, errno: error) }
        return false
    }
}
