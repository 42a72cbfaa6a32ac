import NIOCore
import OutputFormats

/// Server-Sent Events (`text/event-stream`): the reports of the socket, each as an event
/// named after its class, for browsers (`EventSource`) and scripts (`curl -N`).
enum EventStream {
    /// The HTTP head that opens a stream; `cors` names the origin allowed to read it.
    static func head(cors: String?) -> ByteBuffer {
        var text = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: keep-alive\r\n"
        if let cors { text += "Access-Control-Allow-Origin: \(cors)\r\n" }
        return ByteBuffer(string: text + "\r\n")
    }

    /// `report` (one gpsd JSON line) as one event (``ServerSentEvent``).
    static func event(_ report: ByteBuffer) -> ByteBuffer {
        ByteBuffer(bytes: ServerSentEvent.event(for: report.readableBytesView))
    }
}
