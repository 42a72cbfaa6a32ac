import NMEA
import ReceiverFraming
import UBX

/// Merges the UBX messages of each navigation epoch into one fix and one sky view, as
/// ``FixAssembler`` does for NMEA's sentences, with the receiver's own accuracy
/// estimates, leap seconds and signal-level sky.
///
/// A u-blox receiver sends a set of NAV messages per epoch, each stamped with the
/// epoch's GPS time of week (iTOW). The epoch ends at NAV-EOE where the receiver sends
/// it; else at the message that ended the epoch before (learned, as gpsd learns it);
/// else when a message with a new iTOW arrives. One generation's messages or another's
/// fill the same fix: NAV-PVT (u-blox 7 on), or NAV-SOL with NAV-POSLLH, NAV-VELNED and
/// NAV-STATUS (u-blox 5 and 6). NAV-SOL also reports the epoch so far when it arrives,
/// as gpsd does for those older receivers. HNR-PVT, the high-rate solution of
/// dead-reckoning receivers, is a fix of its own between epochs.
///
/// The sky goes out as gpsd sends it: a view when NAV-SAT (or NAV-SVINFO) arrives,
/// another, signal by signal, when NAV-SIG does, each with the DOPs known by then (the
/// rest computed from the geometry), and the epoch's DOPs again after its fix. Climb is
/// derived from the altitude change between fixes, as gpsd derives it; the receiver's
/// own vertical velocity is in the fix's velocity.
///
/// Nothing here allocates per frame once the sky's storage has grown to the receiver's
/// satellite count, as long as the consumer lets go of each view before the next
/// arrives (the daemon keeps the latest view, so it pays one allocation a view).
public struct UBXAssembler {
    /// What the assembler has seen, counted as every binary protocol's assembler counts
    /// (HNR-PVT's fixes are epochs too).
    public typealias Statistics = EpochReports.Statistics

    public internal(set) var statistics = Statistics()
    /// How many epochs have opened: changes with the message that opens one, so a reader
    /// can note when it arrived (the time service pairs the epoch's time with that moment).
    public private(set) var epochsOpened = 0
    /// Navigation solutions read (NAV-PVT, NAV-SOL, NAV-POSLLH, HNR-PVT): once there are
    /// some, UBX carries this receiver's fixes, and its NMEA only its raw sentences.
    public internal(set) var solutions = 0
    /// The receiver's versions, once it has answered MON-VER.
    public private(set) var version: MonVER? {
        didSet { identityChanges &+= 1 }
    }
    /// Changes when ``version`` does: a cheap test for news of the receiver.
    public private(set) var identityChanges = 0
    /// The receiver's survey-in as it last reported it (NAV-SVIN or TIM-SVIN); `nil`
    /// before it has.
    public private(set) var survey: SurveyProgress?
    /// The rule for receivers that lost 1024 weeks.
    public var rolloverRule: RolloverRule

    /// The open epoch's time of week, and the values gathered for it.
    private var epoch: UInt32?
    var fix = Fix()
    var sky = SkyView()
    /// The DOPs of the epoch closed last.
    private var heldDilutions = SkyView()
    /// Satellites went out in a view of the open epoch.
    var satellitesReported = false
    /// The last epoch closed, and its fix, for messages of it that come after its learned end.
    private var closedEpoch: UInt32?
    private var closedFix = Fix()
    private var closedSky = SkyView()
    /// GPS week and GPS-UTC leap seconds as last given, for times from a time of week.
    var week: Int?
    var leapSeconds: Int?
    /// The leap second NAV-TIMELS last announced, counted down epoch by epoch, and the
    /// time of week of the epoch opened last, from which it is counted.
    var leapSchedule = LeapSecondSchedule()
    private var lastOpenedEpoch: UInt32?
    /// The day a fix last warned of a second inserted at its end, for times from GPS time.
    private var insertedSecond = InsertedSecond()
    /// The satellites of NAV-SAT or NAV-SVINFO, reused from epoch to epoch (emptied when
    /// the next view arrives, by then no longer shared with the views sent out), and
    /// whether they are the open epoch's.
    var satellites: [Satellite] = []
    var satellitesOfEpoch = false
    /// The open epoch's signals from NAV-SIG, reused likewise.
    var signals: [Satellite] = []
    /// The last message of the open epoch, and the one learned to end epochs.
    private var lastMessage: UInt16?
    private var epochEnder: UInt16?
    /// The fixes climb and, where missing, speed are derived from.
    private var motion = MotionReference()
    var completed: [LocationUpdate] = []

    public init(rolloverRule: RolloverRule = RolloverRule()) {
        self.rolloverRule = rolloverRule
        completed.reserveCapacity(4)
    }

