import GPSFix

/// Merges Trimble TSIP packets into fixes and sky views, as gpsd reports them.
///
/// TSIP has no epoch marker: every packet with a time of fix (0x8F-AB, 0x8F-20, 0x41,
/// 0x54; TSIPv1's A1-00) opens an epoch when its time differs from the open one's, and
/// the open epoch's fix is reported then if anything changed it since it was last
/// reported. 0x8F-AC (which follows 0x8F-AB) and TSIPv1's A3-11 end an epoch, so timing
/// receivers' fixes go out as their last packet arrives. Mode and status are held from
/// epoch to epoch; position and motion are the epoch's own.
///
/// Satellites come one per packet (0x5C, 0x5D, A2-00) into a table by channel, as gpsd
/// keeps them, and a view is reported when a run of them ends.
///
/// A timing receiver's 0x8F-AB names the second of the pulse just past, and the 0x8F-AC
/// after it that pulse's quantisation error: announced together, for the time service.
public final class TSIPAssembler: DriverAssembler {
    public private(set) var cyclesOpened = 0
    public internal(set) var solutions = 0
    public internal(set) var subtypes: (subtype: String?, subtype1: String?) = (nil, nil)
    public internal(set) var identityChanges = 0
    /// What the assembler has seen.
    public var statistics: EpochReports.Statistics { reports.statistics }

    var reports: EpochReports
    /// The packet being read, unstuffed (id first), reused for every packet.
    private var packet: [UInt8] = []
    /// The open epoch's time, and whether its fix changed since it was last reported.
    var epochTime: GPSTime?
    var changed = false
    /// Held from epoch to epoch: the mode the last fix packet gave (0x6D, 0x8F-20, ...),
    /// unless a health report (0x46) since said the receiver does no fixes. Set by a fix
    /// packet, which ends what the health report said.
    var mode: FixMode {
        get { healthSaysNoFix ? .noFix : reportedMode }
        set {
            reportedMode = newValue
            healthSaysNoFix = false
        }
    }
    private var reportedMode = FixMode.unknown
    /// The last 0x46 listed a reason the receiver does no fixes; a 0x46 of status 0
    /// (doing fixes) ends it.
    private var healthSaysNoFix = false
    var status = FixStatus.unknown
    var week: Int?
    /// The last 0x6D/0x6C: DOPs, the solution's PRNs and whether it was a position fix.
    var dilutions: (pdop: Double?, hdop: Double?, vdop: Double?, tdop: Double?) = (nil, nil, nil, nil)
    var usedPRNs: [Int] = []
    /// The DOPs are computed from the satellites' geometry, not the receiver's.
    var dilutionsComputed = false
    var positionSolution = false
    /// Satellites by channel, as gpsd's table holds them (kept between runs).
    var channels: [Satellite?] = []
    var lastChannel = -1
    var skyTime: GPSTime?
    var skyPending = false
    /// 0x55 set 0x4A's and 0x84's altitudes above mean sea level.
    var altitudesMSL = false
    /// TSIPv1's run of A2-00 signals: open, and the last index read.
    var signalsPending = false
    var lastSignal = -1
    /// TSIPv1's A3-00 said the receiver tracks no satellites.
    var notTracking = false
    /// The view being reported, reused.
    var satellites: [Satellite] = []
    /// The UTC second (since 1970) of the pulse the last 0x8F-AB timed, when its time is
    /// certain; taken by the 0x8F-AC that follows it.
    var pulseSecond: Int?
    /// The pulse announcement the packet being read completed.
    var pulse: PulseAnnouncement?

    public init(_ context: AssemblyContext) {
        reports = EpochReports(rolloverRule: context.rolloverRule)
        packet.reserveCapacity(TSIPFrameRule.maximumLength)
        usedPRNs.reserveCapacity(32)
        channels = [Satellite?](repeating: nil, count: Self.channelCount)
        satellites.reserveCapacity(Self.channelCount)
    }

