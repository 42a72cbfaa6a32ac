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

    /// Seconds since the Unix epoch, with the fraction.
    public var secondsSince1970: Double {
        Double(daysSince1970 * 86_400) + Double(time.nanosecondsSinceMidnight) / 1e9
    }

    public static func < (lhs: GPSTime, rhs: GPSTime) -> Bool {
        (lhs.daysSince1970, lhs.time) < (rhs.daysSince1970, rhs.time)
    }
}

/// Turns RMC's two-digit years into full years.
///
/// The rule, in order: a century given explicitly (a log's `# Date:` header, or a ZDA
/// sentence from the same receiver) wins; otherwise years 80-99 are 1980-1999 and
/// 00-79 are 2000-2079 (GPS began in 1980). No GPS week-rollover correction is applied:
/// GPSFix reports the date the receiver sent, where gpsd 3.22 guesses and moves some
/// captures forward by 1024 weeks.
public struct CenturyRule: Hashable, Sendable {
    /// The full year that the two-digit years are placed nearest to, when known.
    public var referenceYear: Int?

    public init(referenceYear: Int? = nil) {
        self.referenceYear = referenceYear
    }

    /// The full year for a two-digit `year`.
    public func fullYear(_ year: Int) -> Int {
        guard let referenceYear else { return year >= 80 ? 1900 + year : 2000 + year }
        let century = referenceYear - referenceYear % 100
        let candidates = [century - 100 + year, century + year, century + 100 + year]
        return candidates.min { abs($0 - referenceYear) < abs($1 - referenceYear) }!
    }
}
