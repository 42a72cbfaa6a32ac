/// Garmin PGRME: estimated horizontal, vertical and spherical position error, metres.
public struct PGRME: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 5
    public var horizontalError: NMEADecimal?
    public var verticalError: NMEADecimal?
    public var sphericalError: NMEADecimal?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        horizontalError = try fields.decimalWithUnit()
        verticalError = try fields.decimalWithUnit()
        sphericalError = try fields.decimalWithUnit()
    }
}

/// Garmin PGRMZ: altitude, in feet or metres, and the fix dimension.
public struct PGRMZ: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 2
    /// Altitude above mean sea level, in metres (converted from feet when sent in feet).
    public var altitudeMetres: Double?
    /// 2 for a 2D fix, 3 for 3D.
    public var fixDimension: Int?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        let altitude = try fields.decimal()
        let unit = try fields.character()
        altitudeMetres = altitude.map { unit == UInt8(ascii: "f") ? $0.doubleValue * 0.3048 : $0.doubleValue }
        fixDimension = try fields.integer()
    }
}

/// Garmin PGRMF: the fix data sentence, sent after the cycle's standard ones: GPS week
/// and seconds, UTC date and time, leap seconds, position, mode, fix type, speed, course,
/// PDOP and TDOP (Garmin's proprietary NMEA 0183 sentences, technical specification).
public struct PGRMF: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 11
    public var gpsWeek: Int?
    public var gpsSeconds: Int?
    public var date: NMEADate?
    public var time: NMEATime?
    public var leapSeconds: Int?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// `A` (automatic) or `M` (manual, a position the user entered): only an automatic
    /// one is the receiver's own.
    public var isAutomatic: Bool?
    /// 0 no fix, 1 a 2D fix, 2 a 3D fix.
    public var fixType: Int?
    public var speedKilometresPerHour: NMEADecimal?
    /// Course over ground, degrees true.
    public var course: NMEADecimal?
    /// Rounded to whole numbers by the receiver, 0 to 9.
    public var pdop: NMEADecimal?
    public var tdop: NMEADecimal?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        gpsWeek = try fields.integer()
        gpsSeconds = try fields.integer()
        date = try fields.date()
        time = try fields.time()
        leapSeconds = try fields.integer()
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        isAutomatic = try fields.flag(valid: UInt8(ascii: "A"))
        fixType = try fields.integer()
        speedKilometresPerHour = try fields.decimal()
        course = try fields.decimal()
        pdop = try fields.decimal()
        tdop = try fields.decimal()
    }
}

/// Magellan PMGNST: the receiver's status, of which GPSFix reads the fix: its mode (2
/// or 3) and whether it holds a fix at all (`T` or `F`).
public struct PMGNST: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 3
    /// 1 no fix, 2 a 2D fix, 3 a 3D fix.
    public var mode: Int?
    public var hasFix: Bool?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        fields.skip()  // firmware version
        mode = try fields.integer()
        hasFix = try fields.flag(valid: UInt8(ascii: "T"))
    }
}

/// SiRF PSRFEPE: the receiver's estimated position errors, with the time they are of.
public struct PSRFEPE: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 5
    public var time: NMEATime?
    /// `A` valid, `V` not.
    public var isValid: Bool?
    public var hdop: NMEADecimal?
    /// Estimated horizontal and vertical position errors, metres.
    public var horizontalError: NMEADecimal?
    public var verticalError: NMEADecimal?
    /// Estimated speed over ground error, metres per second.
    public var speedError: NMEADecimal?
    /// Estimated heading error, degrees.
    public var headingError: NMEADecimal?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        time = try fields.time()
        isValid = try fields.flag(valid: UInt8(ascii: "A"))
        hdop = try fields.decimal()
        horizontalError = try fields.decimal()
        verticalError = try fields.decimal()
        speedError = try fields.decimal()
        headingError = try fields.decimal()
    }
}

