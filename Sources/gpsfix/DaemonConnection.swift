import ArgumentParser
import GPSFixDevices
import ServiceAddress

#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon listens, as `gpsfix watch` and `gpsfix poll` take it.
struct DaemonAddress: ParsableArguments {
    @Option(help: "The daemon's Unix socket.")
    var socket = "/run/gpsfixd/gpsfixd.sock"

    @Option(help: "Connect over TCP to HOST:PORT instead (a gpsd works too).")
    var tcp: String?
}

/// Why the daemon could not be reached; printed as it is.
struct ConnectionError: Error, CustomStringConvertible {
    let description: String
    /// Whether the socket's permissions refused this user.
    let permissionDenied: Bool
    init(_ description: String, permissionDenied: Bool = false) {
        self.description = description
        self.permissionDenied = permissionDenied
    }
}

/// A line-oriented connection to gpsfixd (or gpsd): send requests, read report lines.
final class DaemonConnection {
    /// The longest line read: a gpsd report is at most some tens of kilobytes (a SKY of
    /// 140 satellites, a POLL); a peer that sends more without a line end is no daemon.
    static let maximumLineLength = 1 << 20

    private let descriptor: Int32
    private var pending: [UInt8] = []
    /// How much of `pending` has been searched for a line end.
    private var searched = 0

    init(_ address: DaemonAddress) throws {
        if let tcp = address.tcp {
            guard let colon = tcp.lastIndex(of: ":"), let port = UInt16(tcp[tcp.index(after: colon)...]) else {
                throw ValidationError("--tcp wants HOST:PORT, as localhost:2947, 127.0.0.1:2947 or [::1]:2947")
            }
            var host = tcp[..<colon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            descriptor = try Self.connect(host: String(host), port: port, name: tcp)
        } else {
            do {
                descriptor = try UnixSocket.connect(path: address.socket)
            } catch {
                if error.code == ENAMETOOLONG { throw ValidationError("socket path too long") }
                if error.code == EACCES {
                    throw ConnectionError(
                        "cannot connect to \(address.socket): permission denied (the packaged daemon's socket is for group gpsfix: sudo adduser $USER gpsfix; or give --tcp 127.0.0.1:2947)",
                        permissionDenied: true)
                }
                let reason = error.code == EAGAIN ? "not accepted within \(Self.connectTimeout) seconds" : error.reason
                throw ConnectionError("cannot connect to \(address.socket): \(reason); is gpsfixd running?")
            }
        }
    }

    /// How long a connection may take: an address whose packets go nowhere (a host that is
    /// down, a firewall that drops) would hold the kernel's connect for two minutes.
    static let connectTimeout = 10

    /// Resolves `host` (a name, IPv4 or IPv6) and connects to the first address that
    /// answers within ``connectTimeout`` seconds; the caller closes the descriptor.
    static func connect(host: String, port: UInt16, name: String) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw ConnectionError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var reason = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { continue }
            // A blocking connect waits at most the send timeout, then fails with EINPROGRESS.
            setSendTimeout(of: descriptor, seconds: Self.connectTimeout)
            if Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                // `watch` of a silent receiver reads nothing for hours: a daemon's host
                // that vanished (powered off, a NAT entry lost) is found by the probes.
                TCPKeepalive.standard.enable(on: descriptor)
                return descriptor
            }
            reason = errno == EINPROGRESS ? "no answer within \(Self.connectTimeout) seconds" : String(cString: strerror(errno))
            close(descriptor)
        }
        throw ConnectionError("cannot connect to \(name): \(reason); is gpsfixd running?")
    }

    deinit { close(descriptor) }

    /// Sends `request` whole, or throws saying why it could not.
    func send(_ request: String) throws {
        let bytes = Array(request.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw ConnectionError("cannot send \(request.prefix(40)): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// The next report line, without its CR LF; `nil` when the daemon closes the connection,
    /// or when `deadline` (on the monotonic clock) passes first. Throws on a line longer
    /// than ``maximumLineLength``, and when the connection fails (reset by the daemon).
    func nextLine(before deadline: ContinuousClock.Instant? = nil) throws -> String? {
        while true {
            if let newline = pending[searched...].firstIndex(of: 10) {
                let line = pending[..<newline]
                let text = String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
                pending.removeFirst(newline + 1)
                searched = 0
                return text
            }
            searched = pending.count
            guard pending.count <= Self.maximumLineLength else {
                throw ConnectionError("the peer sent more than \(Self.maximumLineLength >> 20) MiB without a line end: not a gpsd-protocol daemon")
            }
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return nil }
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, left.pollTimeout) > 0 else { continue }
            }
            var buffer = [UInt8](repeating: 0, count: 16384)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            // A connection reset is the daemon gone, not the end of what it had to say.
            guard count >= 0 else { throw ConnectionError("cannot read from the daemon: \(String(cString: strerror(errno)))") }
            guard count > 0 else { return nil }
            pending += buffer[0..<count]
        }
    }
}
