/// A leap second announced for the end of the current UTC day, numbered as the clock
/// disciplines take it: chrony's SOCK sample (`leap`: 0 none, 1 insert, 2 delete) and
/// ntpd's shared-memory segment (`LEAP_NOWARNING`, `LEAP_ADDSECOND`, `LEAP_DELSECOND`).
///
/// A fix carries it as the receiver said it (``Fix/leapSecondWarning``); the time service
/// hands it on in each sample (``TimeSample/leap``), so that chronyd or ntpd can insert
/// or delete the second at the day's end rather than step over it afterwards.
public enum LeapSecondWarning: Hashable, Sendable {
    /// No leap second at the end of this day, as the receiver said.
    case none
    /// The day's last minute has 61 seconds: 23:59:60 comes before midnight.
    case insertion
    /// The day's last minute has 59 seconds: 23:59:59 is left out.
    case deletion
    /// The receiver says nothing of leap seconds (NMEA has no word for them; a u-blox
    /// before its first NAV-TIMELS): the clock disciplines are told none, as gpsd tells
    /// them, but a pulse that may be an inserted second is not given a number.
    case unknown

    /// The value chrony's SOCK sample (`leap`) and ntpd's shared-memory segment take:
    /// 0 none (and unknown), 1 insertion, 2 deletion.
    public var clockDisciplineValue: Int32 {
        switch self {
        case .none, .unknown: 0
        case .insertion: 1
        case .deletion: 2
        }
    }
}

/// The leap second a receiver has scheduled (u-blox NAV-TIMELS: `lsChange` and
/// `timeToLsEvent`), counted down from epoch to epoch between its announcements, and the
/// warning it gives a fix.
///
/// The warning follows gpsd's rule (`ubx_msg_nav_timels`): a change less than 23 hours
/// and more than nothing ahead warns, nothing else does. So the warning starts in the
/// last day before the event, never earlier, and ends when the event is reached, even
/// when the receiver sends NAV-TIMELS less often than its fixes.
public struct LeapSecondSchedule: Hashable, Sendable {
    /// gpsd's window: an event this close or closer warns.
    public static let warningWindow = Duration.seconds(23 * 3600)

    /// The announced change (`unknown` before the receiver said), and milliseconds from
    /// the epoch last counted to the event.
    private var change: LeapSecondWarning = .unknown
    private var millisecondsToEvent = 0

    public init() {}

    /// A receiver's announcement: `change` +1 (insertion), -1 (deletion) or 0 (none
    /// scheduled), `secondsToEvent` from the epoch it came with (negative once past).
    /// `nil` when the receiver does not know (its `validTimeToLsEvent` flag clear).
    public mutating func announce(change: Int, secondsToEvent: Int32?) {
        guard let secondsToEvent else {
            self = LeapSecondSchedule()
            return
        }
        guard change == 1 || change == -1 else {
            self.change = .none
            return
        }
        self.change = change == 1 ? .insertion : .deletion
        // An Int32 of seconds, as milliseconds, fits an Int many times over.
        millisecondsToEvent = Int(secondsToEvent) * 1000
    }

    /// Time went on by `milliseconds` (from one epoch to the next): the event is that
    /// much closer. An event reached is forgotten.
    public mutating func advance(byMilliseconds milliseconds: Int) {
        guard announcesOne else { return }
        let (remaining, overflow) = millisecondsToEvent.subtractingReportingOverflow(milliseconds)
        if overflow || remaining <= 0 {
            change = .none
        } else {
            millisecondsToEvent = remaining
        }
    }

    /// Whether a leap second is announced (not none, nor unknown).
    private var announcesOne: Bool { change == .insertion || change == .deletion }

    /// The warning for a fix of the epoch counted to last.
    public var warning: LeapSecondWarning {
        guard announcesOne else { return change }
        let window = Int(Self.warningWindow.components.seconds) * 1000
        return millisecondsToEvent > 0 && millisecondsToEvent < window ? change : .none
    }
}

/// The inserted second (23:59:60) of a receiver that gives GPS week and time of week, and
/// the conversion of its times to UTC that names it
/// (``utc(week:milliseconds:leapSeconds:rolloverRule:)``).
///
/// GPS time has no leap seconds: converted by the receiver's count, which it changes only
/// after the inserted second, that second is named as the next midnight, and the clock
/// would be given a sample of it a second off. So a day a fix warned of an insertion
/// (the last day of June or December, when leap seconds end) notes that day and the count
/// then, and the second after it, by that count still, is named 23:59:60. A receiver that
/// names it 23:59:59 again (its count changed early) repeats a second, which gives no
/// sample either.
public struct InsertedSecond: Sendable {
    private var after: (day: Int, leapSeconds: Int)?

    public init() {}

    /// A fix at `time`, converted by `leapSeconds`, carried `warning`. The day's last
    /// count before 23:59:59 decides (one learned from the satellites replaces a
    /// default): a receiver whose count changes in the inserted second names it 23:59:59
    /// again, and that count is the next day's.
    /// `leapSeconds` is the receiver's count, `nil` before it gives one (the default).
    public mutating func note(_ time: GPSTime?, warning: LeapSecondWarning, leapSeconds: Int?) {
        guard warning == .insertion, let time, time.mayEndInLeapSecond else { return }
        let day = time.daysSince1970
        let lastSecond = (time.time.hour, time.time.minute, time.time.second) >= (23, 59, 59)
        guard after?.day != day || !lastSecond else { return }
        after = (day, leapSeconds ?? Self.defaultLeapSeconds)
    }

    /// GPS-UTC leap seconds assumed until a receiver gives its own (gpsd's build default):
    /// right since 2017. A fix timed with it carries no ``Fix/leapSeconds``.
    public static let defaultLeapSeconds = 18

    /// UTC of GPS `week` and `milliseconds` into it, by the receiver's `leapSeconds` (the
    /// default before it gives them), with a lost 1024 weeks restored by `rolloverRule`;
    /// 23:59:60 for the second inserted after a day noted. The drivers that time fixes and
    /// skies in GPS week and time of week convert them here (a u-blox pulse's second, timed
    /// only by the receiver's own leap seconds, is not).
    public func utc(week: Int, milliseconds: Int, leapSeconds: Int?, rolloverRule: RolloverRule) -> GPSTime {
        let leapSeconds = leapSeconds ?? Self.defaultLeapSeconds
        let total = (GPSTime.gpsEpochSince1970 + week * 604_800 - leapSeconds) * 1000 + milliseconds
        return named(rolloverRule.corrected(GPSTime(millisecondsSince1970: total)), leapSeconds: leapSeconds)
    }

    /// `utc`, converted by `leapSeconds`, or 23:59:60 when it is the second after a day
    /// noted with those leap seconds.
    public func named(_ utc: GPSTime, leapSeconds: Int) -> GPSTime {
        guard let after, after.leapSeconds == leapSeconds, utc.daysSince1970 == after.day + 1,
            utc.time.hour == 0, utc.time.minute == 0, utc.time.second == 0
        else { return utc }
        var inserted = utc.time
        (inserted.hour, inserted.minute, inserted.second) = (23, 59, 60)
        return GPSTime(daysSince1970: after.day, time: inserted)
    }
}

extension GPSTime {
    /// Whether this is the last day of June or of December: the days IERS ends with a leap
    /// second when there is one.
    public var mayEndInLeapSecond: Bool { (month, day) == (6, 30) || (month, day) == (12, 31) }
}
