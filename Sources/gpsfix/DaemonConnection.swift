import ArgumentParser
import Foundation

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

/// A line-oriented connection to gpsfixd (or gpsd): send requests, read report lines.
final class DaemonConnection {
    private let descriptor: Int32
    private var pending: [UInt8] = []

    init(_ address: DaemonAddress) throws {
        if let tcp = address.tcp {
            guard let colon = tcp.lastIndex(of: ":"), let port = UInt16(tcp[tcp.index(after: colon)...]) else {
                throw ValidationError("--tcp wants HOST:PORT")
            }
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var server = sockaddr_in()
            server.sin_family = sa_family_t(AF_INET)
            server.sin_port = port.bigEndian
            let host = String(tcp[..<colon]) == "localhost" ? "127.0.0.1" : String(tcp[..<colon])
            guard inet_pton(AF_INET, host, &server.sin_addr) == 1 else { throw ValidationError("--tcp wants a numeric IPv4 host") }
            try Self.connect(descriptor, &server, to: tcp)
        } else {
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var server = sockaddr_un()
            server.sun_family = sa_family_t(AF_UNIX)
            let path = Array(address.socket.utf8)
            guard path.count < MemoryLayout.size(ofValue: server.sun_path) else { throw ValidationError("socket path too long") }
            withUnsafeMutableBytes(of: &server.sun_path) { raw in
                raw.copyBytes(from: path)
                raw[path.count] = 0
            }
            try Self.connect(descriptor, &server, to: address.socket)
        }
    }

    private static func connect<Address>(_ descriptor: Int32, _ address: inout Address, to name: String) throws {
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ValidationError("cannot connect to \(name): \(reason); is gpsfixd running?")
        }
    }

    deinit { close(descriptor) }

    func send(_ request: String) {
        _ = Array(request.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The next report line, without its CR LF; `nil` when the daemon closes the connection.
    func nextLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = pending[..<newline]
                pending.removeFirst(newline + 1)
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            var buffer = [UInt8](repeating: 0, count: 16384)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            pending += buffer[0..<count]
        }
    }
}
