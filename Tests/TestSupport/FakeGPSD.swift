import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for gpsd on a loopback port, for the cases a real gpsd will not act out on
/// demand: it greets each client with VERSION, answers its `?WATCH` (or the request
/// named) with a line the test chooses, and then holds the connection open until the
/// client leaves.
public final class FakeGPSD: Sendable {
    public let port: Int
    private let listener: Int32

    public init(answering request: String = "?WATCH", with answer: String) throws {
        let (listener, port) = try LoopbackListener.open()
        self.listener = listener
        self.port = port
        let thread = Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }  // the listener was shut down
                Thread { Self.serve(client, request: request, answer: answer) }.start()
            }
        }
        thread.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func serve(_ client: Int32, request: String, answer: String) {
        defer { close(client) }
        send(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\r\n", to: client)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        var answered = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            received += buffer[0..<count]
            if !answered, String(decoding: received, as: UTF8.self).contains(request) {
                answered = true
                send(answer + "\r\n", to: client)
            }
        }
    }

    private static func send(_ text: String, to client: Int32) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
