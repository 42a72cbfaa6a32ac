#if canImport(Glibc)
import Glibc
#endif

/// A connected Unix stream socket, for the daemon's sockets.
enum UnixSocket {
    /// Why a connection failed: `errno`, and its text.
    struct Failure: Error {
        let code: Int32
        var reason: String { String(cString: strerror(code)) }
    }

    /// A descriptor connected to `path` (close-on-exec); the caller closes it. A daemon
    /// that stopped accepting (its queue full) fails it with EAGAIN after
    /// ``DaemonConnection/connectTimeout`` seconds, as an address that never answers does.
    static func connect(path: String) throws(Failure) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw Failure(code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(code: errno) }
        setSendTimeout(of: descriptor, seconds: DaemonConnection.connectTimeout)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(code: code)
        }
        return descriptor
    }
}

/// Bounds each blocking send on `descriptor`, and a blocking connect, to `seconds`
/// (`SO_SNDTIMEO`): a peer that stops reading, or never answers, cannot hang the tool.
func setSendTimeout(of descriptor: Int32, seconds: Int) {
    var limit = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
}
