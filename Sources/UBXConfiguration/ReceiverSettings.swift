/// What a user wants of a u-blox receiver, said once for every generation: each setting
/// left `nil` is left as the receiver has it.
public struct ReceiverSettings: Hashable, Sendable {
    /// Measurements (and navigation solutions, one each) per second.
    public var rate: Double?
    /// The whole set of constellations to use; the others are switched off (NavIC only
    /// when named, as receivers before it do not know it).
    public var constellations: Set<Constellation>?
    /// Which protocols the port the tool talks through sends.
    public var output: OutputProtocols?
    /// The port's new speed in bits per second.
    public var baudRate: Int?
    public var dynamicModel: DynamicModel?
    public var timePulse: TimePulse?
    public var timingMode: TimingMode?
    /// The RTCM 3 messages a base station sends, on the port the tool talks through.
    public var rtcm: RTCMOutput?

    public init(
        rate: Double? = nil, constellations: Set<Constellation>? = nil, output: OutputProtocols? = nil, baudRate: Int? = nil,
        dynamicModel: DynamicModel? = nil, timePulse: TimePulse? = nil, timingMode: TimingMode? = nil, rtcm: RTCMOutput? = nil
    ) {
        self.rate = rate
        self.constellations = constellations
        self.output = output
        self.baudRate = baudRate
        self.dynamicModel = dynamicModel
        self.timePulse = timePulse
        self.timingMode = timingMode
        self.rtcm = rtcm
    }

    /// Whether nothing is asked.
    public var isEmpty: Bool { self == ReceiverSettings() }

    /// The measurement period in milliseconds that `rate` asks for.
    var measurementPeriod: UInt16? { rate.map { UInt16(clamping: Int((1000 / $0).rounded())) } }
}

/// The satellite systems a receiver can be told to use.
public enum Constellation: String, CaseIterable, Hashable, Sendable, Comparable {
    case gps, sbas, galileo, beidou, qzss, glonass, navic

    /// The system's gnssId in CFG-GNSS.
    public var gnssID: UInt8 {
        switch self {
        case .gps: 0
        case .sbas: 1
        case .galileo: 2
        case .beidou: 3
        case .qzss: 5
        case .glonass: 6
        case .navic: 7
        }
    }

    public init?(gnssID: UInt8) {
        guard let system = Self.allCases.first(where: { $0.gnssID == gnssID }) else { return nil }
        self = system
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.gnssID < rhs.gnssID }
}

/// The protocols a port sends.
public enum OutputProtocols: String, CaseIterable, Hashable, Sendable {
    case ubx, nmea, both

    var ubx: Bool { self != .nmea }
    var nmea: Bool { self != .ubx }

    init(ubx: Bool, nmea: Bool) {
        self = ubx ? (nmea ? .both : .ubx) : .nmea
    }
}

/// The platform model the navigation filter assumes (CFG-NAV5's and CFG-NAVSPG's dynModel).
public enum DynamicModel: String, CaseIterable, Hashable, Sendable {
    case portable, stationary, pedestrian, automotive, sea, airborne1g, airborne2g, airborne4g, wrist, bike

    public var code: UInt8 {
        switch self {
        case .portable: 0
        case .stationary: 2
        case .pedestrian: 3
        case .automotive: 4
        case .sea: 5
        case .airborne1g: 6
        case .airborne2g: 7
        case .airborne4g: 8
        case .wrist: 9
        case .bike: 10
        }
    }

    public init?(code: UInt64) {
        guard let model = Self.allCases.first(where: { UInt64($0.code) == code }) else { return nil }
        self = model
    }
}

/// The first time pulse: one pulse of `length` seconds every `period` seconds, aligned to
/// the top of the second; with `onlyWhenLocked`, no pulse at all without a fix.
public struct TimePulse: Hashable, Sendable {
    public var period: Double
    public var length: Double
    public var onlyWhenLocked: Bool

    public init(period: Double, length: Double, onlyWhenLocked: Bool) {
        self.period = period
        self.length = length
        self.onlyWhenLocked = onlyWhenLocked
    }

    /// Period and length in microseconds, as the receiver takes them.
    var microseconds: (period: UInt32, length: UInt32) {
        (UInt32(clamping: Int((period * 1e6).rounded())), UInt32(clamping: Int((length * 1e6).rounded())))
    }
}

/// How a timing receiver knows where it stands.
public enum TimingMode: Hashable, Sendable {
    /// It navigates, as any receiver does.
    case navigate
    /// It surveys its position for at least `seconds`, until the mean is within `metres`.
    case surveyIn(seconds: UInt32, metres: Double)
    /// It stands at a known position: degrees, and metres above the ellipsoid.
    case fixed(latitude: Double, longitude: Double, height: Double)

    /// Whole units and the high-precision remainder, as the receivers take a position:
    /// latitude and longitude in 1e-7° and 1e-9°, height in cm and 0.1 mm.
    static func split(degrees: Double) -> (whole: Int32, fine: Int8) {
        let nano = (degrees * 1e9).rounded()
        let whole = (nano / 100).rounded(.towardZero)
        return (Int32(whole), Int8(nano - whole * 100))
    }

    static func split(metres: Double) -> (centimetres: Int32, tenthMillimetres: Int8) {
        let tenths = (metres * 1e4).rounded()
        let whole = (tenths / 100).rounded(.towardZero)
        return (Int32(whole), Int8(tenths - whole * 100))
    }
}
