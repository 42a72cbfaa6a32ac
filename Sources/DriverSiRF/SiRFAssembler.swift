import GPSFix
import NMEA

/// Merges a SiRF receiver's messages of each second into one fix and its sky, as gpsd
/// reports them.
///
/// An epoch opens with the first message of a new time of week (MID 41, 4 or 2, whichever
/// comes first) and ends with the message that carries the solution: MID 2's ECEF
/// position, or, once a u-blox SiRF I has sent one, MID 98's geodetic solution (MID 2
/// is then passed over, as gpsd passes it over). MID 4 gives the sky as it arrives.
///
/// DOPs are held from epoch to epoch, as gpsd holds them: those no message gave are
/// computed from the used satellites' geometry once, then kept; MID 41 (while the
/// receiver has a fix) gives the HDOP; MID 2 of a 3D fix puts its HDOP in the PDOP, as
/// gpsd does; MID 98 gives all five of its own.
///
/// Times are GPS week and time of week with a ten-bit week: the week is placed among
/// the 1024 around a capture's date (the ``RolloverRule``), else among those from
/// GPSFix's build on, and GPS time becomes UTC by the leap seconds of MID 52, else by
/// gpsd's default (18 s).
public final class SiRFAssembler: DriverAssembler {
    /// The epoch's fix and the held sky, and what was counted.
    public private(set) var reports: EpochReports
    public private(set) var cyclesOpened = 0
    public var statistics: EpochReports.Statistics { reports.statistics }
    public private(set) var solutions = 0
    public private(set) var subtypes: (subtype: String?, subtype1: String?) = (nil, nil)
    public private(set) var identityChanges = 0
    /// The open (or last closed) epoch's time of week, milliseconds, and whether it is open.
    private var epoch: Int?
    private var epochOpen = false
    /// Whether MID 98 has come: it carries the fixes from then on.
    private var extendedSolutions = false
    /// The satellites of the last MID 4, reused from view to view.
    private var satellites: [Satellite] = []
    /// The time of the last view.
    private var skyTime: GPSTime?

    /// The first of the 1024 weeks a ten-bit week is placed in: those around a capture's
    /// date (its `# Date:`), else those from the week GPSFix was built in on, since no
    /// receiver's time is earlier. Built in 2026, that is 2025-12-28 to 2045-08-12, the
    /// time service's window; an era fixed by the build year would have ended in
    /// November 2038, and placed the weeks after in 2019.
    private let firstWeek: Int

    /// Milliseconds by which two times of week still belong to one epoch.
    static let epochTolerance = 10

    public init(rolloverRule: RolloverRule = RolloverRule()) {
        reports = EpochReports(rolloverRule: rolloverRule)
        if let referenceDay = rolloverRule.referenceDay {
            firstWeek = (referenceDay - Self.gpsEpochDay) / 7 - RolloverRule.weeksPerEra / 2
        } else {
            let midnight = NMEATime(hour: 0, minute: 0, second: 0)
            let buildYear = GPSTime(year: CenturyRule.buildYear, month: 1, day: 1, time: midnight)
            firstWeek = (buildYear.daysSince1970 - Self.gpsEpochDay) / 7
        }
        satellites.reserveCapacity(12)
    }

    /// 1980-01-06, the first day of GPS week 0, as days since 1970.
    static let gpsEpochDay = GPSTime.gpsEpochSince1970 / 86_400

    /// UTC of a ten-bit week and a time of week in hundredths of a second, the week placed
    /// among the 1024 from ``firstWeek``; `nil` for a time of week no week has.
    func utc(week: Int, hundredths: Int) -> GPSTime? {
        guard (0..<60_480_000).contains(hundredths) else { return nil }
        let weeks = RolloverRule.weeksPerEra
        let weeksOn = ((week - firstWeek) % weeks + weeks) % weeks
        return reports.utc(week: firstWeek + weeksOn, milliseconds: hundredths * 10)
    }

