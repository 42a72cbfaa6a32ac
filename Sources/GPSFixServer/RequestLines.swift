import GPSDProtocol
import NIOCore

/// A request line from a client, or news that one was too long.
enum RequestLine: Equatable {
    /// One line, without its CR LF or LF.
    case line(ByteBuffer)
    /// A line longer than the limit was discarded, up to and including its LF.
    case tooLong(limit: Int)
}

/// Splits a client's bytes into request lines, however the reads fall, holding at most
/// ``maximumLength`` bytes of an unfinished line: a longer line is reported once and
/// discarded to its end, whether its newline comes in the same read or megabytes later,
/// so a client sending without a newline costs nothing but the bytes it sends.
///
/// The session takes lines only while it can answer them; what it has not taken stays
/// here, bounded by what the channel read before the session stopped its reading.
struct RequestLines {
    /// gpsd caps requests at about 80 bytes; GPSFix allows longer WATCH objects.
    static let maximumLength = 1024

    private var buffer = ByteBuffer()
    /// Whether the line being received is over the limit and is being skipped.
    private var discarding = false

    /// Whether a whole line (or the news of a long one) may be waiting.
    var isEmpty: Bool { buffer.readableBytes == 0 }

    /// Adds bytes as the client sent them.
    mutating func append(_ bytes: inout ByteBuffer) {
        if buffer.readableBytes == 0 { buffer.clear() } else if buffer.readerIndex > 4096 { buffer.discardReadBytes() }
        buffer.writeBuffer(&bytes)
    }

    /// The next complete line (or what was received since the last one, when it ends a
    /// whole request: see ``endsWithWholeRequest(_:)``), or `nil` until more bytes arrive.
    mutating func next() -> RequestLine? {
        while let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            var line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            if discarding {
                discarding = false
                continue
            }
            if line.readableBytesView.last == UInt8(ascii: "\r") { line.moveWriterIndex(to: line.writerIndex - 1) }
            // What is left of a line whose request was taken at the end of a read.
            if line.readableBytes == 0 { continue }
            guard line.readableBytes <= Self.maximumLength else { return .tooLong(limit: Self.maximumLength) }
            return .line(line)
        }
        if !discarding, buffer.readableBytes > 0, buffer.readableBytes <= Self.maximumLength,
            Self.endsWithWholeRequest(buffer.readableBytesView)
        {
            return .line(buffer.readSlice(length: buffer.readableBytes)!)
        }
        guard buffer.readableBytes > Self.maximumLength else { return nil }
        buffer.clear()
        guard !discarding else { return nil }
        discarding = true
        return .tooLong(limit: Self.maximumLength)
    }

    /// Whether what was received after the last newline ends a request, as gpsd takes a
    /// read: at a `;`, or at the `}` that closes a request's JSON object. Client
    /// libraries send `?WATCH={...}` or `?POLL;` with no newline and wait for the answer.
    static func endsWithWholeRequest(_ bytes: ByteBufferView) -> Bool {
        guard let last = bytes.last(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") }) else { return false }
        switch last {
        case UInt8(ascii: ";"): return true
        case UInt8(ascii: "}"):
            guard case .unrecognized? = ClientRequest.parse(line: bytes).last else { return true }
            return false
        default: return false
        }
    }

    /// The client's input ended: what it sent after its last newline, as a last line.
    mutating func finish() -> RequestLine? {
        defer { buffer.clear() }
        guard !discarding, buffer.readableBytes > 0 else { return nil }
        return .line(buffer.readSlice(length: buffer.readableBytes)!)
    }
}