    /// Channels a receiver reports (TSIPv1 lists signals, up to this many too).
    static let channelCount = 64

    public func add(_ frame: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void) {
        packet.removeAll(keepingCapacity: true)
        var body = TSIPFrameRule.Body(frame)
        while let byte = body.next() { packet.append(byte) }
        packet.withUnsafeBytes { read($0) }
        reports.emit(emit)
        if let pulse {
            emit(.nextPulse(pulse))
            self.pulse = nil
        }
    }

    public func flush(_ emit: (LocationUpdate) -> Void) {
        endSky()
        endSignals()
        if changed { reportFix() }
        reports.emit(emit)
    }

    private func read(_ packet: UnsafeRawBufferPointer) {
        guard let id = packet.first else { return }
        let data = FrameFields(UnsafeRawBufferPointer(rebasing: packet[1...]), bigEndian: true)
        if TSIPFrameRule.isVersion1(id) {
            readVersion1(id: id, data)
            return
        }
        if id != 0x5C && id != 0x5D { endSky() }
        if id != 0x8F || data.u8(0) != 0xAC { pulseSecond = nil }
        var decoded = true
        switch id {
        case 0x41:
            if let time = TSIPGPSTime(data) { apply(time) } else { decoded = false }
        case 0x54:
            if let bias = TSIPBias(data) { apply(bias) } else { decoded = false }
        case 0x4A, 0x84:
            if let position = TSIPPosition(data, double: id == 0x84) { apply(position) } else { decoded = false }
        case 0x56:
            if let velocity = TSIPVelocity(data) { apply(velocity) } else { decoded = false }
        case 0x55:
            // I/O options: byte 0 bit 2, altitudes of 0x4A and 0x84 above mean sea level.
            if let options = data.u8(0) { altitudesMSL = options & 0x04 != 0 } else { decoded = false }
        case 0x46:
            if let health = TSIPHealth(data) {
                if let saysNoFix = health.saysNoFix { healthSaysNoFix = saysNoFix }
            } else {
                decoded = false
            }
        case 0x47:
            if let levels = TSIPSignalLevels(data) { apply(levels) } else { decoded = false }
        case 0x5C, 0x5D:
            if let tracking = TSIPTracking(data, gnss: id == 0x5D) { apply(tracking) } else { decoded = false }
        case 0x6C, 0x6D:
            if let selection = TSIPSelection(data, counted: id == 0x6C) { apply(selection) } else { decoded = false }
        case 0x8F:
            switch data.u8(0) {
            case 0x20: if let fix = TSIPLastFix(data) { apply(fix) } else { decoded = false }
            case 0xAB: if let timing = TSIPPrimaryTiming(data) { apply(timing) } else { decoded = false }
            case 0xAC: if let timing = TSIPSupplementalTiming(data) { apply(timing) } else { decoded = false }
            default: reports.statistics.unknownMessages += 1
            }
        case 0x1C, 0x45, 0x4B:
            readIdentity(id: id, data)
        default:
            reports.statistics.unknownMessages += 1
        }
        if !decoded { reports.statistics.decodingErrors += 1 }
    }

    /// A packet with time of fix `time` arrived: another time than the open epoch's
    /// reports that epoch (if it changed) and opens a new one.
    func open(_ time: GPSTime) {
        if let current = epochTime, current == time { return }
        if changed { reportFix() }
        reports.clear()
        // gpsd clears the DOPs with each new time: 0x6D's, or its own from the geometry,
        // fill them again.
        dilutions = (nil, nil, nil, nil)
        dilutionsComputed = false
        epochTime = time
        reports.fix.time = time
        cyclesOpened &+= 1
    }

