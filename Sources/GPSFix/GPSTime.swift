import NMEA

/// A UTC instant as a receiver reports it: a calendar date and a time of day.
///
/// Kept as the receiver's own fields (no floating point, no time zone) so that printing
/// it gives back exactly what was received; ``secondsSince1970`` is for arithmetic.
public struct GPSTime: Hashable, Sendable, Comparable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var time: NMEATime

    public init(year: Int, month: Int, day: Int, time: NMEATime) {
        self.year = year
        self.month = month
        self.day = day
        self.time = time
    }

    /// Days since 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's algorithm).
    public var daysSince1970: Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Seconds from 1970-01-01 to the GPS epoch, 1980-01-06T00:00:00Z: GPS week 0, second 0.
    public static let gpsEpochSince1970 = 315_964_800

    /// The UTC time `milliseconds` after 1970-01-01T00:00:00Z.
    public init(millisecondsSince1970 milliseconds: Int) {
        let seconds = milliseconds.floorDivided(by: 1000)
        let secondOfDay = seconds - seconds.floorDivided(by: 86_400) * 86_400
        let time = NMEATime(
            hour: UInt8(secondOfDay / 3600), minute: UInt8(secondOfDay / 60 % 60), second: UInt8(secondOfDay % 60),
            nanosecond: UInt32(milliseconds - seconds * 1000) * 1_000_000)
        self.init(daysSince1970: seconds.floorDivided(by: 86_400), time: time)
    }

    /// The date `days` after 1970-01-01 at `time` (the inverse of ``daysSince1970``).
    public init(daysSince1970 days: Int, time: NMEATime) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        self.init(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day, time: time)
    }

    /// Whether this is an inserted leap second: 23:59:60, which a receiver reports as such.
    public var isLeapSecond: Bool { time.second == 60 }

    /// The time as POSIX time (and gpsd, through `mkgmtime`) names it: an inserted second
    /// (23:59:60) as the next day's 00:00:00, every other time as it is. gpsd's clients
    /// never see a second 60, and many would refuse one (Python's `datetime`, a
    /// JavaScript `Date`), so gpsd's reports give this.
    public var posixNamed: GPSTime {
        guard isLeapSecond else { return self }
        var next = GPSTime(daysSince1970: daysSince1970 + 1, time: time)
        next.time.hour = 0
        next.time.minute = 0
        next.time.second = 0
        return next
    }

    /// Seconds since the Unix epoch, with the fraction.
    public var secondsSince1970: Double {
        Double(daysSince1970 * 86_400) + Double(time.nanosecondsSinceMidnight) / 1e9
    }

    public static func < (lhs: GPSTime, rhs: GPSTime) -> Bool {
        (lhs.daysSince1970, lhs.time) < (rhs.daysSince1970, rhs.time)
    }
}

/// Corrects dates from receivers hit by the GPS week rollover, by an explicit rule.
///
/// GPS counts weeks in ten bits, so an old receiver's date can be 1024 weeks (about 19.6
/// years), or a multiple of it, in the past. When GPSFix knows today's date (a log's
/// `# Date:` header, or the host's clock when the daemon is told to trust it), a
/// receiver date that lands within ``tolerance`` days of it after adding 1, 2 or 3 times
/// 1024 weeks is moved forward by that much. With no reference date, dates are reported
/// exactly as received. (gpsd 3.22 instead guesses from its own build date.)
public struct RolloverRule: Hashable, Sendable {
    /// Today's date as days since 1970, when known.
    public var referenceDay: Int?
    /// How far from the reference a corrected date may land, in days.
    public var tolerance = 7

    public static let weeksPerEra = 1024

    public init(referenceDay: Int? = nil) {
        self.referenceDay = referenceDay
    }

    /// `time`, moved forward by whole 1024-week eras when the rule applies.
    public func corrected(_ time: GPSTime) -> GPSTime {
        guard let referenceDay else { return time }
        let day = time.daysSince1970
        for eras in 1...3 {
            let shifted = day + eras * Self.weeksPerEra * 7
            if abs(shifted - referenceDay) <= tolerance { return GPSTime(daysSince1970: shifted, time: time.time) }
        }
        return time
    }
}

/// Turns RMC's two-digit years into full years.
///
/// The rule, in order: a year given explicitly (a log's `# Date:` header, or a ZDA
/// sentence from the same receiver) wins, the two digits placed in the century nearest
/// to it; otherwise they are years of the century GPSFix was built in (``buildYear``), as
/// gpsd places them in its build's century: built in 2026, `80` is 2080, not 1980. No
/// GPS week-rollover correction is applied: GPSFix reports the date the receiver sent,
/// where gpsd 3.22 guesses and moves some dates by multiples of 1024 weeks (its `80` is
/// 2080, then reported as 1999).
public struct CenturyRule: Hashable, Sendable {
    /// The year this release of GPSFix was built, whose century two-digit years fall in
    /// when nothing says otherwise (gpsd's `BUILD_CENTURY`). Moved on with each release;
    /// only its century matters.
    public static let buildYear = 2026

    /// The full year that the two-digit years are placed nearest to, when known.
    public var referenceYear: Int?

    public init(referenceYear: Int? = nil) {
        self.referenceYear = referenceYear
    }

    /// The full year for a two-digit `year`.
    public func fullYear(_ year: Int) -> Int {
        guard let referenceYear else { return Self.buildYear - Self.buildYear % 100 + year }
        let century = referenceYear - referenceYear % 100
        let candidates = [century - 100 + year, century + year, century + 100 + year]
        return candidates.min { abs($0 - referenceYear) < abs($1 - referenceYear) }!
    }
}

extension Int {
    /// Division rounding towards negative infinity (times before 1970 stay on their day).
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
