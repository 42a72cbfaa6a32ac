/// One checksum-verified UBX frame, borrowed from the framer's memory: the sync bytes
/// `B5 62`, class, id, little-endian payload length, payload and Fletcher-8 checksum.
///
/// A view, not a copy: valid only while the framer's callback runs. Decode it (the
/// `UBX` module's messages read it in place) or copy ``bytes`` out before returning.
public struct UBXFrame {
    /// The whole frame as received, sync bytes through checksum.
    public let bytes: UnsafeRawBufferPointer

    /// Frames `bytes` as they are; the caller has verified length and checksum.
    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Frames `bytes` when they are exactly one whole UBX frame with a good checksum:
    /// for messages held outside a stream (tests, a configuration tool's replies).
    public init?(validating bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= UBXFrame.overhead, bytes[0] == UBXFrame.sync1, bytes[1] == UBXFrame.sync2,
            Int(bytes[4]) | Int(bytes[5]) << 8 == bytes.count - UBXFrame.overhead,
            UBXFrame.checksum(of: UnsafeRawBufferPointer(rebasing: bytes[2..<(bytes.count - 2)]))
                == (bytes[bytes.count - 2], bytes[bytes.count - 1])
        else { return nil }
        self.bytes = bytes
    }

    /// The message class (`0x01` NAV, `0x0D` TIM, ...).
    public var messageClass: UInt8 { bytes[2] }
    /// The message id within its class.
    public var messageID: UInt8 { bytes[3] }
    /// Class and id together, `0x0107` for NAV-PVT: one value to switch on.
    public var message: UInt16 { UInt16(bytes[2]) << 8 | UInt16(bytes[3]) }
    /// The payload, without header or checksum.
    public var payload: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[6..<(bytes.count - 2)])
    }

    /// The first sync byte, `µ`.
    public static let sync1: UInt8 = 0xB5
    /// The second sync byte, `b`.
    public static let sync2: UInt8 = 0x62
    /// Bytes of a frame that are not payload: two sync, class, id, two length, two checksum.
    public static let overhead = 8

    /// The 8-bit Fletcher checksum over class, id, length and payload (u-blox's CK_A, CK_B).
    public static func checksum(of bytes: UnsafeRawBufferPointer) -> (UInt8, UInt8) {
        var a: UInt8 = 0
        var b: UInt8 = 0
        for byte in bytes {
            a &+= byte
            b &+= a
        }
        return (a, b)
    }

    /// Whether a payload of `length` bytes fits message `message` (class in the high byte)
    /// as u-blox's interface descriptions lay it out, so that a false start in noise (a
    /// stray `B5 62` and a plausible class) is refused at its header rather than after
    /// thousands of bytes. A message of fixed layout may be up to 64 bytes longer than
    /// documented (u-blox appends fields in later versions); a list is its header and
    /// whole entries; an empty payload (a poll) fits any message; a message not listed
    /// fits any length up to the framer's limit.
    public static func lengthIsPlausible(_ length: Int, for message: UInt16) -> Bool {
        guard length > 0 else { return true }
        switch message {
        case 0x0135, 0x0130: return length >= 8 && (length - 8) % 12 == 0 && length <= 8 + 12 * 255  // NAV-SAT, NAV-SVINFO
        case 0x0143: return length >= 8 && (length - 8) % 16 == 0 && length <= 8 + 16 * 255  // NAV-SIG
        case 0x0A04: return length >= 40 && (length - 40) % 30 == 0  // MON-VER
        default:
            guard let documented = fixedLength(of: message) else { return true }
            return (documented...(documented + 64)).contains(length)
        }
    }

    /// The payload length of a fixed-layout message the decoders read (NAV-PVT's first,
    /// protocol 14's, is the shorter): a switch, checked per frame with no hashing and
    /// no lazy global.
    private static func fixedLength(of message: UInt16) -> Int? {
        switch message {
        case 0x0500, 0x0501: 2
        case 0x0161: 4
        case 0x0103, 0x0120, 0x0D01: 16
        case 0x0104: 18
        case 0x0101, 0x0111, 0x0121, 0x0122: 20
        case 0x0126: 24
        case 0x0102: 28
        case 0x0112, 0x0114: 36
        case 0x0106: 52
        case 0x2800: 72
        case 0x0107: 84
        default: nil
        }
    }

    /// A whole frame for `messageClass`/`id` with `payload`: for writing to a receiver
    /// and for tests.
    public static func encode(messageClass: UInt8, id: UInt8, payload: some Collection<UInt8>) -> [UInt8] {
        var frame: [UInt8] = [sync1, sync2, messageClass, id, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)]
        frame.reserveCapacity(payload.count + overhead)
        frame.append(contentsOf: payload)
        let (a, b) = frame.withUnsafeBytes { checksum(of: UnsafeRawBufferPointer(rebasing: $0[2...])) }
        frame.append(a)
        frame.append(b)
        return frame
    }
}

/// How UBX frames are found: `B5 62`, a class u-blox defines, a little-endian length the
/// message can have, and the Fletcher-8 checksum over class through payload.
public enum UBXFrameRule: FrameRule {
    public static let name = "UBX"
    public static let sync = UBXFrame.sync1
    /// Sync bytes, class, id and length.
    public static let headerLength = 6
    /// The 16-bit length's largest payload, with the frame's overhead.
    public static let maximumLength = 65535 + UBXFrame.overhead

    public static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        guard header[1] == UBXFrame.sync2, header[2] < 0x40, classes & (1 << UInt64(header[2])) != 0 else { return nil }
        let length = Int(header[4]) | Int(header[5]) << 8
        guard UBXFrame.lengthIsPlausible(length, for: UInt16(header[2]) << 8 | UInt16(header[3])) else { return nil }
        return length + UBXFrame.overhead
    }

    public static func holds(_ frame: UnsafeRawBufferPointer) -> Bool {
        let (a, b) = UBXFrame.checksum(of: UnsafeRawBufferPointer(rebasing: frame[2..<(frame.count - 2)]))
        return a == frame[frame.count - 2] && b == frame[frame.count - 1]
    }

    public static func received(_ frame: UnsafeRawBufferPointer) -> ReceiverFrame? {
        .ubx(UBXFrame(bytes: frame))
    }

    /// The UBX classes u-blox defines, as a bit set over class numbers below 0x40: NAV,
    /// RXM, TRK, INF, ACK, CFG, UPD, MON, AID, TIM, ESF, MGA, LOG, SEC, HNR, NAV2 (0x01
    /// to 0x06, 0x09 to 0x0B, 0x0D, 0x10, 0x13, 0x21, 0x27 to 0x29). A constant, not a
    /// lazy global checked per frame.
    private static var classes: UInt64 { 0x382_0009_2E7E }
}
