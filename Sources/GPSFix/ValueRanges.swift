/// The range each value of a fix, sky view, error estimate and heading must lie in to
/// leave the assembler: a receiver's field can hold any number NMEA can spell (an
/// altitude of `99999999999999999` is a valid field), and every output formats what the
/// assembler gives it. A value outside its range, or not finite, is left out of the
/// update and counted (``FixAssembler/Statistics/valuesOutOfRange``), so no encoder ever
/// sees it.
///
/// The ranges are wide: they keep out what no receiver on or near the Earth can mean,
/// not what is unlikely.
public enum ValueRanges {
    public static let latitude = -90.0...90.0
    public static let longitude = -180.0...180.0
    /// Metres, above the geoid or the ellipsoid: the deepest trench to well beyond low orbit.
    public static let altitude = -20_000.0...1_000_000.0
    /// Metres between geoid and ellipsoid (about ±110 on the Earth).
    public static let geoidSeparation = -500.0...500.0
    /// Metres per second over ground (past orbital speed).
    public static let speed = 0.0...20_000.0
    /// Metres per second, up or down, and each component of a measured velocity: within
    /// ``speed`` together.
    public static let climb = -10_000.0...10_000.0
    /// Degrees from true north (some receivers send 360).
    public static let direction = 0.0...360.0
    /// Degrees east, for a magnetic variation or an error ellipse's orientation.
    public static let signedAngle = -360.0...360.0
    /// An estimated error: metres, metres per second or degrees.
    public static let error = 0.0...1_000_000.0
    /// A dilution of precision, the receiver's or computed.
    public static let dilution = 0.0...10_000.0
    /// Seconds since the last differential correction.
    public static let differentialAge = 0.0...1_000_000.0
    /// Degrees above the horizon.
    public static let elevation = -90.0...90.0
    /// Signal to noise ratio, dB-Hz.
    public static let signalToNoise = 0.0...255.0
    /// Years of a time: GPS began in 1980; four digits at most.
    public static let year = 1980...9999
    /// GPS time minus UTC, seconds: 0 in 1980, 18 since 2017; room for a century of leap seconds either way.
    public static let leapSeconds = -100...100
    /// GPS time minus UTC as a receiver may give it to time fixes by: more than 10 s (so
    /// since 1996) and less than 100 s, the bound gpsd keeps for Trimble's. Another value
    /// (an unset 0, a damaged 32767) would move every time converted with it by as much,
    /// and that time would go to the clock as confirmed.
    public static let receiverLeapSeconds = 11...99
    /// A differential reference station's identifier: ten bits in RTCM 2, twelve in
    /// RTCM 3 (an RTK receiver's GGA gives its base's).
    public static let differentialStation = 0...4095
    /// Satellites a receiver says it used: none up to as many as a sky view holds.
    public static let satellitesUsed = 0...SkyView.maximumSatellites
    /// A pseudorange residual, metres.
    public static let residual = -100_000.0...100_000.0

    /// Leaves `value` out (and counts it) when it is not in `range`; NaN is in no range.
    @inline(__always)
    static func check(_ value: inout Double?, _ range: ClosedRange<Double>, _ dropped: inout Int) {
        if let number = value, !range.contains(number) {
            value = nil
            dropped += 1
        }
    }

    /// Sets `leapSeconds` to a receiver's `offset` when it is in ``receiverLeapSeconds``;
    /// otherwise counts it, and the leap seconds taken before stay.
    static func take(leapSeconds offset: Int, into leapSeconds: inout Int?, _ dropped: inout Int) {
        if receiverLeapSeconds.contains(offset) {
            leapSeconds = offset
        } else {
            dropped += 1
        }
    }

    static func check(_ time: inout GPSTime?, _ dropped: inout Int) {
        if let year = time?.year, !Self.year.contains(year) {
            time = nil
            dropped += 1
        }
    }
}

extension Fix {
    /// Leaves out every value outside its ``ValueRanges`` range; returns how many. A
    /// latitude or longitude out of range takes the other with it (a position is both).
    mutating func dropValuesOutOfRange() -> Int {
        var dropped = 0
        ValueRanges.check(&time, &dropped)
        ValueRanges.check(&latitude, ValueRanges.latitude, &dropped)
        ValueRanges.check(&longitude, ValueRanges.longitude, &dropped)
        if latitude == nil || longitude == nil {
            latitude = nil
            longitude = nil
        }
        ValueRanges.check(&altitudeMSL, ValueRanges.altitude, &dropped)
        ValueRanges.check(&altitudeHAE, ValueRanges.altitude, &dropped)
        ValueRanges.check(&geoidSeparation, ValueRanges.geoidSeparation, &dropped)
        ValueRanges.check(&speed, ValueRanges.speed, &dropped)
        ValueRanges.check(&track, ValueRanges.direction, &dropped)
        ValueRanges.check(&climb, ValueRanges.climb, &dropped)
        if let measured = velocity,
            !(ValueRanges.climb.contains(measured.north) && ValueRanges.climb.contains(measured.east)
                && ValueRanges.climb.contains(measured.down))
        {
            velocity = nil
            dropped += 1
        }
        ValueRanges.check(&magneticVariation, ValueRanges.signedAngle, &dropped)
        ValueRanges.check(&horizontalError, ValueRanges.error, &dropped)
        ValueRanges.check(&verticalError, ValueRanges.error, &dropped)
        ValueRanges.check(&sphericalError, ValueRanges.error, &dropped)
        ValueRanges.check(&speedError, ValueRanges.error, &dropped)
        ValueRanges.check(&trackError, ValueRanges.error, &dropped)
        ValueRanges.check(&timeError, ValueRanges.error, &dropped)
        if let leap = leapSeconds, !ValueRanges.leapSeconds.contains(leap) {
            leapSeconds = nil
            dropped += 1
        }
        ValueRanges.check(&longitudeError, ValueRanges.error, &dropped)
        ValueRanges.check(&latitudeError, ValueRanges.error, &dropped)
        ValueRanges.check(&differentialAge, ValueRanges.differentialAge, &dropped)
        if let station = differentialStation, !ValueRanges.differentialStation.contains(station) {
            differentialStation = nil
            dropped += 1
        }
        if differentialAge == nil { differentialStation = nil }
        return dropped
    }
}