/// u-blox PUBX,00: position, accuracy and velocity in one sentence.
public struct PUBXPosition: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 19
    public var time: NMEATime?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// Altitude above the WGS84 ellipsoid, metres.
    public var altitudeHAE: NMEADecimal?
    /// Navigation status: `NF` no fix, `DR` dead reckoning, `G2`/`G3` 2D/3D, `D2`/`D3` differential, `RK`, `TT` time only.
    public var navigationStatus: PackedASCII?
    public var horizontalAccuracy: NMEADecimal?
    public var verticalAccuracy: NMEADecimal?
    public var speedKilometresPerHour: NMEADecimal?
    public var track: NMEADecimal?
    /// Vertical velocity, metres per second, positive downwards.
    public var verticalVelocity: NMEADecimal?
    public var differentialAge: NMEADecimal?
    public var hdop: NMEADecimal?
    public var vdop: NMEADecimal?
    public var tdop: NMEADecimal?
    public var satellitesUsed: Int?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        fields.skip()  // message id 00
        time = try fields.time()
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        altitudeHAE = try fields.decimal()
        navigationStatus = fields.packed()
        horizontalAccuracy = try fields.decimal()
        verticalAccuracy = try fields.decimal()
        speedKilometresPerHour = try fields.decimal()
        track = try fields.decimal()
        verticalVelocity = try fields.decimal()
        differentialAge = try fields.decimal()
        hdop = try fields.decimal()
        vdop = try fields.decimal()
        tdop = try fields.decimal()
        satellitesUsed = try fields.integer()
    }
}

/// u-blox PUBX,03: every satellite tracked, six fields each.
///
/// The list has no fixed length, so it is read lazily from the borrowed sentence, like
/// the sentence valid only during the framer's callback.
public struct PUBXSatellites: SentenceDecodable {
    public static let minimumFieldCount = 2

    /// One tracked satellite.
    public struct Satellite: Hashable, Sendable {
        public var id: Int
        /// `U` used in the solution, `e` ephemeris available but not used, `-` neither.
        public var status: UInt8?
        public var azimuth: NMEADecimal?
        public var elevation: NMEADecimal?
        public var snr: NMEADecimal?
        /// Seconds the carrier has been locked.
        public var lockTime: Int?
    }

    private let sentence: NMEASentence
    /// How many satellites the sentence lists (bounded by the fields actually present).
    public let count: Int

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        sentence = fields.sentence
        fields.skip()  // message id 03
        let declared = try fields.integer() ?? 0
        count = max(0, min(declared, fields.remaining / 6))
    }

    /// The satellite at `index` (0..<count).
    public func satellite(at index: Int) throws(NMEADecodingError) -> Satellite? {
        var fields = FieldCursor(sentence, from: 3 + 6 * index)
        guard let id = try fields.integer() else { return nil }
        return Satellite(
            id: id, status: try fields.character(), azimuth: try fields.decimal(), elevation: try fields.decimal(),
            snr: try fields.decimal(), lockTime: try fields.integer())
    }
}

/// Ashtech PASHR,POS: a whole position solution in one sentence, with speed, climb and
/// DOPs (Ashtech and Magellan professional receivers: G12, DG14, Z-Xtreme, ...).
///
/// `$PASHR,POS,d1,d2,hhmmss.ss,ddmm.mm,N,dddmm.mm,W,alt,,track,speed,climb,PDOP,HDOP,VDOP,TDOP,firmware`:
/// an empty position type means no fix.
public struct PASHRPosition: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 17
    /// 0 autonomous, 1 differential (RTCM code), 2 carrier-phase float, 3 carrier-phase
    /// fixed; `nil` when the receiver has no position.
    public var positionType: Int?
    public var satellitesUsed: Int?
    public var time: NMEATime?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// Altitude above the WGS84 ellipsoid, metres.
    public var altitudeHAE: NMEADecimal?
    /// Course over ground, degrees from true north.
    public var track: NMEADecimal?
    public var speedKilometresPerHour: NMEADecimal?
    /// Vertical velocity, metres per second, positive upwards.
    public var verticalVelocity: NMEADecimal?
    public var pdop: NMEADecimal?
    public var hdop: NMEADecimal?
    public var vdop: NMEADecimal?
    public var tdop: NMEADecimal?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        fields.skip()  // POS
        positionType = try fields.integer()
        satellitesUsed = try fields.integer()
        time = try fields.time()
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        altitudeHAE = try fields.decimal()
        fields.skip()  // reserved
        track = try fields.decimal()
        speedKilometresPerHour = try fields.decimal()
        verticalVelocity = try fields.decimal()
        pdop = try fields.decimal()
        hdop = try fields.decimal()
        vdop = try fields.decimal()
        tdop = try fields.decimal()
    }
}

