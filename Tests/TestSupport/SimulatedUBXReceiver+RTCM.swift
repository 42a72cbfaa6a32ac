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
    /// frame of that number from `fixtures/rtcm/`, whole; a message no fixture holds
    /// (1005, the MSM4s, 1127) is not sent.
    func rtcmFrames(atSolution solution: Int) -> [UInt8] {
        Self.rtcmKeys.flatMap { message -> [UInt8] in
            let rate = Int(rtcmRate(of: message.number))
            guard rate > 0, solution % rate == 0 else { return [] }
            return RecordedRTCM.frames[message.number] ?? []
        }
    }
}

/// The first frame of each message number in the RTCM captures of `fixtures/rtcm/`.
enum RecordedRTCM {
    static let frames: [Int: [UInt8]] = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../fixtures/rtcm")
        var frames: [Int: [UInt8]] = [:]
        for name in ["rtcm3.2.log", "rtcm3.bndm.log"] {
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(name)) else { continue }
            var bytes = [UInt8](data)
            while bytes.first == UInt8(ascii: "#"), let end = bytes.firstIndex(of: UInt8(ascii: "\n")) { bytes.removeFirst(end + 1) }
            var offset = 0
            while offset + 6 <= bytes.count {
                guard bytes[offset] == 0xD3 else {
                    offset += 1
                    continue
                }
                let length = Int(bytes[offset + 1] & 0x03) << 8 | Int(bytes[offset + 2])
                guard offset + length + 6 <= bytes.count else { break }
                let number = Int(bytes[offset + 3]) << 4 | Int(bytes[offset + 4] >> 4)
                if frames[number] == nil { frames[number] = Array(bytes[offset..<(offset + length + 6)]) }
                offset += length + 6
            }
        }
        return frames
    }()
}
