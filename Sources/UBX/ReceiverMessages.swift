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

/// UBX-SEC-UNIQID: the chip's unique ID, which tells apart receivers of one model and
/// firmware (their MON-VER is the same). Version 1 (F9, M9, M8 from protocol 18) has five
/// bytes, version 2 (M10) six.
public struct SecUniqueID: Sendable, Hashable {
    public static let message: UInt16 = 0x2703

    /// The ID's bytes, as the receiver sends them.
    public var bytes: [UInt8]

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 9) else { return nil }
        let length = p.u8(0) >= 2 ? 6 : 5
        guard p.count >= 4 + length else { return nil }
        bytes = Array(p[4..<(4 + length)])
    }

    /// The ID in hexadecimal (`0123450001`), as u-blox's tools print it.
    public var hex: String { HexText.of(bytes, uppercase: false) }
}
