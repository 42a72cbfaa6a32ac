/// ZDA: UTC time and full date (with century), and the local zone.
public struct ZDA: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 4
    public var time: NMEATime?
    /// The date, with its four-digit year; `nil` when any part is empty.
    public var date: NMEADate?
    public var zoneHours: Int?
    public var zoneMinutes: Int?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        time = try fields.time()
        let dayField = fields.index
        let day = try fields.integer(in: 1...31)
        let month = try fields.integer(in: 1...12)
        let year = try fields.integer(in: 1980...9999)
        if let day, let month, let year {
            guard NMEADate.isDay(day, ofMonth: month, year: year) else { throw fields.failure(.outOfRange, at: dayField) }
            date = NMEADate(year: year, month: UInt8(month), day: UInt8(day), hasCentury: true)
        }
        zoneHours = try fields.integer()
        zoneMinutes = try fields.integer()
    }
}

/// GST: the receiver's own estimate of its position error.
public struct GST: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 8
    public var time: NMEATime?
    /// RMS of the pseudorange residuals, metres.
    public var rangeRMS: NMEADecimal?
    /// Semi-major and semi-minor axes of the error ellipse (1 sigma), metres.
    public var semiMajor: NMEADecimal?
    public var semiMinor: NMEADecimal?
    /// Orientation of the semi-major axis, degrees from true north.
    public var orientation: NMEADecimal?
    /// Standard deviations of latitude, longitude and altitude error, metres.
    public var latitudeError: NMEADecimal?
    public var longitudeError: NMEADecimal?
    public var altitudeError: NMEADecimal?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        time = try fields.time()
        rangeRMS = try fields.decimal()
        semiMajor = try fields.decimal()
        semiMinor = try fields.decimal()
        orientation = try fields.decimal()
        latitudeError = try fields.decimal()
        longitudeError = try fields.decimal()
        altitudeError = try fields.decimal()
    }
}

/// GBS: satellite fault detection (RAIM): expected errors and the most likely failed satellite.
public struct GBS: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 4
    public var time: NMEATime?
    public var latitudeError: NMEADecimal?
    public var longitudeError: NMEADecimal?
    public var altitudeError: NMEADecimal?
    public var failedSatellite: Int?
    public var missedDetectionProbability: NMEADecimal?
    public var bias: NMEADecimal?
    public var biasStandardDeviation: NMEADecimal?
    /// NMEA 4.10 system and signal ids.
    public var systemID: Int?
    public var signalID: Int?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        time = try fields.time()
        latitudeError = try fields.decimal()
        longitudeError = try fields.decimal()
        altitudeError = try fields.decimal()
        failedSatellite = try fields.integer()
        missedDetectionProbability = try fields.decimal()
        bias = try fields.decimal()
        biasStandardDeviation = try fields.decimal()
        systemID = try fields.hexadecimal()
        signalID = try fields.hexadecimal()
    }
}

/// DTM: the datum the positions are given in, and its offsets from the reference datum.
public struct DTM: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 8
    /// Local datum code (`W84`, `W72`, `S85`, `P90`, `999` user-defined).
    public var datum: PackedASCII?
    public var subdivision: PackedASCII?
    /// Offsets in minutes (latitude, longitude) and metres (altitude); south and west negative.
    public var latitudeOffset: NMEADecimal?
    public var longitudeOffset: NMEADecimal?
    public var altitudeOffset: NMEADecimal?
    public var referenceDatum: PackedASCII?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        datum = fields.packed()
        subdivision = fields.packed()
        latitudeOffset = try fields.decimal()
        if try fields.character() == UInt8(ascii: "S") { latitudeOffset?.isNegative.toggle() }
        longitudeOffset = try fields.decimal()
        if try fields.character() == UInt8(ascii: "W") { longitudeOffset?.isNegative.toggle() }
        altitudeOffset = try fields.decimal()
        referenceDatum = fields.packed()
    }
}

/// HDT: true heading, from a gyro or a dual-antenna receiver.
public struct HDT: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 1
    public var heading: NMEADecimal?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        heading = try fields.decimalWithUnit()
    }
}

/// THS: true heading with its mode, NMEA 0183 4's successor of HDT (dual-antenna
/// receivers: u-blox's moving base, Unicore's heading boards).
public struct THS: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 2
    public var heading: NMEADecimal?
    /// `A` autonomous, `E` estimated, `M` manual input, `S` simulator; `V` not valid.
    public var isValid: Bool?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        heading = try fields.decimal()
        isValid = try fields.character().map { $0 != UInt8(ascii: "V") }
    }
}

/// TXT: a text message from the receiver (firmware version, antenna status, warnings).
///
/// Its text is borrowed from the sentence, like the sentence itself valid only during
/// the framer's callback; ``GPSFix`` copies it when it keeps it.
public struct TXT: SentenceDecodable {
    public static let minimumFieldCount = 4
    public var messageCount: Int?
    public var messageNumber: Int?
    /// 0 error, 1 warning, 2 notice, 7 user.
    public var textID: Int?
    /// The text, without the checksum.
    public var text: UnsafeRawBufferPointer

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        messageCount = try fields.integer()
        messageNumber = try fields.integer()
        textID = try fields.integer()
        text = fields.raw()
    }
}
