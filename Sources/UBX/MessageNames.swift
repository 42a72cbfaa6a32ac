/// u-blox's names for UBX messages (`NAV-PVT`), for counts and logs; a message without
/// a name here is shown as its class and id (`0x01 0x3C`).
public enum UBXMessageName {
    /// The name of the message with class and id `message` (class in the high byte).
    public static func of(_ message: UInt16) -> String {
        if let name = names[message] { return name }
        return "0x\(HexText.of([UInt8(message >> 8)])) 0x\(HexText.of([UInt8(message & 0xFF)]))"
    }

    private static let names: [UInt16: String] = [
        0x0101: "NAV-POSECEF", 0x0102: "NAV-POSLLH", 0x0103: "NAV-STATUS", 0x0104: "NAV-DOP", 0x0105: "NAV-ATT",
        0x0106: "NAV-SOL", 0x0107: "NAV-PVT", 0x0109: "NAV-ODO", 0x0111: "NAV-VELECEF", 0x0112: "NAV-VELNED",
        0x0113: "NAV-HPPOSECEF", 0x0114: "NAV-HPPOSLLH", 0x0120: "NAV-TIMEGPS", 0x0121: "NAV-TIMEUTC",
        0x0122: "NAV-CLOCK", 0x0123: "NAV-TIMEGLO", 0x0124: "NAV-TIMEBDS", 0x0125: "NAV-TIMEGAL", 0x0126: "NAV-TIMELS",
        0x0130: "NAV-SVINFO", 0x0131: "NAV-DGPS", 0x0132: "NAV-SBAS", 0x0135: "NAV-SAT", 0x013B: "NAV-SVIN",
        0x013C: "NAV-RELPOSNED", 0x013D: "NAV-EELL", 0x0143: "NAV-SIG", 0x0160: "NAV-AOPSTATUS", 0x0161: "NAV-EOE",
        0x0210: "RXM-RAW", 0x0213: "RXM-SFRBX", 0x0215: "RXM-RAWX", 0x0220: "RXM-SVSI", 0x0232: "RXM-RTCM",
        0x0400: "INF-ERROR", 0x0401: "INF-WARNING", 0x0402: "INF-NOTICE", 0x0403: "INF-TEST", 0x0404: "INF-DEBUG",
        0x0500: "ACK-NAK", 0x0501: "ACK-ACK", 0x0600: "CFG-PRT", 0x0601: "CFG-MSG", 0x0608: "CFG-RATE",
        0x0624: "CFG-NAV5", 0x0660: "CFG-TMODE3", 0x068A: "CFG-VALSET", 0x068B: "CFG-VALGET",
        0x0A04: "MON-VER", 0x0A09: "MON-HW", 0x0A0B: "MON-HW2", 0x0A32: "MON-BATCH", 0x0A36: "MON-COMMS",
        0x0A38: "MON-RF", 0x0D01: "TIM-TP", 0x0D03: "TIM-TM2", 0x0D04: "TIM-SVIN", 0x0D15: "TIM-VRFY",
        0x1002: "ESF-MEAS", 0x1010: "ESF-STATUS", 0x1014: "ESF-ALG", 0x1015: "ESF-INS", 0x2111: "LOG-BATCH",
        0x2703: "SEC-UNIQID", 0x2800: "HNR-PVT", 0x2801: "HNR-ATT", 0x2802: "HNR-INS",
    ]
}

/// Bytes as u-blox's tools show them to people: two hexadecimal digits each.
public enum HexText {
    /// `bytes` in hexadecimal (`B5 62 0A 04`, or `0123450001`), joined by `separator`.
    public static func of(_ bytes: some Sequence<UInt8>, uppercase: Bool = true, separator: String = "") -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: uppercase) }.joined(separator: separator)
    }
}
