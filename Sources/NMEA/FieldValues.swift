/// A UTC time of day as a sentence gives it (`hhmmss.sss`), exact to the nanosecond.
public struct NMEATime: Hashable, Sendable, Comparable {
    public var hour: UInt8
    public var minute: UInt8
    /// 0...60; 60 only during a leap second.
    public var second: UInt8
    public var nanosecond: UInt32

    public init(hour: UInt8, minute: UInt8, second: UInt8, nanosecond: UInt32 = 0) {
        self.hour = hour
        self.minute = minute
        self.second = second
        self.nanosecond = nanosecond
    }

    /// Nanoseconds since midnight, for ordering and differences.
    public var nanosecondsSinceMidnight: Int64 {
        (Int64(hour) * 3600 + Int64(minute) * 60 + Int64(second)) * 1_000_000_000 + Int64(nanosecond)
    }

    /// Whether `hour`, `minute` and `second` name a time of day: a 61st second only at
    /// 23:59, a leap second.
    public static func isTimeOfDay(hour: Int, minute: Int, second: Int) -> Bool {
        (0..<24).contains(hour) && (0..<60).contains(minute)
            && ((0..<60).contains(second) || (hour == 23 && minute == 59 && second == 60))
    }

    public static func < (lhs: NMEATime, rhs: NMEATime) -> Bool {
        lhs.nanosecondsSinceMidnight < rhs.nanosecondsSinceMidnight
    }
}

/// A calendar date as a sentence gives it. RMC's `ddmmyy` has a two-digit year
/// (``year`` is then 0...99 and ``hasCentury`` is false); ZDA gives four digits.
public struct NMEADate: Hashable, Sendable {
    public var year: Int
    public var month: UInt8
    public var day: UInt8
    /// Whether ``year`` is a full year rather than the last two digits of one.
    public var hasCentury: Bool

    public init(year: Int, month: UInt8, day: UInt8, hasCentury: Bool) {
        self.year = year
        self.month = month
        self.day = day
        self.hasCentury = hasCentury
    }

    /// Whether `day` is a day of `month` in `year` (Gregorian): 31 February, or 29 February
    /// of a common year, is no date though each field alone is in range, and counted as
    /// days it would be another (3 March).
    public static func isDay(_ day: Int, ofMonth month: Int, year: Int) -> Bool {
        let leapYear = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let length = switch month {
        case 2: leapYear ? 29 : 28
        case 4, 6, 9, 11: 30
        case 1...12: 31
        default: 0
        }
        return day >= 1 && day <= length
    }
}

/// A latitude or longitude as the sentence wrote it: `ddmm.mmmm` (or `dddmm.mmmm`) and a
/// hemisphere letter, kept exact until ``degrees`` converts it.
public struct NMEACoordinate: Hashable, Sendable {
    /// The `ddmm.mmmm` number: degrees times 100 plus minutes.
    public var degreesAndMinutes: NMEADecimal
    /// `N`, `S`, `E` or `W`.
    public var hemisphere: UInt8

    public init(degreesAndMinutes: NMEADecimal, hemisphere: UInt8) {
        self.degreesAndMinutes = degreesAndMinutes
        self.hemisphere = hemisphere
    }

    /// Signed decimal degrees: south and west are negative.
    public var degrees: Double {
        let raw = degreesAndMinutes
        let unit = NMEADecimal.powerOfTen(Int(raw.scale))
        // `100 * unit` overflows for 18 fraction digits, where the magnitude (at most 18
        // digits) holds no whole degree.
        let (degree, overflow) = unit.multipliedReportingOverflow(by: 100)
        let wholeDegrees = overflow ? 0 : raw.magnitude / degree
        let minutes = raw.magnitude - wholeDegrees &* degree
        let value = Double(wholeDegrees) + Double(minutes) / (Double(unit) * 60)
        return hemisphere == UInt8(ascii: "S") || hemisphere == UInt8(ascii: "W") ? -value : value
    }
}

/// Why a field could not be read.
public struct NMEADecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the field.
    public enum Problem: Hashable, Sendable {
        /// Not a number where one was expected.
        case notANumber
        /// A number outside what the field allows (a minute of 61, a latitude of 95°).
        case outOfRange
        /// A letter the field does not allow (a hemisphere of `X`).
        case unexpectedCharacter
        /// Fewer fields than the sentence type needs.
        case tooFewFields(minimum: Int)
    }

    /// The address of the sentence (`GPGGA`).
    public var address: SentenceAddress
    /// The index of the field, counting the address as field 0.
    public var field: Int
    public var problem: Problem

    public init(address: SentenceAddress, field: Int, problem: Problem) {
        self.address = address
        self.field = field
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .notANumber: "\(address) field \(field): not a number"
        case .outOfRange: "\(address) field \(field): value out of range"
        case .unexpectedCharacter: "\(address) field \(field): unexpected character"
        case .tooFewFields(let minimum): "\(address): \(field) fields, at least \(minimum) needed"
        }
    }
}
