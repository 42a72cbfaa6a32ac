import NIOCore

/// HTTP/1.1's chunked transfer, as NTRIP 2.0 carries a stream both ways (a caster to its
/// rovers, a source to its caster): each frame one chunk, so a frame is never split.
public enum ChunkedTransfer {
    /// `frame` as one chunk: its size in hex, CR LF, the frame, CR LF.
    public static func chunk(_ frame: ByteBuffer) -> ByteBuffer {
        var chunk = ByteBuffer()
        chunk.reserveCapacity(frame.readableBytes + 8)
        chunk.writeString(String(frame.readableBytes, radix: 16, uppercase: true) + "\r\n")
        chunk.writeImmutableBuffer(frame)
        chunk.writeString("\r\n")
        return chunk
    }
}
