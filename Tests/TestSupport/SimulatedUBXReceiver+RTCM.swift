import Foundation

/// A base receiver's RTCM 3 output (ZED-F9P interface description, UBX-18010854: the
/// CFG-MSGOUT-RTCM_3X keys; u-blox M8 receiver description, UBX-13003221: CFG-MSG of class
/// 0xF5, the id being the message number less 1000). The M8 model takes class 0xF5 rates
/// as an M8P would, though a NEO-M8T sends no RTCM.
extension ReceiverState {
    /// The RTCM messages modelled, with the key ID of each one's rate on UART1.
    static let rtcmKeys: [(number: Int, key: UInt32)] = [
        (1005, 0x2091_02BE), (1074, 0x2091_035F), (1077, 0x2091_02CD), (1084, 0x2091_0364), (1087, 0x2091_02D2),
        (1094, 0x2091_0369), (1097, 0x2091_0319), (1124, 0x2091_036E), (1127, 0x2091_02D7), (1230, 0x2091_0304),
    ]

    /// The rate of RTCM message `number` on UART1, per navigation solution.
    func rtcmRate(of number: Int) -> UInt64 {
        switch generation {
        case .generation9: Self.rtcmKeys.first { $0.number == number }.flatMap { ram[$0.key] } ?? 0
        case .m8: ram[0x0F00_F500 | UInt32(number - 1000)] ?? 0
        }
    }

    /// The RTCM frames due at navigation solution `solution`: for each message on, a real
    /// frame of that number from `fixtures/rtcm/`, whole; 1005, which no fixture holds, is
    /// written here from the survey's mean, once the station's position is known; the
    /// MSM4s and 1127, which none holds either, are not sent.
    func rtcmFrames(atSolution solution: Int) -> [UInt8] {
        Self.rtcmKeys.flatMap { message -> [UInt8] in
            let rate = Int(rtcmRate(of: message.number))
            guard rate > 0, solution % rate == 0 else { return [] }
            guard message.number == 1005 else { return RecordedRTCM.frames[message.number] ?? [] }
            return stationPositionKnown ? stationPosition() : []
        }
    }

    /// Whether the receiver is in time mode, the only mode in which it sends its position:
    /// fixed, or surveying and the survey done ("observation messages will be streamed as
    /// soon as they are configured for output. However, any stationary reference position
    /// messages are output only when the base station position has been initialized and is
    /// operating in time mode", ZED-F9P integration manual, UBX-18010802, 3.1.5.5).
    private var stationPositionKnown: Bool {
        switch ram[Self.timingMode] ?? 0 {
        case 2: true
        case 1: survey.valid
        default: false
        }
    }

    /// RTCM 1005 with the survey's mean.
    private func stationPosition() -> [UInt8] {
        RTCMWire.stationPosition(
            x: Int64(Self.surveyMean.x) * 100, y: Int64(Self.surveyMean.y) * 100, z: Int64(Self.surveyMean.z) * 100)
    }
}

/// The real RTCM 3 streams of `fixtures/rtcm/`.
public enum RecordedRTCM {
    /// The stream of capture `name`, after its `#` header lines.
    public static func payload(of name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../fixtures/rtcm/\(name)")
        var bytes = [UInt8](try Data(contentsOf: url))
        while bytes.first == UInt8(ascii: "#"), let end = bytes.firstIndex(of: UInt8(ascii: "\n")) { bytes.removeFirst(end + 1) }
        return bytes
    }

    /// The first whole frame of each message number in the two captures.
    static let frames: [Int: [UInt8]] = {
        var frames: [Int: [UInt8]] = [:]
        for name in ["rtcm3.2.log", "rtcm3.bndm.log"] {
            for frame in RTCMWire.frames(in: (try? payload(of: name)) ?? []) {
                let number = Int(frame[3]) << 4 | Int(frame[4] >> 4)
                if frames[number] == nil { frames[number] = frame }
            }
        }
        return frames
    }()
}

/// RTCM 3's transport layer (RTCM 10403.3, section 4): `D3`, six reserved bits and a 10-bit
/// length, the message, and a CRC-24Q over all of it.
public enum RTCMWire {
    /// A frame around `message`.
    public static func frame(_ message: [UInt8]) -> [UInt8] {
        let body = [0xD3, UInt8(message.count >> 8 & 0x03), UInt8(message.count & 0xFF)] + message
        let crc = crc24q(body)
        return body + [UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }

    /// RTCM 1005 (RTCM 10403.3, 3.5.3, the stationary antenna reference point): station 0,
    /// ITRF year 0, GPS, GLONASS and Galileo observed, a physical reference station, and the
    /// position in ECEF, in 0.1 mm.
    public static func stationPosition(x: Int64, y: Int64, z: Int64) -> [UInt8] {
        var bits = Bits()
        bits.append(1005, 12)
        bits.append(0, 12)  // reference station id
        bits.append(0, 6)  // ITRF realization year
        bits.append(0b1110, 4)  // GPS, GLONASS, Galileo; not a virtual station
        bits.append(x, 38)  // ECEF-X, 0.1 mm
        bits.append(0, 2)  // single receiver oscillator, reserved
        bits.append(y, 38)  // ECEF-Y
        bits.append(0, 2)  // quarter cycle indicator
        bits.append(z, 38)  // ECEF-Z
        return frame(bits.bytes)
    }

    /// The message numbers of the whole frames, CRC checked, in `bytes`.
    public static func messageNumbers(in bytes: [UInt8]) -> [Int] {
        frames(in: bytes).map { Int($0[3]) << 4 | Int($0[4] >> 4) }
    }

    /// The whole frames, CRC checked, in `bytes`, in order; what is between them skipped.
    public static func frames(in bytes: [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var offset = 0
        while offset + 6 <= bytes.count {
            let length = Int(bytes[offset + 1] & 0x03) << 8 | Int(bytes[offset + 2])
            let end = offset + length + 6
            guard bytes[offset] == 0xD3, end <= bytes.count, frame(Array(bytes[(offset + 3)..<(end - 3)])) == Array(bytes[offset..<end]) else {
                offset += 1
                continue
            }
            frames.append(Array(bytes[offset..<end]))
            offset = end
        }
        return frames
    }

    /// CRC-24Q (polynomial 0x1864CFB, initial value 0).
    static func crc24q(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 16
            for _ in 0..<8 {
                crc <<= 1
                if crc & 0x100_0000 != 0 { crc ^= 0x186_4CFB }
            }
        }
        return crc & 0xFF_FFFF
    }

    /// Bits appended most significant first, as RTCM packs its fields.
    struct Bits {
        private(set) var bytes: [UInt8] = []
        private var count = 0

        mutating func append(_ value: Int64, _ width: Int) {
            for bit in stride(from: width - 1, through: 0, by: -1) {
                if count % 8 == 0 { bytes.append(0) }
                if value >> Int64(bit) & 1 != 0 { bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8) }
                count += 1
            }
        }
    }
}