    public func add(_ frame: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void) {
        let payload = SiRFFrameRule.payload(of: frame)
        guard let id = payload.first else {
            reports.statistics.decodingErrors += 1
            return
        }
        var decoded = true
        switch id {
        case SiRFNavigation.id:
            if let message = SiRFNavigation(payload) { apply(message) } else { decoded = false }
        case SiRFTracker.id:
            if let message = SiRFTracker(payload) { apply(message, emit) } else { decoded = false }
        case SiRFGeodetic.id:
            if let message = SiRFGeodetic(payload) { apply(message) } else { decoded = false }
        case SiRFPulseTime.id:
            if let message = SiRFPulseTime(payload) { apply(message) } else { decoded = false }
        case SiRFExtendedNavigation.id:
            if let message = SiRFExtendedNavigation(payload) { apply(message) } else { decoded = false }
        case SiRFSoftwareVersion.id:
            if let message = SiRFSoftwareVersion(payload) { apply(message) } else { decoded = false }
        case 7, 9, 10, 11, 12, 13, 18, 27, 50, 255:
            // Clock status, CPU load, errors, command (N)ACK, visible list, OkToSend,
            // DGPS status, SBAS parameters, debug text: nothing gpsd reports.
            break
        default:
            reports.statistics.unknownMessages += 1
        }
        if !decoded { reports.statistics.decodingErrors += 1 }
        reports.emit(emit)
    }

    public func flush(_ emit: (LocationUpdate) -> Void) {
        epochOpen = false
        reports.emit(emit)
    }

    // MARK: Epochs

    /// A message of the epoch at `milliseconds` into the week (`nil`: a message without a
    /// time, which belongs to the open epoch or opens one).
    private func open(_ milliseconds: Int?) {
        if let milliseconds {
            if let current = epoch, abs(milliseconds - current) <= Self.epochTolerance { return }
            epoch = milliseconds
        } else if epochOpen {
            return
        }
        epochOpen = true
        cyclesOpened &+= 1
        reports.fix = Fix()
    }

    /// Reports the epoch's fix, then its DOPs, and closes it.
    private func close(_ fix: Fix) {
        solutions += 1
        reports.fix = fix
        reports.reportFix(cycle: cyclesOpened)
        reports.reportDilutions(time: fix.time ?? skyTime)
        epochOpen = false
    }

    // MARK: Messages

    func apply(_ navigation: SiRFNavigation) {
        let time = utc(week: navigation.week, hundredths: navigation.timeOfWeek)
        open(time == nil ? nil : navigation.timeOfWeek * 10)
        guard !extendedSolutions else { return }
        var fix = Fix()
        fix.time = time
        fix.timeIsUnconfirmed = reports.leapSeconds == nil
        (fix.mode, fix.status) = Self.solution(navigation.mode1)
        if fix.mode >= .twoDimensional {
            fix.setPosition(
                ecef: (Double(navigation.x), Double(navigation.y), Double(navigation.z)),
                velocity: (navigation.velocityX, navigation.velocityY, navigation.velocityZ))
        }
        if fix.mode == .threeDimensional { reports.sky.pdop = navigation.hdop }
        close(fix)
    }

    func apply(_ tracker: SiRFTracker, _ emit: (LocationUpdate) -> Void) {
        let time = utc(week: max(0, tracker.week), hundredths: tracker.timeOfWeek)
        open(time == nil ? nil : tracker.timeOfWeek * 10)
        skyTime = time
        satellites.removeAll(keepingCapacity: true)
        for index in 0..<tracker.count {
            let channel = tracker[index]
            // gpsd leaves out a channel without a satellite, azimuth or elevation.
            guard channel.prn != 0, channel.azimuth != 0, channel.elevation != 0,
                let identity = Self.identity(prn: channel.prn)
            else { continue }
            satellites.append(
                Satellite(
                    identity: identity, elevation: channel.elevation, azimuth: channel.azimuth,
                    snr: channel.meanCarrierToNoise, used: channel.state & 0x01 != 0))
        }
        if satellites.isEmpty {
            // gpsd reports an empty sky (nSat 0) rather than none.
            reports.emit(emit)
            var view = SkyView()
            view.time = time
            view.listsNoSatellites = true
            view.reportedUsedCount = 0
            emit(.sky(view))
        } else {
            reports.reportSatellites(satellites, time: time)
        }
    }

