import GPSFixDevices
import ReceiverFraming

/// Reads a caster's answer as it arrives, however it is cut into reads: NTRIP 1.0's
/// `ICY 200 OK` followed by the raw stream, NTRIP 2.0's HTTP/1.1 (chunked or not), or a
/// source table (`SOURCETABLE 200 OK`, or `Content-Type: gnss/sourcetable`).
public struct NTRIPResponseReader: Sendable {
    /// What the answer said, in order.
    public enum Event: Equatable, Sendable {
        /// The caster accepted the request; correction bytes follow.
        case accepted(version: Int)
        /// Correction bytes, as sent (chunking removed).
        case data([UInt8])
        /// The whole source table, once its end is read.
        case sourceTable([UInt8])
    }

    private enum Body {
        /// Until the answer's head is whole.
        case head
        case stream
        case table
    }

    /// The longest head a caster may send before its stream.
    static let maximumHead = 16 * 1024
    /// The largest source table taken (the largest public casters' are under 2 MB).
    static let maximumTable = 8 * 1024 * 1024

    private var body = Body.head
    private var head: [UInt8] = []
    private var table: [UInt8] = []
    private var tableExpected: Int?
    private var chunks: ChunkedDecoder?
    private var tableDone = false
    /// The caster asked, whose password an answer shown is cleared of.
    private let caster: NTRIPCaster?

    /// A reader of `caster`'s answer.
    public init(caster: NTRIPCaster? = nil) {
        self.caster = caster
    }

    /// Reads `bytes`, appending what they say to `events`; throws when the caster refused or
    /// does not speak NTRIP, with `events` holding what came before the fault (corrections
    /// that arrived whole in the same read are not lost with it).
    public mutating func feed(_ bytes: some Collection<UInt8>, into events: inout [Event]) throws(NTRIPError) {
        switch body {
        case .head:
            head.append(contentsOf: bytes)
            guard let (event, rest) = try readHead() else {
                guard head.count <= Self.maximumHead else { throw .protocolViolation("the caster's answer has no end of header in 16 KiB") }
                return
            }
            if let event { events.append(event) }
            head = []
            try takeBody(rest, into: &events)
        case .stream, .table:
            try takeBody(Array(bytes), into: &events)
        }
    }

    /// The caster closed the connection: a source table read without its end marker or
    /// length is whole now.
    public mutating func finish() -> [Event] {
        guard case .table = body, !tableDone else { return [] }
        tableDone = true
        return [.sourceTable(table)]
    }

    private mutating func takeBody(_ bytes: [UInt8], into events: inout [Event]) throws(NTRIPError) {
        guard !bytes.isEmpty else { return }
        var payload = bytes
        // A fault in the chunking ends the answer after what was whole before it.
        var fault: NTRIPError?
        if chunks != nil {
            payload = []
            do { try chunks!.decode(bytes, into: &payload) } catch { fault = error }
        }
        switch body {
        case .head: break
        case .stream:
            if !payload.isEmpty { events.append(.data(payload)) }
        case .table:
            guard !tableDone else { return }
            // Only what may hold a marker not seen before is searched: a table trickled
            // in small reads is not searched again whole at each.
            let unsearched = max(0, table.count - (Self.endMarker.count - 1))
            table += payload
            guard table.count <= Self.maximumTable else { throw .protocolViolation("the caster's source table is over 8 MiB") }
            let ended =
                tableExpected.map { table.count >= $0 }
                ?? (chunks?.isDone == true || Self.find(Self.endMarker, in: table, from: unsearched) != nil)
            if ended {
                tableDone = true
                events.append(.sourceTable(table))
            }
        }
        if let fault { throw fault }
    }

