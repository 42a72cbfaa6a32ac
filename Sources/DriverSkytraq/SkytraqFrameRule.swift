import ReceiverFraming

/// How Skytraq binary frames are found (Venus 6 and 8 receivers, AN0028 and AN0037): sync
/// bytes `A0 A1`, the payload's length as a big-endian U16, the payload (its first byte
/// the message id), the XOR of the payload's bytes, and `0D 0A`.
///
/// SiRF's frames begin with `A0` too (`A0 A2`) and have a header as long: a header whose
/// second byte is not `A1` is refused here and left to SiRF's rule.
public enum SkytraqFrameRule: FrameRule {
    public static let name = "Skytraq"
    public static let sync: UInt8 = 0xA0
    /// The second sync byte.
    public static let sync2: UInt8 = 0xA1
    /// Sync bytes and payload length.
    public static let headerLength = 4
    /// The header, the checksum and the `0D 0A` trailer.
    public static let overhead = 7
    /// The longest payload read: the longest message AN0028 and AN0037 describe (raw
    /// measurements of 32 channels, 739 bytes) with room to spare. A longer length is a
    /// stray sync pair, not a frame.
    public static let maximumPayload = 2048
    public static let maximumLength = maximumPayload + overhead

    public static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        guard header.count >= headerLength, header[0] == sync, header[1] == sync2 else { return nil }
        let length = Int(header[2]) << 8 | Int(header[3])
        // Every payload holds at least its message id.
        guard length >= 1, length <= maximumPayload else { return nil }
        return length + overhead
    }

    public static func holds(_ frame: UnsafeRawBufferPointer) -> Bool {
        guard frame.count >= overhead + 1 else { return false }
        let end = frame.count - 3
        guard frame[end + 1] == 0x0D, frame[end + 2] == 0x0A else { return false }
        return checksum(UnsafeRawBufferPointer(rebasing: frame[headerLength..<end])) == frame[end]
    }

    /// The checksum of `payload`: the XOR of its bytes.
    public static func checksum(_ payload: UnsafeRawBufferPointer) -> UInt8 {
        payload.reduce(0, ^)
    }

    /// The payload of a whole frame (message id first), borrowed from it; `nil` for bytes
    /// shorter than a frame or whose length field disagrees with their count.
    public static func payload(of frame: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard frame.count >= overhead + 1 else { return nil }
        let length = Int(frame[2]) << 8 | Int(frame[3])
        guard length + overhead == frame.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: frame[headerLength..<(headerLength + length)])
    }

    /// A whole frame of `payload` (message id first): for tests and for what is sent to a
    /// receiver.
    public static func frame(payload: [UInt8]) -> [UInt8] {
        precondition(!payload.isEmpty && payload.count <= maximumPayload, "a Skytraq payload is 1 to 2048 bytes")
        var bytes: [UInt8] = [sync, sync2, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        bytes += payload
        bytes.append(payload.withUnsafeBytes { checksum($0) })
        bytes += [0x0D, 0x0A]
        return bytes
    }
}
