import GPSFix
import NMEA

/// Merges the CASIC messages of each navigation epoch into one fix and one sky view.
///
/// A CASIC receiver sends, per epoch, NAV-STATUS, NAV-DOP, NAV-PV (the solution),
/// NAV-TIMEUTC and one satellite list per system (GPS, BeiDou, GLONASS), all stamped
/// with the same `runTime`. An epoch ends when a message with another `runTime` arrives;
/// the message that ended the last one is learned as the end of epochs (as for UBX), so
/// that an epoch is reported as its last message arrives rather than a second later. Its
/// fix then goes out, and one view of all three systems' satellites.
public final class CASICAssembler: DriverAssembler {
    public private(set) var cyclesOpened = 0
    public private(set) var solutions = 0
    public let subtypes: (subtype: String?, subtype1: String?) = (nil, nil)
    public let identityChanges = 0
    public var statistics: EpochReports.Statistics { reports.statistics }

    private var reports: EpochReports
    /// The open epoch's `runTime`, and the last closed one's.
    private var epoch: UInt32?
    private var closedEpoch: UInt32?
    /// The last message of the open epoch, and the one learned to end epochs.
    private var lastMessage: UInt8?
    private var epochEnder: UInt8?
    /// The open epoch's satellites, of every system, reused from epoch to epoch.
    private var satellites: [Satellite] = []

    public init(_ context: AssemblyContext) {
        reports = EpochReports(rolloverRule: context.rolloverRule)
    }

    public func add(_ frame: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void) {
        read(frame)
        reports.emit(emit)
    }

    public func flush(_ emit: (LocationUpdate) -> Void) {
        if epoch != nil { endEpoch() }
        reports.emit(emit)
    }

    private func read(_ frame: UnsafeRawBufferPointer) {
        guard frame.count >= CASICFrameRule.overhead else {
            reports.statistics.decodingErrors += 1
            return
        }
        let id = frame[5]
        let payload = FrameFields(
            UnsafeRawBufferPointer(rebasing: frame[CASICFrameRule.headerLength..<(frame.count - 4)]), bigEndian: false)
        guard frame[4] == CASICMessage.navigationClass, let runTime = payload.u32(0) else {
            reports.statistics.unknownMessages += 1
            return
        }
        open(runTime, id)
        var decoded = true
        switch id {
        case CASICMessage.positionVelocity:
            if let solution = CASICPositionVelocity(payload) { apply(solution) } else { decoded = false }
        case CASICMessage.dilutions:
            if let dilutions = CASICDilutions(payload) { apply(dilutions) } else { decoded = false }
        case CASICMessage.utcTime:
            if let time = CASICUTCTime(payload) { apply(time) } else { decoded = false }
        case CASICMessage.gpsSatellites, CASICMessage.beidouSatellites, CASICMessage.glonassSatellites:
            if let list = CASICSatellites(payload) { apply(list, message: id) } else { decoded = false }
        case CASICMessage.status:
            break
        default:
            reports.statistics.unknownMessages += 1
        }
        if !decoded { reports.statistics.decodingErrors += 1 }
        if let ender = epochEnder, id == ender, epoch != nil { endEpoch() }
    }

    /// A message of epoch `runTime` arrived: one more than 10 ms from the open epoch's
    /// ends that epoch, and the epoch's last message is learned as the end of epochs.
    private func open(_ runTime: UInt32, _ message: UInt8) {
        defer { lastMessage = message }
        if let current = epoch {
            guard Self.differ(current, runTime) else { return }
            epochEnder = lastMessage
            endEpoch()
        } else if let closed = closedEpoch, !Self.differ(closed, runTime) {
            // More of an epoch already reported: the learned end was wrong.
            epochEnder = nil
        }
        epoch = runTime
        cyclesOpened &+= 1
    }

    private static func differ(_ a: UInt32, _ b: UInt32) -> Bool { (a > b ? a - b : b - a) > 10 }

    /// The most satellites an epoch's view holds: three systems' lists, of at most 64 each.
    public static let maximumSatellites = 192