    /// Reports the open epoch's fix, then its DOPs.
    func reportFix() {
        reports.fix.mode = mode
        reports.fix.status = status
        // Every TSIP time is GPS time: converted by the usual offset until the receiver
        // gives its own (0 until it has the UTC parameters, up to 12.5 minutes after a
        // cold start), it is shown but sets no clock.
        if reports.leapSeconds == nil { reports.fix.timeIsUnconfirmed = true }
        reports.reportFix(cycle: cyclesOpened)
        reports.sky.pdop = dilutions.pdop
        reports.sky.hdop = dilutions.hdop
        reports.sky.vdop = dilutions.vdop
        reports.sky.tdop = dilutions.tdop
        reports.reportDilutions(time: reports.fix.time)
        changed = false
    }

    /// UTC from a GPS week and a time of week in seconds, to the millisecond; `nil` for
    /// a time no week holds.
    func time(week: Int, seconds: Double) -> GPSTime? {
        guard week >= 0, seconds >= 0, seconds < 604_800 else { return nil }
        return reports.utc(week: week, milliseconds: Int((seconds * 1000).rounded()))
    }

    /// Takes the receiver's GPS-UTC offset. Trimble's say 0 while they do not know it
    /// (for up to 12.5 minutes after a cold start): not a value out of range.
    func takeLeapSeconds(_ offset: Int) {
        if offset != 0 { reports.takeLeapSeconds(offset) }
    }

    private func apply(_ time: TSIPGPSTime) {
        guard time.week > 0 else { return }
        week = time.week
        // A float: any finite value can come, and only a whole number of seconds is one.
        takeLeapSeconds(Int(exactly: time.utcOffset.rounded(.towardZero)) ?? 0)
        guard let utc = self.time(week: time.week, seconds: Double(time.timeOfWeek)) else { return }
        open(utc)
        changed = true
    }

    private func apply(_ bias: TSIPBias) {
        guard let week, let utc = time(week: week, seconds: Double(bias.timeOfFix)) else { return }
        open(utc)
        changed = true
    }

    /// 0x4A/0x84: the position of the fix at its time; the mode is 0x6D's.
    private func apply(_ position: TSIPPosition) {
        guard let week, let utc = time(week: week, seconds: Double(position.timeOfFix)) else { return }
        open(utc)
        solutions += 1
        let latitude = position.latitude * 180 / .pi
        let longitude = position.longitude * 180 / .pi
        let separation = altitudesMSL ? Geoid.separation(latitude: latitude, longitude: longitude) : 0
        setPosition(latitude: latitude, longitude: longitude, altitudeHAE: position.altitude + separation)
        changed = true
    }

    /// 0x56: the velocity of the fix at its time.
    private func apply(_ velocity: TSIPVelocity) {
        guard let week, let utc = time(week: week, seconds: Double(velocity.timeOfFix)) else { return }
        open(utc)
        setVelocity(north: Double(velocity.north), east: Double(velocity.east), up: Double(velocity.up))
        changed = true
    }

    private func apply(_ fix: TSIPLastFix) {
        week = fix.week
        takeLeapSeconds(fix.utcOffset)
        guard let utc = time(week: fix.week, seconds: Double(fix.timeOfWeekMilliseconds) / 1000) else { return }
        open(utc)
        solutions += 1
        if fix.flags & 0x01 != 0 {
            mode = .noFix
        } else {
            mode = fix.flags & 0x04 != 0 ? .twoDimensional : .threeDimensional
            status = fix.flags & 0x02 != 0 ? .differential : .gps
            setPosition(latitude: fix.latitude, longitude: fix.longitude, altitudeHAE: fix.altitudeHAE)
            setVelocity(north: fix.velocityNorth, east: fix.velocityEast, up: fix.velocityUp)
        }
        changed = true
        reportFix()
    }

    private func apply(_ timing: TSIPPrimaryTiming) {
        week = timing.week
        if timing.hasUTCParameters { takeLeapSeconds(timing.utcOffset) }
        guard let utc = time(week: timing.week, seconds: Double(timing.timeOfWeek)) else { return }
        open(utc)
        changed = true
        // A time not yet set, without the UTC parameters, or set by the user is shown, but
        // sets no clock.
        if !timing.isCertain { reports.fix.timeIsUnconfirmed = true }
        // The time of week and week are GPS time whichever time base the flags name.
        // The second as the fix names it, a lost 1024 weeks restored, so that the pulse
        // pairs with the receiver time sampled from that fix. An inserted second's pulse
        // names no second the clock has.
        if timing.isCertain, reports.leapSeconds != nil, !utc.isLeapSecond {
            pulseSecond = Int(exactly: utc.secondsSince1970.rounded())
        }
    }

