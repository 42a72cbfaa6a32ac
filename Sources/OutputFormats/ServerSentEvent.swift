/// A gpsd report as a Server-Sent Event (`text/event-stream`), for browsers
/// (`EventSource`) and scripts (`curl -N`): `event: tpv`, `data: {...}`, a blank line.
public enum ServerSentEvent {
    /// `report` (one gpsd JSON line, `{"class":"TPV",...}` ended by CR LF) as one event
    /// named after its class (`report` when it has none).
    public static func event(for report: some BidirectionalCollection<UInt8>) -> [UInt8] {
        let prefix = Array(#"{"class":""#.utf8)
        var name: [UInt8] = Array("report".utf8)
        if report.starts(with: prefix) {
            let start = report.index(report.startIndex, offsetBy: prefix.count)
            if let end = report[start...].firstIndex(of: UInt8(ascii: "\"")) {
                name = report[start..<end].map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
            }
        }
        var json = report[...]
        while let last = json.last, last == 10 || last == 13 { json = json.dropLast() }
        // A line end inside the name would end the event's field: none is kept.
        name.removeAll { $0 == 10 || $0 == 13 }
        var event: [UInt8] = []
        event.reserveCapacity(json.count + name.count + 16)
        event += Array("event: ".utf8) + name + Array("\ndata: ".utf8)
        event += json
        event += [10, 10]
        return event
    }
}
