/// A sentence type that can be read from a framed sentence.
///
/// Each type is a few declarative lines: its formatter or address, the fewest data
/// fields it needs, and an initializer that reads its fields in order through a
/// ``FieldCursor``. ``NMEASentence/decode(into:)`` is the table that maps addresses
/// to these types.
public protocol SentenceDecodable {
    /// The fewest data fields (after the address) a sentence must have to be read as this type.
    static var minimumFieldCount: Int { get }

    /// Reads the sentence's data fields; the cursor starts at field 1.
    init(fields: inout FieldCursor) throws(NMEADecodingError)
}

extension SentenceDecodable {
    /// Checks the field count, then reads the sentence.
    @inlinable
    static func decode(_ sentence: NMEASentence) throws(NMEADecodingError) -> Self {
        let dataFields = sentence.fieldCount - 1
        guard dataFields >= minimumFieldCount else {
            throw NMEADecodingError(
                address: sentence.address, field: dataFields, problem: .tooFewFields(minimum: minimumFieldCount))
        }
        var cursor = FieldCursor(sentence)
        return try Self(fields: &cursor)
    }
}

/// How a position was obtained, from the one-letter mode indicator of RMC, GLL, VTG and
/// GNS (NMEA 2.3 and later).
public enum ModeIndicator: UInt8, Sendable, Hashable {
    case autonomous = 0x41  // A
    case differential = 0x44  // D
    case estimated = 0x45  // E (dead reckoning)
    case floatRTK = 0x46  // F
    case manual = 0x4D  // M
    case notValid = 0x4E  // N
    case precise = 0x50  // P
    case fixedRTK = 0x52  // R
    case simulator = 0x53  // S
}

/// The quality of a GGA fix, its sixth field.
public enum GGAQuality: Int, Sendable, Hashable {
    case invalid = 0
    case gps = 1
    case differential = 2
    case pps = 3
    case fixedRTK = 4
    case floatRTK = 5
    case estimated = 6
    case manual = 7
    case simulator = 8
}

extension FieldCursor {
    /// A mode indicator; an unknown letter reads as `nil` rather than failing the sentence.
    mutating func modeIndicator() throws(NMEADecodingError) -> ModeIndicator? {
        try character().flatMap(ModeIndicator.init(rawValue:))
    }

    /// A `true`/`false` status letter: `valid` for true, anything else false.
    mutating func flag(valid: UInt8) throws(NMEADecodingError) -> Bool? {
        try character().map { $0 == valid }
    }

    /// A decimal followed by a unit field (`M`, `N`, `K`) that is skipped.
    mutating func decimalWithUnit() throws(NMEADecodingError) -> NMEADecimal? {
        defer { skip() }
        return try decimal()
    }

    /// Up to eight characters, packed (a datum code, a GNS mode string).
    mutating func packed() -> PackedASCII? {
        let bytes = raw()
        return bytes.isEmpty ? nil : PackedASCII(bytes)
    }
}