    /// 0x8F-AC's minor alarm saying a leap second is pending.
    static let leapSecondPending: UInt16 = 0x0080

    /// Closes the epoch 0x8F-AB opened. gpsd reports the surveyed position as the fix, and
    /// status 7 (surveyed time) while the receiver is an overdetermined clock, 5 (dead
    /// reckoning) when it has no satellites or doubts its position.
    private func apply(_ timing: TSIPSupplementalTiming) {
        solutions += 1
        if timing.receiverMode == 7 {
            mode = .threeDimensional
            status =
                timing.minorAlarms & 0x0208 != 0 ? .deadReckoning : timing.decodingStatus == 0 ? .surveyedTime : .gps
        }
        if timing.latitude != 0 || timing.longitude != 0 {
            setPosition(
                latitude: timing.latitude * 180 / .pi, longitude: timing.longitude * 180 / .pi,
                altitudeHAE: timing.altitudeHAE)
        }
        // Minor alarm bit 7: a leap second is pending (Thunderbolt, SMT 360). Trimble's bit
        // does not say which way; every leap second so far was inserted, and the time
        // service hands a warning on in June and December only, when one can be due.
        reports.fix.leapSecondWarning = timing.minorAlarms & Self.leapSecondPending != 0 ? .insertion : .none
        changed = true
        if epochTime != nil { reportFix() }
        // The pulse 0x8F-AB timed, with the quantisation error given for it.
        if let second = pulseSecond, let nanoseconds = timing.quantisationError {
            pulseSecond = nil
            announcePulse(of: second, quantisationError: nanoseconds)
        }
    }

    /// Announces the pulse of `second` just past, with its quantisation error in
    /// nanoseconds (0x8F-AC's, or A1-00's for its own second).
    func announcePulse(of second: Int, quantisationError nanoseconds: Float) {
        guard let error = PulseAnnouncement.quantisationError(picoseconds: Double(nanoseconds) * 1000) else {
            reports.statistics.valuesOutOfRange += 1
            return
        }
        pulse = PulseAnnouncement(second: second, quantisationError: error, pulse: .past)
    }

    private func apply(_ selection: TSIPSelection) {
        func given(_ value: Float) -> Double? { value > 0 && value < 99.99 ? Double(value) : nil }
        dilutions = (given(selection.pdop), given(selection.hdop), given(selection.vdop), given(selection.tdop))
        dilutionsComputed = false
        switch selection.dimension {
        case 3: mode = .twoDimensional
        case 4: mode = .threeDimensional
        default: break
        }
        positionSolution = selection.dimension == 3 || selection.dimension == 4
        usedPRNs.removeAll(keepingCapacity: true)
        for index in 0..<min(selection.count, 32) { usedPRNs.append(selection.prn(index)) }
    }

    /// The receiver's velocity, and the speed, track and climb gpsd reports from it (a
    /// track of 0 at rest, as gpsd prints it), rather than any derived from positions.
    func setVelocity(north: Double, east: Double, up: Double) {
        reports.fix.velocity = NEDVelocity(north: north, east: east, down: -up)
        reports.fix.speed = (north * north + east * east).squareRoot()
        reports.fix.track = Geodesy.bearing(east: east, north: north)
        reports.fix.climb = up
    }

    func setPosition(latitude: Double, longitude: Double, altitudeHAE: Double) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            reports.statistics.valuesOutOfRange += 1
            return
        }
        reports.fix.setPosition(latitude: latitude, longitude: longitude, height: altitudeHAE)
    }
}