    /// Adds one UBX frame, calling `emit` for each update it completes.
    public mutating func add(_ frame: UBXFrame, _ emit: (LocationUpdate) -> Void) {
        read(frame)
        guard !completed.isEmpty else { return }
        for update in completed { emit(update) }
        completed.removeAll(keepingCapacity: true)
    }

    /// Ends the open epoch, as at the end of a log.
    public mutating func flush(_ emit: (LocationUpdate) -> Void) {
        if epoch != nil { endEpoch() }
        for update in completed { emit(update) }
        completed.removeAll(keepingCapacity: true)
    }

    private mutating func read(_ frame: UBXFrame) {
        let message = frame.message
        // Every message read here is decoded by its type, which refuses a frame too short for it.
        var decoded = true
        switch message {
        case NavPVT.message: if let m = NavPVT(frame) { apply(m) } else { decoded = false }
        case NavSOL.message: if let m = NavSOL(frame) { apply(m) } else { decoded = false }
        case NavPOSLLH.message: if let m = NavPOSLLH(frame) { apply(m) } else { decoded = false }
        case NavHPPOSLLH.message: if let m = NavHPPOSLLH(frame) { apply(m) } else { decoded = false }
        case NavVELNED.message: if let m = NavVELNED(frame) { apply(m) } else { decoded = false }
        case NavSTATUS.message: if let m = NavSTATUS(frame) { apply(m) } else { decoded = false }
        case NavDOP.message: if let m = NavDOP(frame) { apply(m) } else { decoded = false }
        case NavSAT.message: if let m = NavSAT(frame) { apply(m) } else { decoded = false }
        case NavSIG.message: if let m = NavSIG(frame) { apply(m) } else { decoded = false }
        case NavSVINFO.message: if let m = NavSVINFO(frame) { apply(m) } else { decoded = false }
        case NavTIMEGPS.message: if let m = NavTIMEGPS(frame) { apply(m) } else { decoded = false }
        case NavTIMEUTC.message: if let m = NavTIMEUTC(frame) { apply(m) } else { decoded = false }
        case NavTIMELS.message: if let m = NavTIMELS(frame) { apply(m) } else { decoded = false }
        case HNRPVT.message: if let m = HNRPVT(frame) { apply(m) } else { decoded = false }
        case MonVER.message: if let m = MonVER(frame) { version = m } else { decoded = false }
        case TimTP.message: if let m = TimTP(frame) { apply(m) } else { decoded = false }
        case NavSVIN.message:
            if let m = NavSVIN(frame) {
                survey = m.progress
                open(m.iTOW, message)
            } else {
                decoded = false
            }
        case TimSVIN.message: if let m = TimSVIN(frame) { survey = m.progress } else { decoded = false }
        case NavEOE.message:
            if let m = NavEOE(frame) {
                open(m.iTOW, message)
                endEpoch()
            } else {
                decoded = false
            }
        default:
            statistics.unknownMessages += 1
            if let iTOW = UBXTimeFields.timeOfWeek(of: frame) { open(iTOW, message) }
        }
        if !decoded { statistics.decodingErrors += 1 }
        if let ender = epochEnder, message == ender, epoch != nil { endEpoch() }
    }

    // MARK: Epochs

    /// A message of epoch `iTOW` arrived. A time of week more than 10 ms from the open
    /// epoch's ends that epoch, and its last message is learned as the end of epochs.
    mutating func open(_ iTOW: UInt32, _ message: UInt16) {
        defer { lastMessage = message }
        if let current = epoch {
            guard Self.differ(current, iTOW) else { return }
            epochEnder = lastMessage
            endEpoch()
        } else if let closed = closedEpoch, !Self.differ(closed, iTOW) {
            // More of an epoch already closed: the learned end was wrong. The epoch is
            // reopened with what it had, so that its next fix carries all of its values.
            epochEnder = nil
            epoch = closed
            fix = closedFix
            sky = closedSky
            return
        }
        epoch = iTOW
        epochsOpened &+= 1
        if let last = lastOpenedEpoch { leapSchedule.advance(byMilliseconds: Self.elapsed(from: last, to: iTOW)) }
        lastOpenedEpoch = iTOW
        // An epoch that opens with DOPs (NAV-SOL's PDOP, NAV-DOP) keeps the last epoch's
        // until its own arrive, as gpsd does: a view before the epoch's NAV-DOP then
        // carries the receiver's DOPs rather than ones computed from the geometry.
        if message == NavSOL.message || message == NavDOP.message { sky = heldDilutions }
    }