/// Ashtech PASHR,SAT: every satellite locked, five fields each (PRN, azimuth,
/// elevation, signal, `U` used or `-`), read lazily from the borrowed sentence like
/// ``PUBXSatellites``.
public struct PASHRSatellites: SentenceDecodable {
    public static let minimumFieldCount = 2

    /// One locked satellite.
    public struct Satellite: Hashable, Sendable {
        public var prn: Int
        public var azimuth: NMEADecimal?
        public var elevation: NMEADecimal?
        public var snr: NMEADecimal?
        /// Whether the receiver used it in the solution (`U`).
        public var used: Bool
    }

    private let sentence: NMEASentence
    /// How many satellites the sentence lists (bounded by the fields actually present).
    public let count: Int

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        sentence = fields.sentence
        fields.skip()  // SAT
        let declared = try fields.integer() ?? 0
        count = max(0, min(declared, fields.remaining / 5))
    }

    /// The satellite at `index` (0..<count).
    public func satellite(at index: Int) throws(NMEADecodingError) -> Satellite? {
        var fields = FieldCursor(sentence, from: 3 + 5 * index)
        guard let prn = try fields.integer() else { return nil }
        return Satellite(
            prn: prn, azimuth: try fields.decimal(), elevation: try fields.decimal(), snr: try fields.decimal(),
            used: try fields.character() == UInt8(ascii: "U"))
    }
}

/// SkyTraq PSTI,030, "recommended minimum 3D GNSS data": time, position, altitude and
/// the receiver's own velocity in one sentence (SkyTraq Venus 8 and PX1xx RTK receivers).
///
/// `$PSTI,030,hhmmss.sss,A,ddmm.mmmmmmm,N,dddmm.mmmmmmm,E,alt,vE,vN,vU,ddmmyy,mode,age,ratio`:
/// `V` or mode `N` means no position.
public struct PSTIPosition: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 13
    public var time: NMEATime?
    /// `A` valid, `V` not.
    public var isValid: Bool?
    public var latitude: NMEACoordinate?
    public var longitude: NMEACoordinate?
    /// Altitude above mean sea level, metres.
    public var altitudeMSL: NMEADecimal?
    /// Velocity east, north and up, metres per second.
    public var velocityEast: NMEADecimal?
    public var velocityNorth: NMEADecimal?
    public var velocityUp: NMEADecimal?
    public var date: NMEADate?
    /// How the position was obtained; `F` float and `R` fixed RTK.
    public var mode: ModeIndicator?
    /// Seconds since the last RTK correction, and the ambiguity ratio of the RTK solution.
    public var rtkAge: NMEADecimal?
    public var rtkRatio: NMEADecimal?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        fields.skip()  // 030
        time = try fields.time()
        isValid = try fields.flag(valid: UInt8(ascii: "A"))
        latitude = try fields.latitude()
        longitude = try fields.longitude()
        altitudeMSL = try fields.decimal()
        velocityEast = try fields.decimal()
        velocityNorth = try fields.decimal()
        velocityUp = try fields.decimal()
        date = try fields.date()
        mode = try fields.modeIndicator()
        rtkAge = try fields.decimal()
        rtkRatio = try fields.decimal()
    }
}
