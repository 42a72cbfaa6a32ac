/// GGA: time, position, fix quality, satellites used, HDOP and altitude.
public struct GGA: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 6
    public var time: NMEATime?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// The raw quality digit; see ``GGAQuality`` for the known ones.
    public var quality: Int?
    public var satellitesUsed: Int?
    public var hdop: NMEADecimal?
    /// Altitude above mean sea level (the geoid), metres.
    public var altitude: NMEADecimal?
    /// Height of the geoid above the WGS84 ellipsoid, metres.
    public var geoidSeparation: NMEADecimal?
    /// Seconds since the last differential correction.
    public var differentialAge: NMEADecimal?
    public var differentialStation: Int?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        time = try fields.time()
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        quality = try fields.integer()
        satellitesUsed = try fields.integer()
        hdop = try fields.decimal()
        altitude = try fields.decimalWithUnit()
        geoidSeparation = try fields.decimalWithUnit()
        differentialAge = try fields.decimal()
        differentialStation = try? fields.integer()
    }
}

/// RMC: the recommended minimum: time, validity, position, speed, track, date, magnetic
/// variation, and (NMEA 2.3) mode and (NMEA 4.10) navigational status.
public struct RMC: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 9
    public var time: NMEATime?
    /// `A` (valid) or `V` (warning): whether the receiver stands behind the position.
    public var isValid: Bool?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    public var speedKnots: NMEADecimal?
    /// Course over ground, degrees true.
    public var track: NMEADecimal?
    public var date: NMEADate?
    /// Magnetic variation, degrees; west is negative.
    public var magneticVariation: NMEADecimal?
    public var mode: ModeIndicator?
    /// NMEA 4.10 navigational status: `S` safe, `C` caution, `U` unsafe, `V` not valid.
    public var navigationalStatus: UInt8?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        time = try fields.time()
        isValid = try fields.flag(valid: UInt8(ascii: "A"))
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        speedKnots = try fields.decimal()
        track = try fields.decimal()
        date = try fields.date()
        magneticVariation = try fields.decimal()
        if try fields.character() == UInt8(ascii: "W"), let variation = magneticVariation {
            magneticVariation?.isNegative = !variation.isNegative
        }
        mode = try fields.modeIndicator()
        navigationalStatus = try fields.character()
    }
}

/// GLL: position, time and validity.
public struct GLL: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 4
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    public var time: NMEATime?
    public var isValid: Bool?
    public var mode: ModeIndicator?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        time = try fields.time()
        isValid = try fields.flag(valid: UInt8(ascii: "A"))
        mode = try fields.modeIndicator()
    }
}

/// GNS: the multi-constellation fix: like GGA, with one mode letter per system.
public struct GNS: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 9
    public var time: NMEATime?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// One mode letter per system (GPS, GLONASS, Galileo, BeiDou, QZSS, NavIC), as sent.
    public var modeIndicators: PackedASCII?
    public var satellitesUsed: Int?
    public var hdop: NMEADecimal?
    public var altitude: NMEADecimal?
    public var geoidSeparation: NMEADecimal?
    public var differentialAge: NMEADecimal?
    public var differentialStation: Int?
    public var navigationalStatus: UInt8?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        time = try fields.time()
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        modeIndicators = fields.packed()
        satellitesUsed = try fields.integer()
        hdop = try fields.decimal()
        altitude = try fields.decimal()
        geoidSeparation = try fields.decimal()
        differentialAge = try fields.decimal()
        differentialStation = try? fields.integer()
        navigationalStatus = try fields.character()
    }

    /// The best of the per-system mode letters: a fix if any system has one.
    public var mode: ModeIndicator? {
        guard let modeIndicators else { return nil }
        var best: ModeIndicator?
        for index in 0..<modeIndicators.count {
            guard let mode = ModeIndicator(rawValue: modeIndicators[index]) else { continue }
            if best.map({ mode.preference < $0.preference }) ?? true { best = mode }
        }
        return best
    }
}

extension ModeIndicator {
    /// Lower is a better fix: RTK first, no fix last.
    fileprivate var preference: Int {
        switch self {
        case .fixedRTK: 0
        case .floatRTK: 1
        case .differential: 2
        case .precise: 3
        case .autonomous: 4
        case .estimated: 5
        case .manual: 6
        case .simulator: 7
        case .notValid: 8
        }
    }
}

/// VTG: track and speed over ground. Reads both the NMEA 2.x layout (with unit letters)
/// and the older one without them.
public struct VTG: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 4
    public var trackTrue: NMEADecimal?
    public var trackMagnetic: NMEADecimal?
    public var speedKnots: NMEADecimal?
    public var speedKilometresPerHour: NMEADecimal?
    public var mode: ModeIndicator?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        if fields.sentence.field(2).first == UInt8(ascii: "T") || fields.sentence.fieldCount > 5 {
            trackTrue = try fields.decimalWithUnit()
            trackMagnetic = try fields.decimalWithUnit()
            speedKnots = try fields.decimalWithUnit()
            speedKilometresPerHour = try fields.decimalWithUnit()
            mode = try fields.modeIndicator()
        } else {
            trackTrue = try fields.decimal()
            trackMagnetic = try fields.decimal()
            speedKnots = try fields.decimal()
            speedKilometresPerHour = try fields.decimal()
        }
    }
}
