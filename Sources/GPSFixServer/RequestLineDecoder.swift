import NIOCore

/// A request line from a client, or news that one was too long.
enum RequestLine {
    /// One line, without its CR LF or LF.
    case line(ByteBuffer)
    /// A line longer than the limit was discarded, up to and including its LF.
    case tooLong(limit: Int)
}

/// Splits a client's bytes into request lines, however the reads fall, holding at most
/// ``maximumLength`` bytes: a longer line is reported once and discarded to its end, so
/// a client sending megabytes without a newline costs nothing but the bytes it sends.
struct RequestLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = RequestLine

    /// gpsd caps requests at about 80 bytes; GPSFix allows longer WATCH objects.
    static let maximumLength = 1024

    private var discarding = false

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            var line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            if discarding {
                discarding = false
                return .continue
            }
            if line.readableBytesView.last == UInt8(ascii: "\r") { line.moveWriterIndex(to: line.writerIndex - 1) }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        if buffer.readableBytes > Self.maximumLength {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            if !discarding {
                discarding = true
                context.fireChannelRead(wrapInboundOut(.tooLong(limit: Self.maximumLength)))
            }
            return .continue
        }
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last request without its newline is answered, as a half-closed client expects.
        if buffer.readableBytes > 0, !discarding, let line = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }
}