extension SkyView {
    /// Leaves out every DOP and satellite position or signal outside its range; returns how many.
    mutating func dropValuesOutOfRange() -> Int {
        // Read first: a view in range is not written, so the satellites' storage it
        // shares with the view the assembler keeps is not copied, once a cycle.
        guard !isInRange else { return 0 }
        var dropped = 0
        ValueRanges.check(&time, &dropped)
        ValueRanges.check(&hdop, ValueRanges.dilution, &dropped)
        ValueRanges.check(&vdop, ValueRanges.dilution, &dropped)
        ValueRanges.check(&pdop, ValueRanges.dilution, &dropped)
        ValueRanges.check(&tdop, ValueRanges.dilution, &dropped)
        ValueRanges.check(&xdop, ValueRanges.dilution, &dropped)
        ValueRanges.check(&ydop, ValueRanges.dilution, &dropped)
        ValueRanges.check(&gdop, ValueRanges.dilution, &dropped)
        if let used = reportedUsedCount, !ValueRanges.satellitesUsed.contains(used) {
            reportedUsedCount = nil
            dropped += 1
        }
        for index in satellites.indices where !satellites[index].isInRange {
            ValueRanges.check(&satellites[index].elevation, ValueRanges.elevation, &dropped)
            ValueRanges.check(&satellites[index].azimuth, ValueRanges.direction, &dropped)
            ValueRanges.check(&satellites[index].snr, ValueRanges.signalToNoise, &dropped)
            ValueRanges.check(&satellites[index].residual, ValueRanges.residual, &dropped)
        }
        return dropped
    }
}

extension SkyView {
    /// Whether every value is absent or in its range, read without writing anything.
    var isInRange: Bool {
        func inRange(_ dilution: Double?) -> Bool { dilution.map(ValueRanges.dilution.contains) ?? true }
        return time.map { ValueRanges.year.contains($0.year) } ?? true
            && inRange(hdop) && inRange(vdop) && inRange(pdop) && inRange(tdop) && inRange(xdop) && inRange(ydop)
            && inRange(gdop) && (reportedUsedCount.map(ValueRanges.satellitesUsed.contains) ?? true)
            && satellites.allSatisfy(\.isInRange)
    }
}

extension Satellite {
    /// Whether its elevation, azimuth and signal are each absent or in range.
    var isInRange: Bool {
        elevation.map(ValueRanges.elevation.contains) ?? true && azimuth.map(ValueRanges.direction.contains) ?? true
            && snr.map(ValueRanges.signalToNoise.contains) ?? true && residual.map(ValueRanges.residual.contains) ?? true
    }
}

extension ErrorEstimate {
    /// Leaves out every value outside its range; returns how many.
    mutating func dropValuesOutOfRange() -> Int {
        var dropped = 0
        ValueRanges.check(&time, &dropped)
        ValueRanges.check(&rangeRMS, ValueRanges.error, &dropped)
        ValueRanges.check(&semiMajor, ValueRanges.error, &dropped)
        ValueRanges.check(&semiMinor, ValueRanges.error, &dropped)
        ValueRanges.check(&latitudeError, ValueRanges.error, &dropped)
        ValueRanges.check(&longitudeError, ValueRanges.error, &dropped)
        ValueRanges.check(&altitudeError, ValueRanges.error, &dropped)
        ValueRanges.check(&orientation, ValueRanges.signedAngle, &dropped)
        return dropped
    }
}

extension LocationUpdate {
    /// The update with every value outside its range left out, and how many were.
    mutating func dropValuesOutOfRange() -> Int {
        switch self {
        case .fix(var fix):
            let dropped = fix.dropValuesOutOfRange()
            self = .fix(fix)
            return dropped
        case .sky(var sky):
            let dropped = sky.dropValuesOutOfRange()
            self = .sky(sky)
            return dropped
        case .errorEstimate(var estimate):
            let dropped = estimate.dropValuesOutOfRange()
            self = .errorEstimate(estimate)
            return dropped
        case .attitude(var attitude):
            var dropped = 0
            ValueRanges.check(&attitude.time, &dropped)
            ValueRanges.check(&attitude.heading, ValueRanges.direction, &dropped)
            self = .attitude(attitude)
            return dropped
        default:
            return 0
        }
    }
}
