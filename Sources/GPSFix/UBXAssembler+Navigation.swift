import NMEA
import UBX

/// The navigation and time messages of a UBX epoch: the solution (NAV-PVT, or NAV-SOL with
/// NAV-POSLLH, NAV-VELNED and NAV-STATUS, refined by NAV-HPPOSLLH), its time (NAV-TIMEGPS,
/// NAV-TIMEUTC, NAV-TIMELS), the next pulse (TIM-TP) and the high-rate HNR-PVT.
extension UBXAssembler {

    mutating func apply(_ pvt: NavPVT) {
        open(pvt.iTOW, NavPVT.message)
        solutions += 1
        if pvt.validity & 0x03 == 0x03 {
            fix.time = utcTime(pvt.utc)
            fix.timeIsUnconfirmed = !pvt.hasValidTime
        }
        fix.timeError = pvt.timeAccuracy
        setSolution(fixType: pvt.fixType, differential: pvt.differentialSolution, carrier: pvt.carrierSolution)
        // A solution outside the receiver's DOP and accuracy masks is no fix (u-blox: a fix
        // is valid only with gnssFixOK), as NAV-STATUS says it.
        if !pvt.gnssFixOK { fix.mode = min(fix.mode, .noFix) }
        guard fix.mode >= .twoDimensional else { return }
        setPosition(pvt)
        fix.speed = pvt.groundSpeed
        fix.track = pvt.headingOfMotion
        fix.velocity = NEDVelocity(north: pvt.velocityNorth, east: pvt.velocityEast, down: pvt.velocityDown)
        fix.speedError = pvt.speedAccuracy
    }

    mutating func apply(_ solution: NavSOL) {
        open(solution.iTOW, NavSOL.message)
        solutions += 1
        if solution.hasValidTime {
            week = solution.week
            fix.time = time(week: solution.week, milliseconds: Int(solution.iTOW), nanoseconds: solution.fractionalTOW)
            fix.timeIsUnconfirmed = leapSeconds == nil
        }
        setSolution(fixType: solution.fixType, differential: false, carrier: 0)
        if !solution.gnssFixOK { fix.mode = min(fix.mode, .noFix) }
        if solution.differentialSolution { fix.status = .differential }
        let position = solution.position
        // An ECEF point at the Earth's centre is none (gpsd's test).
        if fix.mode >= .twoDimensional, abs(position.x) + abs(position.y) + abs(position.z) > 10 {
            fix.setPosition(
                ecef: (position.x, position.y, position.z),
                velocity: (solution.velocity.x, solution.velocity.y, solution.velocity.z))
            fix.sphericalError = solution.positionAccuracy
            fix.speedError = solution.speedAccuracy
        }
        if solution.pdop < 99.99 { sky.pdop = solution.pdop }
        // Older receivers' epochs end unreliably: the epoch so far is reported now too.
        reportFix()
    }

    mutating func apply(_ position: NavPOSLLH) {
        open(position.iTOW, NavPOSLLH.message)
        solutions += 1
        setPosition(position)
    }

    /// NAV-HPPOSLLH comes after NAV-PVT and refines its position.
    mutating func apply(_ position: NavHPPOSLLH) {
        open(position.iTOW, NavHPPOSLLH.message)
        guard !position.isInvalid else { return }
        setPosition(position)
    }

    mutating func apply(_ velocity: NavVELNED) {
        open(velocity.iTOW, NavVELNED.message)
        let measured = NEDVelocity(north: velocity.velocityNorth, east: velocity.velocityEast, down: velocity.velocityDown)
        // As gpsd: the velocity itself; speed and track from it only where nothing gave them.
        fix.velocity = measured
        fix.climb = -measured.down
        fix.speedError = velocity.speedAccuracy
        fix.trackError = velocity.headingAccuracy
    }

    mutating func apply(_ status: NavSTATUS) {
        open(status.iTOW, NavSTATUS.message)
        guard status.gnssFixOK else {
            fix.mode = .noFix
            return
        }
        // Carrier-phase solutions when the receiver says its carrier solution is valid,
        // differential when corrections are applied.
        let carrier = status.fixStatus & 0x02 != 0 ? Int(status.flags2 >> 6) : 0
        setSolution(fixType: status.fixType, differential: status.fixStatus & 0x03 != 0, carrier: carrier)
    }

    mutating func apply(_ time: NavTIMEGPS) {
        open(time.iTOW, NavTIMEGPS.message)
        if time.hasValidLeapSeconds { ValueRanges.take(leapSeconds: time.leapSeconds, into: &leapSeconds, &statistics.valuesOutOfRange) }
        guard time.hasValidTime else { return }
        week = time.week
        fix.timeError = fix.timeError ?? time.timeAccuracy
        // NAV-PVT's 23:59:60 stands: GPS time names it only when a warning came first.
        guard fix.time?.isLeapSecond != true else { return }
        fix.time = self.time(week: time.week, milliseconds: Int(time.iTOW), nanoseconds: time.fractionalTOW)
        // Its own leapSValid decides: it comes after NAV-PVT, whose time it replaces.
        fix.timeIsUnconfirmed = !time.hasValidLeapSeconds || leapSeconds == nil
    }

