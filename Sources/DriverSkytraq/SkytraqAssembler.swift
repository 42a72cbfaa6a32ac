import GPSFix
import ReceiverFraming

/// Turns a Skytraq receiver's binary messages into one fix per navigation epoch and its
/// sky views, as gpsd reports them.
///
/// A receiver with raw-measurement firmware sends, per epoch, messages stamped with one
/// issue of data (IOD): 0xDC (measurement time), 0xDD (raw measurements), 0xDE (channel
/// status) and last 0xDF (navigation status), which ends the epoch. A receiver in the
/// default binary output sends 0xA8 (navigation data) instead, an epoch of its own.
///
/// The sky goes out as gpsd sends it: a view per 0xDE, with the DOPs held from the last
/// solution (those missing computed from the geometry), timed by the last 0xDC; then,
/// after each fix, the solution's own DOPs. DOPs are held from epoch to epoch.
///
/// Nothing here allocates per frame once the satellites' storage has grown, as long as
/// the consumer lets go of each view before the next arrives.
public final class SkytraqAssembler: DriverAssembler {
    /// The epoch's fix and sky, the reporting shared with the other binary drivers.
    public private(set) var reports: EpochReports
    public private(set) var cyclesOpened = 0
    public var statistics: EpochReports.Statistics { reports.statistics }
    public private(set) var solutions = 0
    /// Skytraq's identity message is not read: the DEVICE report names the driver only.
    public var subtypes: (subtype: String?, subtype1: String?) { (nil, nil) }
    public var identityChanges: Int { 0 }

    /// The IOD of the epoch opened last.
    private var openIssue: UInt8?
    /// The time of the last 0xDC: gpsd's time for the sky views that follow it.
    private var skyTime: GPSTime?
    /// The satellites of the last 0xDE, reused from view to view.
    private var satellites: [Satellite] = []

    public init(_ context: AssemblyContext) {
        reports = EpochReports(rolloverRule: context.rolloverRule)
        satellites.reserveCapacity(32)
    }

    public func add(_ frame: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void) {
        read(frame)
        reports.emit(emit)
    }

    /// Every epoch's fix goes out with the message that ends it: nothing is left open.
    public func flush(_ emit: (LocationUpdate) -> Void) {
        reports.emit(emit)
    }

    private func read(_ frame: UnsafeRawBufferPointer) {
        guard let payload = SkytraqFrameRule.payload(of: frame) else {
            reports.statistics.decodingErrors += 1
            return
        }
        var decoded = true
        switch payload[0] {
        case SkytraqNavigationStatus.id:
            if let m = SkytraqNavigationStatus(payload) { apply(m) } else { decoded = false }
        case SkytraqChannelStatus.id:
            if let m = SkytraqChannelStatus(payload) { apply(m) } else { decoded = false }
        case SkytraqMeasurementTime.id:
            if let m = SkytraqMeasurementTime(payload) { apply(m) } else { decoded = false }
        case SkytraqNavigationData.id:
            if let m = SkytraqNavigationData(payload) { apply(m) } else { decoded = false }
        case Self.rawMeasurementsID:
            // Raw measurements are not reported (gpsd has no report for them), but they
            // are of their epoch.
            reports.statistics.unknownMessages += 1
            if payload.count >= 2 { open(issue: payload[1]) }
        default:
            reports.statistics.unknownMessages += 1
        }
        if !decoded { reports.statistics.decodingErrors += 1 }
    }

    /// 0xDD, raw measurements (AN0037), read for its IOD only.
    static let rawMeasurementsID: UInt8 = 0xDD

    // MARK: Epochs

    /// A message of the epoch with IOD `issue` arrived: another IOD than the open epoch's
    /// opens a new one. An epoch whose solution never came has no fix to report: its
    /// values are all in its sky view, already sent.
    private func open(issue: UInt8) {
        guard issue != openIssue else { return }
        openIssue = issue
        cyclesOpened &+= 1
    }

    /// Reports the open epoch's fix and its DOPs, and starts the next with the DOPs held.
    private func endEpoch() {
        reports.reportFix(cycle: cyclesOpened)
        reports.reportDilutions(time: skyTime)
        reports.fix = Fix()
    }

    // MARK: Messages

    private func apply(_ time: SkytraqMeasurementTime) {
        open(issue: time.issueOfData)
        guard time.timeOfWeekMilliseconds < Self.millisecondsPerWeek else { return }
        skyTime = reports.utc(week: time.week, milliseconds: time.timeOfWeekMilliseconds)
    }