    private static func differ(_ a: UInt32, _ b: UInt32) -> Bool { (a > b ? a - b : b - a) > 10 }

    /// Milliseconds from one epoch's time of week to a later one's, across the week's end;
    /// none for a time of week out of range.
    private static func elapsed(from earlier: UInt32, to later: UInt32) -> Int {
        let week = 604_800_000
        let difference = Int(later) - Int(earlier)
        return max(0, difference < 0 ? difference + week : difference)
    }

    /// Emits the open epoch's fix and DOPs, and starts afresh.
    private mutating func endEpoch() {
        reportFix()
        if sky.gdop != nil || sky.hdop != nil || sky.pdop != nil || sky.vdop != nil || sky.tdop != nil {
            var dilutions = sky
            dilutions.time = skyTime
            // Sent before (the view's own report); kept for the daemon's state (`?POLL`).
            dilutions.satellites = satellitesOfEpoch ? satellites : []
            dilutions.satellitesReportedEarlier = true
            complete(.sky(dilutions))
        }
        closedEpoch = epoch
        epoch = nil
        closedFix = fix
        closedSky = sky
        fix = Fix()
        heldDilutions = SkyView()
        heldDilutions.takeDilutions(of: sky)
        sky = SkyView()
        satellitesReported = false
        satellitesOfEpoch = false
    }

    /// Emits the open epoch's fix as it stands, its motion derived from the epochs before
    /// it unless `ofItsOwnFrame` (HNR-PVT's fixes, which say nothing of climb, are no
    /// reference for an epoch's, and are of the moment their frame was read).
    mutating func reportFix(ofItsOwnFrame: Bool = false) {
        var report = fix
        report.cycle = ofItsOwnFrame ? nil : epochsOpened
        report.leapSeconds = report.time == nil ? nil : leapSeconds
        report.leapSecondWarning = report.time == nil ? .none : leapSchedule.warning
        insertedSecond.note(report.time, warning: report.leapSecondWarning, leapSeconds: leapSeconds)
        statistics.valuesOutOfRange += report.dropValuesOutOfRange()
        if !ofItsOwnFrame { motion.derive(&report) }
        statistics.epochs += 1
        complete(.fix(report))
    }

    /// Queues `update` with every value outside its range left out and counted.
    mutating func complete(_ update: LocationUpdate) {
        var update = update
        statistics.valuesOutOfRange += update.dropValuesOutOfRange()
        completed.append(update)
    }

    // MARK: Time

    /// The time of the open epoch's sky: the fix's, else its time of week in the week last given.
    var skyTime: GPSTime? {
        if let time = fix.time { return time }
        guard let week, let epoch else { return nil }
        return time(week: week, milliseconds: Int(epoch), nanoseconds: 0)
    }

    /// UTC from a GPS week and time of week; 23:59:60 for the second inserted after a
    /// day the receiver warned of (``InsertedSecond``), before its leap seconds change.
    func time(week: Int, milliseconds: Int, nanoseconds: Int) -> GPSTime {
        let milliseconds = milliseconds + Int((Double(nanoseconds) / 1e6).rounded())
        return insertedSecond.utc(week: week, milliseconds: milliseconds, leapSeconds: leapSeconds, rolloverRule: rolloverRule)
    }

    /// UTC from a message's calendar fields and their signed nanosecond correction;
    /// `nil` for fields no date has. An inserted second (23:59:60) stays that second:
    /// counted in seconds since 1970 it would become the next midnight, which the fix
    /// after it is (gpsd's reports name it so; the time service must tell them apart).
    func utcTime(_ utc: UBXCalendarTime) -> GPSTime? {
        guard (1980...9999).contains(utc.year), NMEADate.isDay(utc.day, ofMonth: utc.month, year: utc.year),
            NMEATime.isTimeOfDay(hour: utc.hour, minute: utc.minute, second: utc.second)
        else { return nil }
        let days = GPSTime(year: utc.year, month: utc.month, day: utc.day, time: NMEATime(hour: 0, minute: 0, second: 0))
            .daysSince1970
        let fraction = Int((Double(utc.nanosecond) / 1e6).rounded())
        if utc.second == 60, utc.hour == 23, utc.minute == 59, (0..<1000).contains(fraction) {
            let time = NMEATime(hour: 23, minute: 59, second: 60, nanosecond: UInt32(fraction) * 1_000_000)
            return rolloverRule.corrected(GPSTime(daysSince1970: days, time: time))
        }
        let milliseconds = (days * 86_400 + utc.hour * 3600 + utc.minute * 60 + utc.second) * 1000 + fraction
        return rolloverRule.corrected(GPSTime(millisecondsSince1970: milliseconds))
    }
}