    private func apply(_ solution: CASICPositionVelocity) {
        solutions += 1
        var fix = reports.fix
        switch solution.positionValidity {
        case 6: (fix.mode, fix.status) = (.twoDimensional, .gps)
        case 7: (fix.mode, fix.status) = (.threeDimensional, .gps)
        case 8: (fix.mode, fix.status) = (.threeDimensional, .gnssWithDeadReckoning)
        case 4: (fix.mode, fix.status) = (.twoDimensional, .deadReckoning)
        default: (fix.mode, fix.status) = (.noFix, .unknown)
        }
        if fix.mode >= .twoDimensional {
            fix.latitude = solution.latitude
            fix.longitude = solution.longitude
            fix.altitudeHAE = Double(solution.height)
            fix.geoidSeparation = Double(solution.geoidSeparation)
            fix.altitudeMSL = Double(solution.height) - Double(solution.geoidSeparation)
            fix.horizontalError = Double(solution.horizontalVariance).squareRoot()
            fix.verticalError = Double(solution.verticalVariance).squareRoot()
            fix.speed = Double(solution.groundSpeed)
            fix.track = Double(solution.heading)
            fix.velocity = NEDVelocity(
                north: Double(solution.velocityNorth), east: Double(solution.velocityEast),
                down: -Double(solution.velocityUp))
            fix.speedError = Double(solution.speedAccuracy)
        }
        reports.fix = fix
    }

    private func apply(_ dilutions: CASICDilutions) {
        func given(_ value: Float) -> Double? { value > 0 && value < 99.99 ? Double(value) : nil }
        reports.sky.pdop = given(dilutions.pdop)
        reports.sky.hdop = given(dilutions.hdop)
        reports.sky.vdop = given(dilutions.vdop)
        reports.sky.ydop = given(dilutions.ndop)
        reports.sky.xdop = given(dilutions.edop)
        reports.sky.tdop = given(dilutions.tdop)
    }

    private func apply(_ time: CASICUTCTime) {
        guard time.isValid, (1980...9999).contains(time.year), NMEADate.isDay(time.day, ofMonth: time.month, year: time.year),
            time.hour < 24, time.minute < 60, time.second < 60, time.millisecond < 1000
        else { return }
        let day = GPSTime(year: time.year, month: time.month, day: time.day, time: NMEATime(hour: 0, minute: 0, second: 0))
        let milliseconds = (day.daysSince1970 * 86_400 + time.hour * 3600 + time.minute * 60 + time.second) * 1000
            + time.millisecond
        reports.fix.time = reports.rolloverRule.corrected(GPSTime(millisecondsSince1970: milliseconds))
    }

    private func apply(_ list: CASICSatellites, message: UInt8) {
        let gnss: GNSS =
            switch message {
            case CASICMessage.beidouSatellites: .beidou
            case CASICMessage.glonassSatellites: .glonass
            default: .gps
            }
        // Three systems' lists an epoch: a receiver repeating them within one epoch adds
        // no more than that.
        for index in 0..<list.count where satellites.count < Self.maximumSatellites {
            let entry = list[index]
            guard let identity = SatelliteIdentity(gnss: gnss, svid: entry.svid) else { continue }
            satellites.append(
                Satellite(
                    identity: identity, elevation: (-90...90).contains(entry.elevation) ? Double(entry.elevation) : nil,
                    azimuth: (0...359).contains(entry.azimuth) ? Double(entry.azimuth) : nil, snr: Double(entry.cno),
                    used: entry.used, residual: entry.residual.map(Double.init)))
        }
    }

    /// Reports the open epoch's fix, then its view of every system's satellites.
    private func endEpoch() {
        let time = reports.fix.time
        reports.reportFix(cycle: cyclesOpened)
        reports.reportSatellites(satellites, time: time)
        reports.reportDilutions(time: time)
        satellites.removeAll(keepingCapacity: true)
        reports.clear()
        closedEpoch = epoch
        epoch = nil
    }
}
