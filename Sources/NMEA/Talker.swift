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

    /// GPS (United States).
    public static let gps = Talker("GP")
    /// GLONASS (Russia).
    public static let glonass = Talker("GL")
    /// Galileo (European Union).
    public static let galileo = Talker("GA")
    /// BeiDou (China), as NMEA 4.10 names it.
    public static let beidou = Talker("GB")
    /// BeiDou, as older receivers name it.
    public static let beidouLegacy = Talker("BD")
    /// QZSS (Japan), as NMEA 4.11 names it.
    public static let qzss = Talker("GQ")
    /// QZSS, as older receivers name it.
    public static let qzssLegacy = Talker("QZ")
    /// NavIC / IRNSS (India).
    public static let navic = Talker("GI")
    /// A combined solution from several systems.
    public static let multiGNSS = Talker("GN")
    /// Quectel's talker for QZSS (and, with a system id, BeiDou) in `PQGSA` and `PQGSV`.
    public static let quectel = Talker("PQ")

    public var description: String {
        String(decoding: [UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)], as: UTF8.self)
    }
}
