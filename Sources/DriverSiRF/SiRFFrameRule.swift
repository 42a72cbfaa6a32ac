import ReceiverFraming

/// How SiRF binary frames are found: `A0 A2`, the payload's length (15 bits, big-endian),
/// the payload (its first byte the message id, MID), a 15-bit checksum (the sum of the
/// payload's bytes, big-endian) and the trailer `B0 B3`.
///
/// Skytraq's frames begin with `A0 A1`, as long a header: this rule refuses them by their
/// second byte, so that the framer asks Skytraq's.
public enum SiRFFrameRule: FrameRule {
    public static let name = "SiRF"
    public static let sync: UInt8 = 0xA0
    /// `A0 A2` and the two length bytes.
    public static let headerLength = 4
    /// Header and trailer around the payload: sync, length, checksum, `B0 B3`.
    public static let overhead = 8
    /// The longest frame accepted. The protocol allows payloads of up to 32767 bytes; the
    /// longest message the receivers send (MID 4, 188 bytes; MID 255 text) is far below.
    public static let maximumLength = 2048

    /// The frame's length from `A0 A2` and its payload length; `nil` for another second
    /// byte (Skytraq's `A1`, a stray `A0`), an empty payload, or a length with its top bit set.
    public static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        guard header.count >= headerLength, header[0] == sync, header[1] == 0xA2 else { return nil }
        let length = Int(header[2]) << 8 | Int(header[3])
        guard length > 0, length <= 0x7FFF, length + overhead <= maximumLength else { return nil }
        return length + overhead
    }

    /// Whether the frame ends in `B0 B3` and its checksum is its payload's.
    public static func holds(_ frame: UnsafeRawBufferPointer) -> Bool {
        guard frame.count >= overhead + 1, frame[frame.count - 2] == 0xB0, frame[frame.count - 1] == 0xB3 else {
            return false
        }
        var sum = 0
        for index in headerLength..<(frame.count - 4) { sum &+= Int(frame[index]) }
        let given = Int(frame[frame.count - 4]) << 8 | Int(frame[frame.count - 3])
        return sum & 0x7FFF == given
    }

    /// A whole frame of `payload` (message id first): for tests and for what is sent to a
    /// receiver.
    public static func frame(payload: [UInt8]) -> [UInt8] {
        precondition(!payload.isEmpty && payload.count + overhead <= maximumLength, "a SiRF payload is 1 to 2040 bytes")
        let sum = payload.reduce(0) { $0 &+ Int($1) } & 0x7FFF
        return [sync, 0xA2, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
            + [UInt8(sum >> 8), UInt8(sum & 0xFF), 0xB0, 0xB3]
    }

    /// The payload of a whole frame (message id first), borrowed from it.
    public static func payload(of frame: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard frame.count >= overhead else { return UnsafeRawBufferPointer(rebasing: frame[0..<0]) }
        return UnsafeRawBufferPointer(rebasing: frame[headerLength..<(frame.count - 4)])
    }
}
