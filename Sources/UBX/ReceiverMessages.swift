import ReceiverFraming

/// UBX-MON-VER: the receiver's software and hardware versions and its extensions
/// (`PROTVER=18.00`, `MOD=NEO-M8T-0`, ...), for DEVICE's `subtype` and `subtype1`.
public struct MonVER: Sendable, Hashable {
    public static let message: UInt16 = 0x0A04

    public var software: String
    public var hardware: String
    public var extensions: [String]

    /// Decodes the message; it allocates its strings (it comes once per opening).
    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 40) else { return nil }
        software = p.text(0, length: 30)
        hardware = p.text(30, length: 10)
        extensions = stride(from: 40, through: p.count - 30, by: 30).map { p.text($0, length: 30) }
    }

    /// The protocol version, from the `PROTVER` extension (`PROTVER=18.00` or `PROTVER 14.00`).
    public var protocolVersion: Double? {
        for field in extensions where field.hasPrefix("PROTVER") {
            return Double(field.dropFirst(8).prefix { $0 == "." || $0.isNumber })
        }
        return nil
    }

    /// gpsd's `subtype`: software and hardware versions; and `subtype1`: the extensions,
    /// joined by commas.
    public var subtype: String { "SW \(software),HW \(hardware)" }
    public var subtype1: String { extensions.filter { !$0.isEmpty }.joined(separator: ",") }
}

/// UBX-ACK-ACK and UBX-ACK-NAK: the receiver's answer to a configuration message.
public struct Acknowledgement: Sendable, Hashable {
    public static let acknowledged: UInt16 = 0x0501
    public static let refused: UInt16 = 0x0500

    /// Whether the message was accepted.
    public var isAcknowledged: Bool
    /// Class and id of the message answered.
    public var answered: UInt16

    public init?(_ frame: UBXFrame) {
        let isAcknowledged = frame.message == Self.acknowledged
        guard let p = frame.payload(of: isAcknowledged ? Self.acknowledged : Self.refused, atLeast: 2) else {
            return nil
        }
        self.isAcknowledged = isAcknowledged
        answered = UInt16(p.u8(0)) << 8 | UInt16(p.u8(1))
    }
}

/// UBX-NAV-SVIN and UBX-TIM-SVIN: a base or timing receiver's survey-in of its own position.
public struct SurveyIn: Sendable, Hashable {
    public static let navigationMessage: UInt16 = 0x013B
    public static let timingMessage: UInt16 = 0x0D04

    /// Seconds surveyed so far.
    public var duration: Int
    /// The mean position, metres, ECEF.
    public var mean: ECEF
    /// Its accuracy, metres (from NAV-SVIN's 0.1 mm, or the square root of TIM-SVIN's variance).
    public var accuracy: Double
    public var observations: Int
    public var isValid: Bool
    public var isActive: Bool

    public init?(_ frame: UBXFrame) {
        if let p = frame.payload(of: Self.navigationMessage, atLeast: 40) {
            duration = Int(p.u32(8))
            mean = ECEF(
                x: Double(p.i32(12)) * 0.01 + Double(p.i8(24)) * 1e-4,
                y: Double(p.i32(16)) * 0.01 + Double(p.i8(25)) * 1e-4,
                z: Double(p.i32(20)) * 0.01 + Double(p.i8(26)) * 1e-4)
            accuracy = Double(p.u32(28)) * 1e-4
            observations = Int(p.u32(32))
            isValid = p.u8(36) != 0
            isActive = p.u8(37) != 0
        } else if let p = frame.payload(of: Self.timingMessage, atLeast: 28) {
            duration = Int(p.u32(0))
            mean = ECEF(x: Double(p.i32(4)) * 0.01, y: Double(p.i32(8)) * 0.01, z: Double(p.i32(12)) * 0.01)
            accuracy = Double(p.u32(16)).squareRoot() * 1e-3
            observations = Int(p.u32(20))
            isValid = p.u8(24) != 0
            isActive = p.u8(25) != 0
        } else {
            return nil
        }
    }
}