    private func apply(_ view: SkytraqChannelStatus) {
        open(issue: view.issueOfData)
        // The view sent last no longer shares the storage once the consumer let it go.
        reports.sky.satellites = []
        satellites.removeAll(keepingCapacity: true)
        for index in 0..<view.count {
            let channel = view[index]
            // As gpsd: a channel without a satellite, or one not yet placed, is left out.
            guard channel.prn != 0, channel.elevation != 0, channel.azimuth != 0,
                let identity = Self.identity(prn: channel.prn)
            else { continue }
            satellites.append(
                Satellite(
                    identity: identity, elevation: Double(channel.elevation), azimuth: Double(channel.azimuth),
                    snr: Double(channel.carrierToNoise), used: channel.isUsed))
        }
        reports.reportSatellites(satellites, time: skyTime)
        // Kept for the DOPs' report after the fix, which the daemon's state reads them from.
        reports.sky.satellites = satellites
    }

    private func apply(_ status: SkytraqNavigationStatus) {
        open(issue: status.issueOfData)
        solutions += 1
        if let tow = status.timeOfWeek, tow >= 0, tow < Double(Self.millisecondsPerWeek) / 1000 {
            // Not rounded, as gpsd: 0.9990885 s is .999.
            // No message read gives leap seconds: every such time sets no clock.
            reports.setFixTime(gpsWeek: status.week, milliseconds: Int((tow * 1000).rounded(.down)))
        }
        switch status.fixStatus {
        case 2: (reports.fix.mode, reports.fix.status) = (.twoDimensional, .gps)
        case 3: (reports.fix.mode, reports.fix.status) = (.threeDimensional, .gps)
        case 4: (reports.fix.mode, reports.fix.status) = (.threeDimensional, .differential)
        default: reports.fix.mode = .noFix
        }
        if reports.fix.mode >= .twoDimensional, let position = status.position {
            reports.fix.setPosition(ecef: position, velocity: status.velocity)
        }
        reports.sky.gdop = status.gdop
        reports.sky.pdop = status.pdop
        reports.sky.hdop = status.hdop
        reports.sky.vdop = status.vdop
        reports.sky.tdop = status.tdop
        endEpoch()
    }

    private func apply(_ data: SkytraqNavigationData) {
        // An epoch of its own: no IOD, and nothing else of it follows.
        openIssue = nil
        cyclesOpened &+= 1
        solutions += 1
        let milliseconds = data.timeOfWeekCentiseconds.multipliedReportingOverflow(by: 10)
        if !milliseconds.overflow, milliseconds.partialValue < Self.millisecondsPerWeek {
            reports.setFixTime(gpsWeek: data.week, milliseconds: milliseconds.partialValue)
        }
        switch data.fixMode {
        case 1: (reports.fix.mode, reports.fix.status) = (.twoDimensional, .gps)
        case 2: (reports.fix.mode, reports.fix.status) = (.threeDimensional, .gps)
        case 3: (reports.fix.mode, reports.fix.status) = (.threeDimensional, .differential)
        default: reports.fix.mode = .noFix
        }
        if reports.fix.mode >= .twoDimensional {
            reports.fix.latitude = data.latitude
            reports.fix.longitude = data.longitude
            reports.fix.altitudeHAE = data.altitudeHAE
            reports.fix.altitudeMSL = data.altitudeMSL
            reports.fix.geoidSeparation = data.altitudeHAE - data.altitudeMSL
            reports.fix.setMotion(ecef: data.velocity, latitude: data.latitude, longitude: data.longitude)
        }
        (reports.sky.gdop, reports.sky.pdop, reports.sky.hdop) = (data.gdop, data.pdop, data.hdop)
        (reports.sky.vdop, reports.sky.tdop) = (data.vdop, data.tdop)
        endEpoch()
    }

    static let millisecondsPerWeek = 604_800_000

    /// gpsd's name for a satellite by Skytraq's PRN: GPS, GLONASS, SBAS and QZSS as the
    /// other drivers number them, BeiDou 201-239 kept as sent (gpsd's `PRN` for them).
    static func identity(prn: Int) -> SatelliteIdentity? {
        switch prn {
        case 1...32: SatelliteIdentity(gnss: .gps, svid: prn)
        case 65...96: SatelliteIdentity(gnss: .glonass, svid: prn - 64)
        case 120...158: SatelliteIdentity(gnss: .sbas, svid: prn)
        case 193...197: SatelliteIdentity(gnss: .qzss, svid: prn - 192)
        case 201...239: SatelliteIdentity(prn: prn, gnss: .beidou, svid: prn - 200)
        default: nil
        }
    }
}
