import GPSFix

/// Measures a receiver's cycle, gpsd's `cycle` in DEVICE reports: the shortest interval
/// between consecutive fix times among the last few, so a skipped cycle or a pause does
/// not make a 10 Hz receiver look like a 0.5 Hz one.
struct CycleMeter {
    /// Intervals kept: a skipped cycle leaves the measure after this many more.
    static let window = 8
    private var previous: GPSTime?
    private var intervals: [Double] = []

    /// Records a fix time; returns the cycle in seconds once two times are known.
    mutating func record(_ time: GPSTime) -> Double? {
        defer { previous = time }
        if let previous {
            let interval = time.secondsSince1970 - previous.secondsSince1970
            // Out of order, repeated or after a long gap: no measure of the cycle.
            if interval > 0, interval <= 60 {
                if intervals.count == Self.window { intervals.removeFirst() }
                intervals.append(interval)
            }
        }
        return intervals.min()
    }
}