    func apply(_ geodetic: SiRFGeodetic) {
        open(geodetic.timeOfWeek)
        if geodetic.navigationType & 0x07 != 0 { reports.sky.hdop = geodetic.hdop }
    }

    func apply(_ pulse: SiRFPulseTime) {
        guard pulse.isValidUTC else { return }
        reports.takeLeapSeconds(pulse.utcOffset)
    }

    func apply(_ extended: SiRFExtendedNavigation) {
        open(nil)
        extendedSolutions = true
        var fix = Fix()
        let type = extended.navigationType
        if type & 0x40 != 0 { fix.time = Self.utc(extended) }
        (fix.mode, fix.status) = Self.solution(type & 0x87)
        if fix.mode >= .twoDimensional {
            fix.setPosition(latitude: extended.latitude, longitude: extended.longitude, height: extended.altitude)
            fix.speed = extended.speed
            fix.track = extended.track
            if fix.mode == .threeDimensional { fix.climb = extended.climb }
        }
        func given(_ value: Double) -> Double? { value > 0 ? value : nil }
        reports.sky.gdop = given(extended.gdop)
        reports.sky.pdop = given(extended.pdop)
        reports.sky.hdop = given(extended.hdop)
        reports.sky.vdop = given(extended.vdop)
        reports.sky.tdop = given(extended.tdop)
        close(fix)
    }

    func apply(_ version: SiRFSoftwareVersion) {
        let text = version.version
        guard subtypes.subtype != text else { return }
        subtypes.subtype = text
        identityChanges &+= 1
    }

    // MARK: Values

    /// gpsd's mode and status for a SiRF fix type (bits 0-2: 0 none, 1-3 satellites in a
    /// degraded solution, 4 more than three, 5 2D, 6 3D, 7 dead reckoning; bit 7 DGPS).
    static func solution(_ mode1: UInt8) -> (FixMode, FixStatus) {
        let type = mode1 & 0x07
        guard type != 0 else { return (.noFix, .unknown) }
        let mode: FixMode = type == 4 || type == 6 ? .threeDimensional : .twoDimensional
        let status: FixStatus = mode1 & 0x80 != 0 ? .differential : type == 7 ? .deadReckoning : .gps
        return (mode, status)
    }

    /// GPS 1-32; SBAS 120-158, which gpsd reports by their own numbers here.
    static func identity(prn: Int) -> SatelliteIdentity? {
        switch prn {
        case 1...32: SatelliteIdentity(gnss: .gps, svid: prn)
        case 120...158: SatelliteIdentity(prn: prn, gnss: .sbas, svid: prn)
        default: nil
        }
    }

    /// MID 98's UTC time; `nil` for fields no time has. A 61st second (a leap second) is
    /// one only in a day's last minute.
    static func utc(_ extended: SiRFExtendedNavigation) -> GPSTime? {
        let milliseconds = extended.milliseconds
        let lastMinute = extended.hour == 23 && extended.minute == 59
        guard NMEADate.isDay(extended.day, ofMonth: extended.month, year: extended.year), (0...23).contains(extended.hour),
            (0...59).contains(extended.minute), milliseconds < (lastMinute ? 61_000 : 60_000)
        else { return nil }
        let time = NMEATime(
            hour: UInt8(extended.hour), minute: UInt8(extended.minute), second: UInt8(milliseconds / 1000),
            nanosecond: UInt32(milliseconds % 1000) * 1_000_000)
        return GPSTime(year: extended.year, month: extended.month, day: extended.day, time: time)
    }
}
