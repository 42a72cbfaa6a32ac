import NMEA

/// A receiver capture in gpsfake's log format: `#` comment lines (a header of
/// `# Key: value` lines) and the receiver's bytes.
///
/// Two header lines change how the bytes are read, as gpsfake reads them:
/// `# Date: yyyy-mm-dd` gives the century for two-digit years, and
/// `# Delay-Cookie: C S` names a character C that marks write boundaries in the data
/// and is removed from it.
public struct CaptureLog: Sendable {
    /// The header's `Key: value` pairs, in order.
    public var header: [(key: String, value: String)]
    /// The receiver's bytes: every line that is not a comment, cookies removed.
    public var payload: [UInt8]

    /// Splits `bytes` into header and payload, copying the payload in as few runs as the
    /// comment lines allow.
    public init(_ bytes: [UInt8]) {
        header = []
        payload = []
        payload.reserveCapacity(bytes.count)
        var comments: [Range<Int>] = []
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
            if bytes[lineStart] == UInt8(ascii: "#") { comments.append(lineStart..<lineEnd) }
            lineStart = lineEnd
        }
        for comment in comments {
            let text = String(decoding: bytes[comment].dropFirst(), as: UTF8.self).trimmingCharacters(in: " \t\r\n")
            guard let colon = text.firstIndex(of: ":") else { continue }
            header.append(
                (String(text[..<colon]).trimmingCharacters(in: " \t"),
                 String(text[text.index(after: colon)...]).trimmingCharacters(in: " \t")))
        }
        let cookie = header.first { $0.key == "Delay-Cookie" }?.value.utf8.first
        var start = 0
        for comment in comments + [bytes.count..<bytes.count] {
            let run = bytes[start..<comment.lowerBound]
            if let cookie { payload.append(contentsOf: run.lazy.filter { $0 != cookie }) } else { payload.append(contentsOf: run) }
            start = comment.upperBound
        }
    }

    /// The date of the `# Date: yyyy-mm-dd` header, when it has one, at midnight.
    public var referenceDate: GPSTime? {
        guard let date = header.first(where: { $0.key == "Date" })?.value else { return nil }
        let parts = date.prefix(10).split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        return GPSTime(year: parts[0], month: parts[1], day: parts[2], time: NMEATime(hour: 0, minute: 0, second: 0))
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        let start = firstIndex { !characters.contains($0) } ?? endIndex
        let end = lastIndex { !characters.contains($0) }.map(index(after:)) ?? start
        return start < end ? String(self[start..<end]) : ""
    }
}
