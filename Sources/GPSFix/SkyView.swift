/// One satellite as the receiver sees it.
public struct Satellite: Hashable, Sendable {
    public var identity: SatelliteIdentity
    /// NMEA 4.11 signal, in u-blox's numbering as gpsd reports it (`sigid`); `nil` for
    /// the system's primary signal or when the receiver does not say.
    public var signal: Int?
    /// Degrees above the horizon.
    public var elevation: Double?
    /// Degrees from true north.
    public var azimuth: Double?
    /// Signal to noise ratio, dB-Hz; `nil` when the satellite is not tracked.
    public var snr: Double?
    /// Whether the receiver used the satellite in this cycle's solution.
    public var used: Bool

    public init(
        identity: SatelliteIdentity, signal: Int? = nil, elevation: Double? = nil, azimuth: Double? = nil,
        snr: Double? = nil, used: Bool = false
    ) {
        self.identity = identity
        self.signal = signal
        self.elevation = elevation
        self.azimuth = azimuth
        self.snr = snr
        self.used = used
    }
}

/// The satellites in view and the dilutions of precision: gpsd's SKY.
public struct SkyView: Hashable, Sendable {
    /// The cycle this view belongs to, when its date is known.
    public var time: GPSTime?
    /// Every satellite and signal in view, in the order the receiver listed them.
    public var satellites: [Satellite] = []
    public var hdop: Double?
    public var vdop: Double?
    public var pdop: Double?
    public var tdop: Double?
    /// Satellites used in the solution as GGA counts them, when no GSA said which.
    public var reportedUsedCount: Int?

    public init() {}

    /// Satellites and signals in view (gpsd's `nSat`).
    public var visibleCount: Int { satellites.count }

    /// Satellites used in the solution (gpsd's `uSat`).
    public var usedCount: Int? {
        satellites.isEmpty ? reportedUsedCount : satellites.reduce(0) { $0 + ($1.used ? 1 : 0) }
    }
}
