/// The two-letter source of a standard sentence: which system or device produced it.
///
/// Any two letters are a valid talker; the well-known ones have names. The talker says
/// which constellation a GSV or GSA speaks of (before NMEA 4.10 added system ids), and
/// `GN` marks a combined multi-GNSS solution.
public struct Talker: Hashable, Sendable, CustomStringConvertible {
    /// The two ASCII letters, first in the high byte.
    public let rawValue: UInt16

    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// A talker from two ASCII letters, as in `Talker("GP")`.
    public init(_ letters: StaticString) {
        precondition(letters.utf8CodeUnitCount == 2, "a talker has two letters")
        let start = letters.utf8Start
        rawValue = UInt16(start[0]) << 8 | UInt16(start[1])
    }

    // The well-known talkers as constants (computed, so no lazy global is checked per
    // satellite read).

    /// GPS (United States).
    public static var gps: Talker { Talker(0x4750) }  // GP
    /// GLONASS (Russia).
    public static var glonass: Talker { Talker(0x474C) }  // GL
    /// Galileo (European Union).
    public static var galileo: Talker { Talker(0x4741) }  // GA
    /// BeiDou (China), as NMEA 4.10 names it.
    public static var beidou: Talker { Talker(0x4742) }  // GB
    /// BeiDou, as older receivers name it.
    public static var beidouLegacy: Talker { Talker(0x4244) }  // BD
    /// QZSS (Japan), as NMEA 4.11 names it.
    public static var qzss: Talker { Talker(0x4751) }  // GQ
    /// QZSS, as older receivers name it.
    public static var qzssLegacy: Talker { Talker(0x515A) }  // QZ
    /// NavIC / IRNSS (India).
    public static var navic: Talker { Talker(0x4749) }  // GI
    /// A combined solution from several systems.
    public static var multiGNSS: Talker { Talker(0x474E) }  // GN
    /// Quectel's talker for QZSS (and, with a system id, BeiDou) in `PQGSA` and `PQGSV`.
    public static var quectel: Talker { Talker(0x5051) }  // PQ

    public var description: String {
        String(decoding: [UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)], as: UTF8.self)
    }
}
