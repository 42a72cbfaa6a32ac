/// One CRC-checked RTCM 3 frame, borrowed from the framer's memory: the preamble `D3`,
/// six reserved zero bits and a 10-bit length, the message, and its CRC-24Q. A u-blox
/// base station sends these on the same port as its UBX and NMEA.
///
/// A view, not a copy: valid only while the framer's callback runs.
public struct RTCM3Frame {
    /// The whole frame as received, preamble through CRC.
    public let bytes: UnsafeRawBufferPointer

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The message number (1005, 1077, ...): the message's first 12 bits; 0 for an empty message.
    public var messageType: Int {
        bytes.count >= RTCM3Frame.overhead + 2 ? Int(bytes[3]) << 4 | Int(bytes[4]) >> 4 : 0
    }

    /// The preamble.
    public static let preamble: UInt8 = 0xD3
    /// Bytes of a frame that are not message: three of header, three of CRC.
    public static let overhead = 6
    /// The longest message the 10-bit length allows.
    public static let maximumMessageLength = 1023
}

/// How RTCM 3 frames are found: `D3`, six reserved zero bits and a 10-bit length of at
/// least the message number's two bytes, and the CRC-24Q over the header and message. Any
/// message number is taken: real streams carry the experimental 1-100 and numbers
/// assigned after this was written, and a base's frames are served as the receiver sent
/// them; the 24-bit CRC is what tells a frame from noise.
public enum RTCM3FrameRule: FrameRule {
    public static let name = "RTCM 3"
    public static let sync = RTCM3Frame.preamble
    /// Preamble, reserved bits and length: all a frame's length needs (the message number
    /// is not checked), so a stray preamble is judged after three bytes.
    public static let headerLength = 3
    public static let maximumLength = RTCM3Frame.maximumMessageLength + RTCM3Frame.overhead

    public static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        guard header[1] & 0xFC == 0 else { return nil }
        let length = Int(header[1] & 0x03) << 8 | Int(header[2])
        guard length >= 2 else { return nil }
        return length + RTCM3Frame.overhead
    }

    public static func holds(_ frame: UnsafeRawBufferPointer) -> Bool {
        let body = UnsafeRawBufferPointer(rebasing: frame[0..<(frame.count - 3)])
        let sent = Int(frame[frame.count - 3]) << 16 | Int(frame[frame.count - 2]) << 8 | Int(frame[frame.count - 1])
        return CRC24Q.checksum(body) == sent
    }

    public static func received(_ frame: UnsafeRawBufferPointer) -> ReceiverFrame? {
        .rtcm3(RTCM3Frame(bytes: frame))
    }
}

/// The CRC-24Q of RTCM 3 (and SBAS): polynomial 0x1864CFB, initial value zero.
public enum CRC24Q {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 16
        for _ in 0..<8 {
            value <<= 1
            if value & 0x100_0000 != 0 { value ^= 0x186_4CFB }
        }
        return value & 0xFF_FFFF
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> Int {
        var crc: UInt32 = 0
        for byte in bytes {
            crc = ((crc << 8) & 0xFF_FFFF) ^ table[Int((crc >> 16) ^ UInt32(byte)) & 0xFF]
        }
        return Int(crc)
    }
}
