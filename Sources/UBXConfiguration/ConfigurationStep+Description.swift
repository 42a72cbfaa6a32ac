import ReceiverFraming
import UBX

extension ConfigurationStep: CustomStringConvertible {
    /// The frame decoded for a person: its message, and what it sets, by name.
    public var description: String {
        let decoded = frame.withUnsafeBytes { bytes in UBXFrame(validating: bytes).map(Self.describe) } ?? "an invalid frame"
        let hex = HexText.of(frame, separator: " ")
        return "\(decoded)\n    (\(settings)) \(hex)"
    }

    static func describe(_ frame: UBXFrame) -> String {
        let p = Array(frame.payload)
        switch frame.message {
        case ValueMessages.valueSet:
            guard let (layers, items) = ValueMessages.itemsWritten(by: frame) else { return "CFG-VALSET, unreadable" }
            let transaction = p[0] == 1 ? [0: "", 1: ", transaction begins", 2: ", transaction goes on", 3: ", transaction applied"][Int(p[2])] ?? "" : ""
            return "CFG-VALSET to \(layers.names)\(transaction): " + items.map(\.description).joined(separator: ", ")
        case LegacyMessages.rate:
            return "CFG-RATE: a measurement every \(p.u16(0)) ms, \(p.u16(2)) per solution"
        case LegacyMessages.messageRate:
            let name = OutputMessage.allCases.first { $0.classAndID == (p[0], p[1]) }?.name ?? "message \(p[0]),\(p[1])"
            return "CFG-MSG: \(name) every \(p.count > 2 ? p[2] : 0) solution(s) on this port"
        case LegacyMessages.port:
            let out = p.u16(14)
            return "CFG-PRT: port \(p[0]) at \(p.u32(8)) bps, sending \(out & 1 != 0 ? "UBX" : "")\(out & 3 == 3 ? "+" : "")\(out & 2 != 0 ? "NMEA" : "")"
        case LegacyMessages.navigation:
            return "CFG-NAV5: dynamic model \(DynamicModel(code: UInt64(p[2]))?.rawValue ?? String(p[2]))"
        case LegacyMessages.timePulse:
            return "CFG-TP5: every \(p.u32(12)) µs, \(p.u32(20)) µs long with a fix, \(p.u32(16)) µs without"
        case LegacyMessages.constellations:
            let on = (0..<Int(p[3])).compactMap { block in
                p.u32(4 + 8 * block + 4) & 1 != 0 ? Constellation(gnssID: p[4 + 8 * block])?.rawValue : nil
            }
            return "CFG-GNSS: using \(on.joined(separator: ","))"
        case LegacyMessages.timingMode3:
            return "CFG-TMODE3: mode \(["navigate", "survey-in", "fixed position"][min(Int(p[2]), 2)])"
        case LegacyMessages.timingMode2:
            return "CFG-TMODE2: mode \(["navigate", "survey-in", "fixed position"][min(Int(p[0]), 2)])"
        case LegacyMessages.saveLoad:
            return "CFG-CFG: save the configuration to battery-backed RAM\(p.count > 12 && p[12] & 0x02 != 0 ? " and flash" : "")"
        default:
            return "UBX \(frame.messageClass),\(frame.messageID), \(p.count) bytes"
        }
    }
}

extension ConfigurationLayers {
    /// `RAM+BBR+flash`.
    var names: String {
        [(ConfigurationLayers.ram, "RAM"), (.batteryBacked, "BBR"), (.flash, "flash")].filter { contains($0.0) }.map(\.1)
            .joined(separator: "+")
    }
}
