/// What the receiver knows of its position, as gpsd's `mode`.
public enum FixMode: Int, Sendable, Hashable, Comparable {
    /// Nothing seen yet this cycle (a ZDA-only cycle, say).
    case unknown = 0
    case noFix = 1
    case twoDimensional = 2
    case threeDimensional = 3

    public static func < (lhs: FixMode, rhs: FixMode) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How the fix was made, as gpsd's `status`. Plain GPS is ``gps``; gpsd prints the
/// status only from ``differential`` up.
public enum FixStatus: Int, Sendable, Hashable {
    case unknown = 0
    case gps = 1
    case differential = 2
    case rtkFixed = 3
    case rtkFloat = 4
    case deadReckoning = 5
    case gnssWithDeadReckoning = 6
    case surveyedTime = 7
    case simulated = 8
}

/// One receiver cycle's position solution: gpsd's TPV.
///
/// Every value is what the receiver said, converted once from its exact decimals at
/// the end of the cycle, except ``climb`` when the receiver does not give it (u-blox
/// PUBX,00 does): GPSFix derives it as the altitude change since the previous 3D fix,
/// over the time between them.
public struct Fix: Hashable, Sendable {
    /// The cycle's UTC time; `nil` until the receiver has given a date (RMC or ZDA).
    public var time: GPSTime?
    /// GPS time minus UTC, seconds, when the receiver said (u-blox UBX): gpsd's `leapseconds`.
    public var leapSeconds: Int?
    /// The receiver's estimate of its time's error, seconds (u-blox UBX tAcc): gpsd's `ept`.
    public var timeError: Double?
    /// The time rests on something the receiver has not confirmed (u-blox: leap seconds
    /// not yet received, a second not fully resolved): reported, never a sample for the
    /// time service.
    public var timeIsUnconfirmed = false
    /// A leap second the receiver has announced for the end of this fix's UTC day (u-blox
    /// NAV-TIMELS, within gpsd's window: see ``LeapSecondSchedule``), for the time
    /// service's samples; `unknown` from a receiver that said nothing of leap seconds
    /// (gpsd reads no such warning from NMEA, so NMEA fixes carry `unknown`).
    public var leapSecondWarning = LeapSecondWarning.unknown
    /// Which of its assembler's cycles the fix reports: the assembler's count of cycles
    /// opened when that one opened (``ProtocolAssembler/cyclesOpened``); `nil` for a fix
    /// that is a frame of its own (u-blox HNR-PVT). The time service pairs the fix's time
    /// with the moment that cycle's first frame was read
    /// (``ReceiverStreamDecoder/emittedFixReadAt``). Not part of any report, but part of
    /// equality: fixes of two streams compare equal only when their cycles were counted alike.
    public var cycle: Int?
    public var mode: FixMode = .unknown
    public var status: FixStatus = .unknown
    /// Degrees, north and east positive.
    public var latitude: Double?
    public var longitude: Double?
    /// Metres above mean sea level (the geoid), from GGA or GNS.
    public var altitudeMSL: Double?
    /// Metres above the WGS84 ellipsoid: MSL altitude plus the receiver's geoid separation.
    public var altitudeHAE: Double?
    /// Metres the geoid lies above the ellipsoid, as the receiver gave it.
    public var geoidSeparation: Double?
    /// Metres per second over ground.
    public var speed: Double?
    /// Degrees from true north.
    public var track: Double?
    /// Metres per second upwards; derived, see above.
    public var climb: Double?
    /// The velocity the receiver measured itself (SkyTraq PSTI,030): gpsd's `velN`,
    /// `velE` and `velD`.
    public var velocity: NEDVelocity?
    /// Magnetic variation in degrees, east positive, from RMC.
    public var magneticVariation: Double?
    /// Estimated errors the receiver reported itself (Garmin PGRME, u-blox PUBX, SiRF
    /// PSRFEPE; the vertical one also from GBS), metres: gpsd's `eph`, `epv` and `sep`.
    public var horizontalError: Double?
    public var verticalError: Double?
    public var sphericalError: Double?
    /// The receiver's estimated speed error, metres per second (SiRF PSRFEPE): gpsd's `eps`.
    public var speedError: Double?
    /// The receiver's estimated heading error, degrees (SiRF PSRFEPE): gpsd's `epd`.
    public var trackError: Double?
    /// Expected errors in longitude and latitude, metres, from the receiver's GBS of this
    /// cycle: gpsd's `epx` and `epy`.
    public var longitudeError: Double?
    public var latitudeError: Double?
    /// Seconds since the differential corrections the receiver last applied, and the
    /// station that sent them, as its GGA or GNS gives them: gpsd's `dgpsAge` and
    /// `dgpsSta`. They show whether corrections written to the receiver reach its solution.
    public var differentialAge: Double?
    public var differentialStation: Int?

    public init() {}
}

/// A velocity in the local north, east, down frame, metres per second.
public struct NEDVelocity: Hashable, Sendable {
    public var north: Double
    public var east: Double
    /// Positive downwards, as gpsd's `velD`.
    public var down: Double

    public init(north: Double, east: Double, down: Double) {
        self.north = north
        self.east = east
        self.down = down
    }
}

/// The receiver's own estimate of its error, from GST: gpsd's GST report.
public struct ErrorEstimate: Hashable, Sendable {
    public var time: GPSTime?
    /// RMS of the pseudorange residuals, metres.
    public var rangeRMS: Double?
    /// Error ellipse: semi-major and semi-minor axes (metres), orientation (degrees).
    public var semiMajor: Double?
    public var semiMinor: Double?
    public var orientation: Double?
    /// Standard deviation of latitude, longitude and altitude, metres.
    public var latitudeError: Double?
    public var longitudeError: Double?
    public var altitudeError: Double?

    public init() {}
}

/// Where the vehicle points, from the receiver's heading sentence (HDT or THS): gpsd's ATT.
public struct Attitude: Hashable, Sendable {
    public var time: GPSTime?
    /// Degrees from true north.
    public var heading: Double?

    public init(time: GPSTime? = nil, heading: Double? = nil) {
        self.time = time
        self.heading = heading
    }
}
