import ReceiverFraming

/// How CASIC frames are found: the binary protocol of Zhongkewei's AT6558 chips (Quectel
/// L76K and many unnamed modules), as its specification lays a frame out: sync bytes
/// `BA CE`, a little-endian payload length (a multiple of four), class and id, the
/// payload, and a little-endian 32-bit checksum.
///
/// The checksum is `(id << 24) + (class << 16) + length` plus the payload's little-endian
/// 32-bit words, wrapping. The English specification writes class before id; the
/// receivers send id first, and no frame they send holds the other way.
public enum CASICFrameRule: FrameRule {
    public static let name = "CASIC"
    public static let sync: UInt8 = 0xBA
    /// The second sync byte.
    public static let sync2: UInt8 = 0xCE
    /// Sync bytes, length, class and id.
    public static let headerLength = 6
    /// The header and the checksum.
    public static let overhead = 10
    /// The longest payload the specification allows (its messages are far shorter).
    public static let maximumPayload = 2048
    public static let maximumLength = maximumPayload + overhead

    public static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        guard header[1] == sync2 else { return nil }
        let length = Int(header[2]) | Int(header[3]) << 8
        guard length % 4 == 0, length <= maximumPayload else { return nil }
        return length + overhead
    }

    public static func holds(_ frame: UnsafeRawBufferPointer) -> Bool {
        let length = frame.count - overhead
        let sent = UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: frame.count - 4, as: UInt32.self))
        return checksum(class: frame[4], id: frame[5], payload: UnsafeRawBufferPointer(rebasing: frame[6..<(6 + length)]))
            == sent
    }

    /// The checksum of a frame of `payload` (whose length is a multiple of four).
    public static func checksum(class messageClass: UInt8, id: UInt8, payload: UnsafeRawBufferPointer) -> UInt32 {
        var sum = UInt32(id) << 24 &+ UInt32(messageClass) << 16 &+ UInt32(payload.count)
        var offset = 0
        while offset + 4 <= payload.count {
            sum &+= UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            offset += 4
        }
        return sum
    }

    /// A whole frame of message `class`/`id` with `payload` (length a multiple of four):
    /// for tests and for what is sent to a receiver.
    public static func frame(class messageClass: UInt8, id: UInt8, payload: [UInt8]) -> [UInt8] {
        precondition(payload.count % 4 == 0 && payload.count <= maximumPayload, "a CASIC payload is whole words")
        var bytes: [UInt8] = [sync, sync2, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), messageClass, id]
        bytes += payload
        let sum = payload.withUnsafeBytes { checksum(class: messageClass, id: id, payload: $0) }
        bytes += withUnsafeBytes(of: sum.littleEndian) { Array($0) }
        return bytes
    }
}
