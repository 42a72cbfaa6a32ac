import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain client on a Unix socket or loopback TCP, reading lines with a timeout.
///
/// Its reads block; async tests use ``line(timeout:)``, which reads on a thread of its own
/// rather than on Swift's cooperative pool, whose few threads the server under test needs.
/// One test uses a client at a time.
public final class LineClient: @unchecked Sendable {
    public let descriptor: Int32
    private var pending: [UInt8] = []

    public init(unixPath: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.unixAddress(unixPath)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
    }

    /// The address of the Unix socket at `path`.
    public static func unixAddress(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A client of `127.0.0.1:port`.
    public init(tcpPort port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
    }

    deinit { close(descriptor) }

    /// A client of the server that is starting at `unixPath`, once it accepts; `nil` if it
    /// does not within `seconds`.
    public static func connect(unixPath: String, within seconds: Double = 10) -> LineClient? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let client = try? LineClient(unixPath: unixPath) { return client }
            guard Date() < deadline else { return nil }
            usleep(25_000)
        }
    }

    /// A client of the server that is starting on `port` (loopback TCP), once it accepts;
    /// `nil` if it does not within `seconds`.
    public static func connect(tcpPort port: Int, within seconds: Double = 10) -> LineClient? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let client = try? LineClient(tcpPort: port) { return client }
            guard Date() < deadline else { return nil }
            usleep(25_000)
        }
    }

    public func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    public func send(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Ends the connection both ways: the server reads its end.
    public func hangUp() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Exactly `count` bytes, or `nil` at end of stream or after `timeout` seconds.
    public func readBytes(count: Int, timeout: Double = 5) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        while pending.count < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let received = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if received < 0, errno == EINTR { continue }
            guard received > 0 else { return nil }
            pending += buffer[0..<received]
        }
        defer { pending.removeFirst(count) }
        return Array(pending[0..<count])
    }

    /// Whether the server ended the stream: a `nil` from ``readLine(timeout:)`` then is not
    /// a timeout, and every later one is immediate.
    public private(set) var reachedEnd = false

    /// The next line (without CR LF), or `nil` at end of stream or after `timeout` seconds.
    public func readLine(timeout: Double = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = pending[..<newline]
                pending.removeFirst(newline + 1)
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000))
            if ready < 0, errno == EINTR { continue }  // a signal (a child's end) is no timeout
            guard ready > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                reachedEnd = true
                return nil
            }
            pending += buffer[0..<count]
        }
    }

    /// Lines until one satisfies `condition` (included), or `nil` on timeout.
    public func readLines(until condition: (String) -> Bool, timeout: Double = 10) -> [String]? {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while let line = readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            lines.append(line)
            if condition(line) { return lines }
        }
        return nil
    }

    /// ``readLine(timeout:)`` on a thread of its own: not on the cooperative pool, nor on a
    /// dispatch queue, whose worker threads on Linux are the pool's.
    public func line(timeout: Double = 5) async -> String? {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.readLine(timeout: timeout)) }.start()
        }
    }
}
