import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for gpsd on a loopback port, for the cases a real gpsd will not act out on
/// demand: it greets each client with VERSION, answers its `?WATCH` with a line the test
/// chooses, and then holds the connection open until the client leaves.
public final class FakeGPSD: Sendable {
    public let port: Int
    private let listener: Int32

    public init(answeringWatch answer: String) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }  // the listener was shut down
                Thread { Self.serve(client, answer: answer) }.start()
            }
        }
        thread.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func serve(_ client: Int32, answer: String) {
        defer { close(client) }
        send(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\r\n", to: client)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        var answered = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            received += buffer[0..<count]
            if !answered, String(decoding: received, as: UTF8.self).contains("?WATCH") {
                answered = true
                send(answer + "\r\n", to: client)
            }
        }
    }

    private static func send(_ text: String, to client: Int32) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
