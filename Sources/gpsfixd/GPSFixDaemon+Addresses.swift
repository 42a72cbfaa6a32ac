#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Logging
import ServiceAddress

/// The addresses the daemon listens on, as its options give them.
extension GPSFixDaemon {
    /// `HOST:PORT` (or `HOST[:PORT]` with `defaultPort`) of `option`, an IPv6 host in brackets.
    static func parseAddress(_ text: String, option: String, defaultPort: Int? = nil) throws -> (host: String, port: Int) {
        let usage = defaultPort.map { "HOST[:PORT], as 127.0.0.1 or [::1]:\($0)" } ?? "HOST:PORT, as 127.0.0.1:2947 or [::1]:2947"
        guard let (host, portText) = ServiceAddress.splitHostAndPort(text[...]), !host.isEmpty else {
            throw ValidationError("\(option) wants \(usage)")
        }
        guard let port = portText.map({ Int($0) }) ?? defaultPort, (0...65535).contains(port) else {
            throw ValidationError("\(option) wants \(usage)")
        }
        return (String(host), port)
    }

    /// Whether `host` is a loopback address: `localhost`, an IPv4 address in 127.0.0.0/8,
    /// or `::1` (a name that merely starts with `127.` is not).
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { Array($0) } == Array(repeating: 0, count: 15) + [1]
    }

    /// The Unix socket to bind: the one asked for; else none when the service manager
    /// passed a Unix socket (it stands in for the default); else the default, its folder
    /// made when missing (a run by hand, without the package's units). A default this user
    /// cannot make or write is left out, said in the log, when clients are `servedElsewhere`
    /// (TCP, HTTP, NMEA out), as a default control socket that cannot be bound is left out;
    /// with no other way in, it is kept, and its bind's error ends the daemon.
    static func socketPath(asked: String?, passed descriptors: [Int32], servedElsewhere: Bool, logger: Logger) -> String? {
        if let asked { return asked }
        let passesUnixSocket = descriptors.contains { descriptor in
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            return named == 0 && Int32(address.ss_family) == AF_UNIX
        }
        guard !passesUnixSocket else { return nil }
        let folder = String(defaultSocket[..<(defaultSocket.lastIndex(of: "/") ?? defaultSocket.startIndex)])
        let usable = (mkdir(folder, 0o755) == 0 || errno == EEXIST) && access(folder, W_OK) == 0
        if usable || !servedElsewhere { return defaultSocket }
        let reason = String(cString: strerror(errno))
        logger.warning("no Unix socket: the default's folder \(folder) cannot be made or written (\(reason)); give --socket PATH")
        return nil
    }
}