    mutating func apply(_ time: NavTIMEUTC) {
        open(time.iTOW, NavTIMEUTC.message)
        guard time.hasValidUTC else { return }
        fix.time = utcTime(time.utc)
        fix.timeIsUnconfirmed = false
        fix.timeError = time.timeAccuracy
    }

    /// NAV-TIMELS gives the leap seconds and schedules the next change, which fixes warn
    /// of in its last day (``LeapSecondSchedule``).
    mutating func apply(_ leap: NavTIMELS) {
        open(leap.iTOW, NavTIMELS.message)
        if leap.hasValidCurrent {
            ValueRanges.take(leapSeconds: leap.currentLeapSeconds, into: &leapSeconds, &statistics.valuesOutOfRange)
        }
        leapSchedule.announce(change: leap.change, secondsToEvent: leap.hasValidTimeToEvent ? leap.secondsToEvent : nil)
    }

    /// HNR-PVT is a fix of its own, reported at once, without disturbing the open epoch.
    mutating func apply(_ pvt: HNRPVT) {
        solutions += 1
        let epochFix = fix
        fix = Fix()
        if pvt.validity & 0x03 == 0x03 {
            fix.time = utcTime(pvt.utc)
            fix.timeIsUnconfirmed = pvt.validity & 0x04 == 0
        }
        setSolution(fixType: pvt.fixType, differential: pvt.differentialSolution, carrier: 0)
        if fix.mode >= .twoDimensional {
            setPosition(pvt)
            fix.speed = pvt.groundSpeed
            fix.track = pvt.headingOfMotion
            fix.speedError = pvt.speedAccuracy
            fix.trackError = pvt.headingAccuracy
        }
        reportFix(ofItsOwnFrame: true)
        fix = epochFix
    }

    /// TIM-TP names the second the next pulse marks and its quantisation error: passed to
    /// the time service when the pulse is on a whole second and its time is certain (a
    /// UTC time base with UTC available, or GPS time with the leap seconds known; another
    /// system's time base is not read).
    mutating func apply(_ pulse: TimTP) {
        guard pulse.hasValidQuantisationError, pulse.towMilliseconds % 1000 == 0, pulse.towSubMilliseconds == 0,
            pulse.isUTC || (pulse.isGPS && leapSeconds != nil)
        else { return }
        let second = GPSTime.gpsEpochSince1970 + pulse.week * 604_800 + Int(pulse.towMilliseconds / 1000)
            - (pulse.isUTC ? 0 : leapSeconds ?? 0)
        guard let error = PulseAnnouncement.quantisationError(picoseconds: Double(pulse.quantisationError)) else {
            statistics.valuesOutOfRange += 1
            return
        }
        completed.append(.nextPulse(PulseAnnouncement(second: second, quantisationError: error)))
    }

    /// Sets mode and status from a u-blox fix type, as gpsd maps them, and the status
    /// from the differential and carrier-phase flags.
    /// The status only rises within an epoch, as in gpsd: NAV-STATUS after an RTK NAV-PVT
    /// does not take the RTK status back.
    mutating func setSolution(fixType: UInt8, differential: Bool, carrier: Int) {
        let (mode, base) = Self.solution(fixType: fixType)
        var status = base
        if differential, base != .surveyedTime {
            status = carrier == 2 ? .rtkFixed : carrier == 1 ? .rtkFloat : .differential
        }
        fix.mode = mode
        if status.rawValue > fix.status.rawValue { fix.status = status }
    }

    /// A position with the receiver's accuracy estimates for it.
    mutating func setPosition(_ position: some UBXGeodeticPosition) {
        setPosition(
            latitude: position.latitude, longitude: position.longitude, height: position.height,
            heightMSL: position.heightMSL)
        fix.horizontalError = position.horizontalAccuracy
        fix.verticalError = position.verticalAccuracy
    }

    mutating func setPosition(latitude: Double, longitude: Double, height: Double, heightMSL: Double) {
        fix.latitude = latitude
        fix.longitude = longitude
        fix.altitudeHAE = height
        fix.altitudeMSL = heightMSL
        fix.geoidSeparation = height - heightMSL
    }

    /// gpsd's mode and status for a u-blox fix type (NAV-PVT, NAV-SOL, NAV-STATUS, HNR-PVT).
    static func solution(fixType: UInt8) -> (FixMode, FixStatus) {
        switch fixType {
        case 1: (.twoDimensional, .deadReckoning)
        case 2: (.twoDimensional, .gps)
        case 3: (.threeDimensional, .gps)
        case 4: (.threeDimensional, .gnssWithDeadReckoning)
        case 5: (.threeDimensional, .surveyedTime)
        default: (.noFix, .unknown)
        }
    }
}