    /// The head, once whole: what it says, and the bytes after it.
    private mutating func readHead() throws(NTRIPError) -> (Event?, [UInt8])? {
        guard let firstLineEnd = Self.find([13, 10], in: head) else { return nil }
        let statusLine = String(decoding: head[..<firstLineEnd], as: UTF8.self)
        // NTRIP 1.0: the stream follows the status line at once.
        if statusLine == "ICY 200 OK" {
            body = .stream
            return (.accepted(version: 1), Array(head[(firstLineEnd + 2)...]))
        }
        // A refusal is final with its status line: some casters close right after it.
        let isTable = statusLine.hasPrefix("SOURCETABLE 200")
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard isTable || (parts.count >= 2 && parts[0].hasPrefix("HTTP/1.")), let status = isTable ? 200 : Int(parts[1]) else {
            throw .protocolViolation("the caster answered '\(printable(statusLine))', which is not NTRIP")
        }
        switch status {
        case 200: break
        case 401: throw .refused("the caster refused the user name or password (401 Unauthorized)")
        case 404: throw .refused("the caster has no such mountpoint (404 Not Found)")
        default: throw .refused("the caster answered '\(printable(statusLine))'")
        }
        guard let headEnd = Self.find([13, 10, 13, 10], in: head) else { return nil }
        let rest = Array(head[(headEnd + 4)...])
        var headers: [String: String] = [:]
        // A head of the status line alone ends where that line does.
        let fields = headEnd > firstLineEnd ? head[(firstLineEnd + 2)..<headEnd] : []
        for line in String(decoding: fields, as: UTF8.self).split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingSpaces
        }
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true { chunks = ChunkedDecoder() }
        if isTable || headers["content-type"]?.lowercased().hasPrefix("gnss/sourcetable") == true {
            body = .table
            tableExpected = chunks == nil ? headers["content-length"].flatMap { Int($0) } : nil
            return (nil, rest)
        }
        body = .stream
        return (.accepted(version: headers["ntrip-version"]?.hasSuffix("2.0") == true ? 2 : 1), rest)
    }

    /// What ends a source table sent with neither a length nor chunks.
    private static let endMarker = Array("ENDSOURCETABLE".utf8)

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from first: Int = 0) -> Int? {
        guard haystack.count - first >= needle.count else { return nil }
        for start in first...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }

    /// `text` as an error shows it: the password masked, then at most 80 characters,
    /// with what cannot be printed replaced.
    private func printable(_ text: String) -> String {
        (caster?.masked(text) ?? text).printable(limit: 80)
    }
}

/// HTTP/1.1's chunked transfer coding, removed as the bytes arrive.
struct ChunkedDecoder: Sendable {
    private enum Phase {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailer
    }

    private var phase = Phase.size
    private var line: [UInt8] = []
    private(set) var isDone = false

    /// Appends the data `bytes` carry to `output`; throws at a fault in the chunking, with
    /// `output` holding the data before it.
    mutating func decode(_ bytes: [UInt8], into output: inout [UInt8]) throws(NTRIPError) {
        var index = 0
        while index < bytes.count, !isDone {
            switch phase {
            case .data(let remaining):
                let count = min(remaining, bytes.count - index)
                output += bytes[index..<(index + count)]
                index += count
                phase = remaining == count ? .dataEnd : .data(remaining: remaining - count)
            case .size, .dataEnd, .trailer:
                let byte = bytes[index]
                index += 1
                guard byte == 10 else {
                    if byte != 13 { line.append(byte) }
                    guard line.count <= 256 else { throw .protocolViolation("a chunk size line is over 256 bytes") }
                    continue
                }
                try endLine()
            }
        }
    }

    private mutating func endLine() throws(NTRIPError) {
        defer { line = [] }
        switch phase {
        case .size:
            let digits = String(decoding: line.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self).trimmingSpaces
            guard let size = Int(digits, radix: 16), size >= 0 else {
                throw .protocolViolation("'\(digits.printable(limit: 20))' is not a chunk size")
            }
            phase = size == 0 ? .trailer : .data(remaining: size)
        case .dataEnd:
            guard line.isEmpty else { throw .protocolViolation("a chunk is longer than its size says") }
            phase = .size
        case .trailer:
            if line.isEmpty { isDone = true }
        case .data:
            break
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
