#if canImport(Glibc)
import Glibc
#endif
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

    /// Splits `bytes` into header and payload.
    public init(_ bytes: [UInt8]) {
        var splitter = Splitter()
        var payload: [UInt8] = []
        payload.reserveCapacity(bytes.count)
        bytes.withUnsafeBytes { splitter.split($0, into: &payload) }
        splitter.finish()
        self.payload = payload
        header = splitter.header
    }

    /// Splits a capture into header and payload as its bytes arrive, in any chunking, so a
    /// log can be streamed (``FileSource``) instead of read whole. Comment lines are
    /// gathered into ``header``; every other byte goes to the payload, the cookie removed,
    /// in runs as long as the comments allow: a log without comments past its header is
    /// handed on in the chunks it came in, not line by line.
    public struct Splitter: Sendable {
        /// The most `Key: value` pairs kept (gpsfake writes some ten), and the most bytes of
        /// a comment line kept (the rest of the line is read and dropped): a log of endless
        /// comments, or one comment line without an end, is read in bounded memory.
        public static let maximumHeaderLines = 256
        public static let maximumCommentLength = 1024

        /// The header's `Key: value` pairs read so far, in order: the first
        /// ``maximumHeaderLines``.
        public private(set) var header: [(key: String, value: String)] = []
        private var cookie: UInt8?
        private var atLineStart = true
        /// The comment line being read, after its `#`.
        private var comment: [UInt8]?
        /// A run with the cookie removed, reused from run to run.
        private var filtered: [UInt8] = []
        /// Whether the payload line being read holds only text so far. A `#` begins a
        /// comment only after a line of text, and the comment must be text itself: in a
        /// binary capture (UBX) a newline byte followed by `#` inside a frame is data, as
        /// gpsd's reader takes it.
        private var lineIsText = true

        public init() {}

        /// Appends the payload bytes of `bytes` to `payload`.
        public mutating func split(_ bytes: UnsafeRawBufferPointer, into payload: inout [UInt8]) {
            split(bytes) { run, _ in payload.append(contentsOf: run) }
        }

        /// Passes the payload bytes of `bytes` to `body` in runs, borrowed for the call (a
        /// run without cookies is a slice of `bytes` itself, not a copy), each with the
        /// header read before it.
        public mutating func split(
            _ bytes: UnsafeRawBufferPointer,
            _ body: (_ run: UnsafeRawBufferPointer, _ header: [(key: String, value: String)]) -> Void
        ) {
            var index = 0
            while index < bytes.count {
                if let taken = comment {
                    // A comment is a line of text, as gpsd's reader takes one: a byte that is
                    // not text before its end shows the `#` was data (a binary frame's
                    // `0A 23`), given back to the payload whole, unless the line has run past
                    // what is kept of a comment.
                    var stop = index
                    while stop < bytes.count, bytes[stop] != UInt8(ascii: "\n"), Self.isText(bytes[stop]) { stop += 1 }
                    if stop < bytes.count, bytes[stop] != UInt8(ascii: "\n"), taken.count + (stop - index) <= Self.maximumCommentLength {
                        comment = nil
                        ([UInt8(ascii: "#")] + taken + bytes[index..<stop]).withUnsafeBytes { run in
                            deliver(run, body)
                            lineIsText = true
                            noteLines(in: run)
                        }
                        index = stop
                        continue
                    }
                    // A comment, to its line end (past its kept length, whatever its bytes).
                    let newline = Self.find(UInt8(ascii: "\n"), in: bytes, from: stop)
                    let end = newline ?? bytes.count
                    let room = Self.maximumCommentLength - taken.count
                    comment?.append(contentsOf: bytes[index..<min(end, index + max(0, room))])
                    if newline != nil { finish() }
                    atLineStart = newline != nil
                    index = newline.map { $0 + 1 } ?? bytes.count
                } else if atLineStart, bytes[index] == UInt8(ascii: "#") {
                    comment = []
                    atLineStart = false
                    index += 1
                } else {
                    // The payload runs to the next `#` that begins a line.
                    var end = bytes.count
                    var search = index
                    while let hash = Self.find(UInt8(ascii: "#"), in: bytes, from: search) {
                        if hash > index, bytes[hash - 1] == UInt8(ascii: "\n"),
                            lineIsText(endingAt: hash - 1, in: bytes, runStart: index)
                        {
                            end = hash
                            break
                        }
                        search = hash + 1
                    }
                    deliver(UnsafeRawBufferPointer(rebasing: bytes[index..<end]), body)
                    atLineStart = bytes[end - 1] == UInt8(ascii: "\n") && lineIsText(endingAt: end - 1, in: bytes, runStart: index)
                    noteLines(in: UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
                    index = end
                }
            }
        }

        private mutating func deliver(
            _ run: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, [(key: String, value: String)]) -> Void
        ) {
            guard let cookie else { return body(run, header) }
            filtered.removeAll(keepingCapacity: true)
            filtered.append(contentsOf: run.lazy.filter { $0 != cookie })
            filtered.withUnsafeBytes { body($0, header) }
        }

        /// Whether `byte` is one a line of text holds, besides its newline: printable
        /// ASCII, tab and carriage return.
        private static func isText(_ byte: UInt8) -> Bool {
            (0x20..<0x7F).contains(byte) || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
        }

        /// Whether the line ended by the newline at `newline` is text.
        private func lineIsText(endingAt newline: Int, in bytes: UnsafeRawBufferPointer, runStart: Int) -> Bool {
            var index = newline - 1
            while index >= runStart {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\n") { return true }
                if !Self.isText(byte) { return false }
                index -= 1
            }
            return lineIsText
        }

        /// Carries whether the last line of `run`, unfinished, is text so far.
        private mutating func noteLines(in run: UnsafeRawBufferPointer) {
            let lastNewline = run.lastIndex(of: UInt8(ascii: "\n"))
            let tail = run[(lastNewline.map { $0 + 1 } ?? 0)...]
            let tailIsText = tail.allSatisfy(Self.isText)
            lineIsText = lastNewline == nil ? lineIsText && tailIsText : tailIsText
        }

        /// The index of the first `byte` in `bytes` at or after `start` (`memchr`, which
        /// reads a vector at a time).
        private static func find(_ byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
            guard start < bytes.count,
                let found = memchr(bytes.baseAddress! + start, Int32(byte), bytes.count - start)
            else { return nil }
            return UnsafeRawPointer(found) - bytes.baseAddress!
        }

        /// Ends the comment line being read (at its newline, or at the end of the log).
        public mutating func finish() {
            guard let line = comment else { return }
            comment = nil
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: " \t\r\n")
            guard let colon = text.firstIndex(of: ":") else { return }
            let key = String(text[..<colon]).trimmingCharacters(in: " \t")
            let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: " \t")
            if key == "Delay-Cookie" { cookie = value.utf8.first }
            if header.count < Self.maximumHeaderLines { header.append((key, value)) }
        }
    }

    /// The date of the `# Date: yyyy-mm-dd` header, when it has one, at midnight.
    public var referenceDate: GPSTime? { Self.referenceDate(in: header) }

    /// The date of a `# Date: yyyy-mm-dd` line among `header`'s, at midnight.
    public static func referenceDate(in header: [(key: String, value: String)]) -> GPSTime? {
        guard let date = header.first(where: { $0.key == "Date" })?.value else { return nil }
        let parts = date.prefix(10).split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        return GPSTime(year: parts[0], month: parts[1], day: parts[2], time: NMEATime(hour: 0, minute: 0, second: 0))
    }
}

extension String {
    /// The string without the leading and trailing scalars of `set`. Scalars, not
    /// characters: `"\r\n"` is one character, so a set of characters holding it would not
    /// trim a lone `"\n"`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        let trimmed = Set(set.unicodeScalars)
        let scalars = unicodeScalars
        let start = scalars.firstIndex { !trimmed.contains($0) } ?? scalars.endIndex
        let end = scalars.lastIndex { !trimmed.contains($0) }.map(scalars.index(after:)) ?? start
        return start < end ? String(scalars[start..<end]) : ""
    }
}
