extension Fix {
    /// The longest time between two fixes across which motion is derived: one hour, the
    /// bound gpsd's own source suggests (it derives across any gap). Across a gap of
    /// seconds or minutes the result is the average motion over it, which for one cycle
    /// is still what a stationary or slow receiver did; past an hour it says nothing.
    static let longestMotionGap = 3600.0

    /// The slowest derived speed, metres per second, at which a derived track is given:
    /// below it the bearing between two positions is mostly their noise.
    static let slowestTrackedSpeed = 0.5

    /// Fills in the motion the receiver did not report, from `reference`, the previous fix
    /// with another time, `interval` seconds before this one, the way gpsd does:
    ///
    /// - `speed`: the distance on the WGS-84 ellipsoid between the two positions over the
    ///   interval, when both fixes are 2D or better;
    /// - `climb`: the altitude change over the interval, when both are 3D (above the
    ///   ellipsoid where both have it, else above sea level);
    /// - `track`: the initial bearing from the reference to this position, which gpsd
    ///   leaves out, only when the derived speed reaches ``slowestTrackedSpeed``.
    ///
    /// Values over 9999.9, gpsd's sanity bound, and intervals over ``longestMotionGap``
    /// give nothing. What the receiver reported is never replaced. Inlined into
    /// ``MotionReference/derive(_:)``, its one caller: a call would copy the reference
    /// fix, bound from an optional, to lend it.
    @inline(__always)
    mutating func deriveMotion(from reference: Fix, interval: Double) {
        guard interval > 0, interval <= Self.longestMotionGap, mode >= .twoDimensional,
            reference.mode >= .twoDimensional
        else { return }
        if speed == nil, let latitude, let longitude, let referenceLatitude = reference.latitude,
            let referenceLongitude = reference.longitude,
            let motion = Geodesy.inverse(
                from: (referenceLatitude, referenceLongitude), to: (latitude, longitude)),
            motion.distance / interval <= 9999.9
        {
            speed = motion.distance / interval
            if track == nil, motion.distance / interval >= Self.slowestTrackedSpeed { track = motion.bearing }
        }
        guard climb == nil, mode == .threeDimensional, reference.mode == .threeDimensional else { return }
        let altitudes = (altitudeHAE != nil && reference.altitudeHAE != nil)
            ? (altitudeHAE, reference.altitudeHAE) : (altitudeMSL, reference.altitudeMSL)
        if let now = altitudes.0, let then = altitudes.1, abs(now - then) / interval <= 9999.9 {
            climb = (now - then) / interval
        }
    }

    /// Fills the speed, track and climb that neither the cycle's sentences nor
    /// ``deriveMotion(from:interval:)`` gave, from the velocity the receiver measured
    /// (SkyTraq PSTI,030). This is gpsd's order: it derives motion at the cycle's first
    /// position sentence, before the velocity sentence that ends the cycle, so the
    /// velocity shows only where nothing was derived (a first fix, a single fix).
    mutating func fillMotionFromVelocity() {
        guard let velocity else { return }
        let horizontal = (velocity.north * velocity.north + velocity.east * velocity.east).squareRoot()
        if speed == nil { speed = horizontal }
        if track == nil, horizontal > 0 { track = Geodesy.bearing(east: velocity.east, north: velocity.north) }
        if climb == nil, mode == .threeDimensional { climb = -velocity.down }
    }
}

/// The fixes a receiver's motion is derived from, as gpsd derives it: the last fix with a
/// time, and the one before it with another time (gpsd's `lastfix` and `oldfix`).
struct MotionReference {
    private var lastTimedFix: Fix?
    private var reference: Fix?

    /// Derives climb (and speed, where missing) in `report` from the last fix with another
    /// time, then fills from the measured velocity what is still missing; `report` becomes
    /// the reference of the fixes after it.
    mutating func derive(_ report: inout Fix) {
        if let time = report.time {
            let seconds = time.secondsSince1970
            // gpsd's reference: the last fix whose time differs by 10 ms or more.
            if let last = lastTimedFix?.time, abs(seconds - last.secondsSince1970) >= 0.01 {
                reference = lastTimedFix
            }
            if let reference, let referenceTime = reference.time {
                report.deriveMotion(from: reference, interval: seconds - referenceTime.secondsSince1970)
            }
            lastTimedFix = report
        }
        report.fillMotionFromVelocity()
    }
}
