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
    /// The satellite's health as its receiver knows it (u-blox): gpsd's `health`, 0
    /// unknown, 1 healthy, 2 unhealthy.
    public var health: Int?
    /// How well the receiver tracks the signal (u-blox's qualityInd, 0 to 7): gpsd's `qual`.
    public var quality: Int?
    /// The pseudorange residual of the solution, metres (u-blox): gpsd's `prRes`.
    public var residual: Double?

    public init(
        identity: SatelliteIdentity, signal: Int? = nil, elevation: Double? = nil, azimuth: Double? = nil,
        snr: Double? = nil, used: Bool = false, health: Int? = nil, quality: Int? = nil, residual: Double? = nil
    ) {
        self.identity = identity
        self.signal = signal
        self.elevation = elevation
        self.azimuth = azimuth
        self.snr = snr
        self.used = used
        self.health = health
        self.quality = quality
        self.residual = residual
    }
}

/// The satellites in view and the dilutions of precision: gpsd's SKY.
public struct SkyView: Hashable, Sendable {
    /// The most satellites (and signals) a view holds. u-blox counts those of a NAV-SAT
    /// or NAV-SIG in a byte, and the assembler refuses an NMEA list that would pass it, so
    /// no stream, however wrong, makes the daemon hold or report an ever larger sky.
    public static let maximumSatellites = 255

    /// The cycle this view belongs to, when its date is known.
    public var time: GPSTime?
    /// Every satellite and signal in view, in the order the receiver listed them.
    public var satellites: [Satellite] = []
    public var hdop: Double?
    public var vdop: Double?
    public var pdop: Double?
    public var tdop: Double?
    /// East, north and geometric dilutions, which receivers do not send: computed from
    /// the used satellites' positions, as gpsd computes them (see ``fillMissingDilutions()``).
    public var xdop: Double?
    public var ydop: Double?
    public var gdop: Double?
    /// Satellites used in the solution as this cycle's GGA counts them, when no GSA of
    /// the cycle said which (the satellites' used flags are then a held view's).
    public var reportedUsedCount: Int?
    /// Satellites in view as the receiver's driver counts them, when that is not the
    /// number listed (gpsd's TSIP table counts channels it does not list).
    public var reportedVisibleCount: Int?
    /// The satellites went out in an earlier SKY of the same cycle: a receiver that sends
    /// its GSA after its GSV groups has its view reported when the groups complete, and
    /// this later report carries the receiver's DOPs and used count, without the
    /// satellites again, as gpsd reports it. The satellites are still here, with this
    /// cycle's used flags, for the daemon's own state (`?POLL`, metrics).
    public var satellitesReportedEarlier = false
    /// The receiver listed its channels and none held a satellite (SiRF's MID 4 at a cold
    /// start): gpsd reports that view as `nSat` 0, where a view with no list leaves it out.
    public var listsNoSatellites = false

    public init() {}

    /// Satellites and signals in view (gpsd's `nSat`).
    public var visibleCount: Int { reportedVisibleCount ?? satellites.count }

    /// Satellites used in the solution (gpsd's `uSat`).
    public var usedCount: Int? {
        reportedUsedCount ?? (satellites.isEmpty ? nil : satellites.reduce(0) { $0 + ($1.used ? 1 : 0) })
    }
}

extension SkyView {
    /// A view of `satellites` at `time` with these DOPs, those missing computed from the
    /// geometry; this sky keeps the computed ones for the rest of its epoch, as gpsd does.
    mutating func view(of satellites: [Satellite], time: GPSTime?) -> SkyView {
        var view = self
        view.satellites = satellites
        view.fillMissingDilutions()
        takeDilutions(of: view)
        view.time = time
        return view
    }

    /// Gives this report what `earlier` said and this one leaves out (its satellites, each
    /// dilution of precision), so that it is the whole view, when `earlier` is of this
    /// report's cycle or of one at most a second before it (a u-blox epoch without
    /// NAV-SAT, sent once a second at 10 Hz, still has the last view); an older view is
    /// not brought back. gpsd 3.22's clients (libgps, `gps.py`) take each SKY for the
    /// whole sky, and clear what one leaves out.
    public mutating func takeOmissions(from earlier: SkyView) {
        guard earlier.time == time || earlier.isAtMostASecond(before: self) else { return }
        if satellites.isEmpty, !listsNoSatellites { satellites = earlier.satellites }
        for dilution in Self.dilutions where self[keyPath: dilution] == nil {
            self[keyPath: dilution] = earlier[keyPath: dilution]
        }
    }

    /// The seven dilutions of precision, made once: not an array per report on the hub's path.
    private static let dilutions: [WritableKeyPath<SkyView, Double?> & Sendable] = [\.hdop, \.vdop, \.pdop, \.tdop, \.xdop, \.ydop, \.gdop]

    private func isAtMostASecond(before later: SkyView) -> Bool {
        guard let then = time?.secondsSince1970, let now = later.time?.secondsSince1970 else { return false }
        return then <= now && now - then <= 1
    }

    /// Takes every dilution of precision of `other`, given or not.
    mutating func takeDilutions(of other: SkyView) {
        (gdop, pdop, tdop, vdop, hdop, xdop, ydop) = (other.gdop, other.pdop, other.tdop, other.vdop, other.hdop, other.xdop, other.ydop)
    }

    /// Fills each dilution of precision the receiver did not send with the one computed
    /// from the geometry of the satellites it used, when at least four of them have an
    /// elevation and azimuth; the receiver's own values are never replaced (its solution
    /// may weight satellites in ways the geometry alone does not show).
    mutating func fillMissingDilutions() {
        fillMissingDilutions { DilutionOfPrecision(usedSatellitesOf: $0) }
    }

    /// ``fillMissingDilutions()``, the geometry's dilutions taken from `memo`, which
    /// computes them again only when the used satellites have moved.
    mutating func fillMissingDilutions(memo: inout DilutionMemo) {
        fillMissingDilutions { memo.dilutions(usedSatellitesOf: $0) }
    }

    private mutating func fillMissingDilutions(_ geometry: ([Satellite]) -> DilutionOfPrecision?) {
        guard hdop == nil || vdop == nil || pdop == nil || tdop == nil || xdop == nil || ydop == nil || gdop == nil,
            let computed = geometry(satellites)
        else { return }
        xdop = xdop ?? computed.xdop
        ydop = ydop ?? computed.ydop
        hdop = hdop ?? computed.hdop
        vdop = vdop ?? computed.vdop
        pdop = pdop ?? computed.pdop
        tdop = tdop ?? computed.tdop
        gdop = gdop ?? computed.gdop
    }
}
