import NIOCore

/// Server-Sent Events (`text/event-stream`): the reports of the socket, each as an event
/// named after its class, for browsers (`EventSource`) and scripts (`curl -N`).
enum EventStream {
    /// The HTTP head that opens a stream; `cors` names the origin allowed to read it.
    static func head(cors: String?) -> ByteBuffer {
        var text = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: keep-alive\r\n"
        if let cors { text += "Access-Control-Allow-Origin: \(cors)\r\n" }
        return ByteBuffer(string: text + "\r\n")
    }

    /// `report` (one gpsd JSON line, `{"class":"TPV",...}` ended by CR LF) as one event:
    /// `event: tpv`, `data: {...}`, a blank line.
    static func event(_ report: ByteBuffer) -> ByteBuffer {
        let bytes = report.readableBytesView
        let prefix = Array(#"{"class":""#.utf8)
        var name = "report"
        if bytes.starts(with: prefix) {
            let start = bytes.index(bytes.startIndex, offsetBy: prefix.count)
            if let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) {
                name = String(decoding: bytes[start..<end], as: UTF8.self).lowercased()
            }
        }
        var json = bytes[...]
        while let last = json.last, last == 10 || last == 13 { json = json.dropLast() }
        var event = ByteBufferAllocator().buffer(capacity: json.count + name.utf8.count + 16)
        event.writeString("event: \(name)\ndata: ")
        event.writeBytes(json)
        event.writeString("\n\n")
        return event
    }
}
