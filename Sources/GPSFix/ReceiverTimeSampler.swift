/// Decides which fixes give the time service a sample of the receiver's time, as gpsd
/// does: one per receiver second, from a fix of mode 2D or better with a time and a date,
/// whose time the receiver has confirmed (``Fix/timeIsUnconfirmed``),
/// once the receiver has given more than ``minimumFixes`` such fixes in a row (a
/// receiver's first fixes may carry a time it has not yet settled), and never with a
/// date before ``earliestTrustedTime`` (a receiver that lost a 1024-week era, or runs on
/// a stale clock, would set the system's clock back by years) or from
/// ``latestTrustedTime`` on (a two-digit year placed in the wrong century, as an MTK
/// chip's default date `060180` read as 2080, would set it decades ahead).
///
/// A time before the last one sampled gives no sample either: a fix of an earlier second
/// read now (a Trimble's 0x41 can name the second before the pulse 0x8F-AB just timed)
/// would be paired with a read time a second or more after it. Nor does a time further
/// ahead of the last one sampled than the read clock went on, give or take
/// ``jumpTolerance``: one fix dated a day ahead (an RMC of 23:59:59 with the next day's
/// date) would step the clock a day. A receiver whose times stay behind, or ahead, for
/// more than ``minimumFixes`` fixes in a row has stepped its time, and is followed from
/// then on.
///
/// A sample carries the fix's ``Fix/leapSecondWarning`` in June and December only, as
/// gpsd's SHM and SOCK writers do (leap seconds come at the end of those months; a
/// receiver may announce one months ahead). The inserted second itself (23:59:60) gives
/// no sample: the system clock has no number for it (POSIX time gives it the next
/// midnight's), so a sample of it would be a second wrong.
public struct ReceiverTimeSampler: Sendable {
    /// gpsd's `NTP_MIN_FIXES`.
    public static let minimumFixes = 3
    /// 2026-01-01T00:00:00Z: a receiver's date before GPSFix existed is a rollover, not a time.
    public static let defaultEarliestTrustedTime = WallTime(seconds: 1_767_225_600)

    public var earliestTrustedTime: WallTime
    /// One GPS week-number era (1024 weeks, 19.6 years) after ``earliestTrustedTime``: a
    /// receiver's week number says its date only within such an era, so a date past it is
    /// a misplaced century or a misread era, not a time. gpsd trusts such a window from
    /// its build; GPSFix's is from 2026, and ends in August 2045, when a release later
    /// than this one must move it on (``CenturyRule/buildYear`` with it).
    public var latestTrustedTime: WallTime { earliestTrustedTime + .seconds(1024 * 7 * 86_400) }
    /// How much further a receiver's time may have gone on than the read clock since the
    /// last sample: a cycle is read up to a second after its time, and the last was too.
    public static let jumpTolerance = 2
    private var fixesInARow = 0
    /// The last sample's second, and when its fix was read.
    private var last: (second: Int, readAt: WallTime)?
    /// Fixes in a row whose time was out of step with the last sample's.
    private var outOfStepInARow = 0
    /// Fixes whose date was before ``earliestTrustedTime`` or from ``latestTrustedTime`` on.
    public private(set) var distrusted = 0
    /// Confirmed times before the last one sampled, which gave no sample.
    public private(set) var behind = 0
    /// Confirmed times further ahead of the last one sampled than the read clock went on,
    /// which gave no sample.
    public private(set) var ahead = 0

    public init(earliestTrustedTime: WallTime = Self.defaultEarliestTrustedTime) {
        self.earliestTrustedTime = earliestTrustedTime
    }

    /// The sample for `fix`, observed at `readAt`, when it gives one.
    public mutating func sample(for fix: Fix, readAt: WallTime?) -> TimeSample? {
        guard fix.mode >= .twoDimensional, let time = fix.time, !fix.timeIsUnconfirmed else {
            fixesInARow = 0
            outOfStepInARow = 0
            return nil
        }
        fixesInARow += 1
        let real = WallTime(time)
        if let last, let step = outOfStep(real, readAt: readAt, since: last) {
            outOfStepInARow += 1
            guard outOfStepInARow > Self.minimumFixes else {
                switch step {
                case .behind: behind += 1
                case .ahead: ahead += 1
                }
                return nil
            }
            self.last = nil
        }
        outOfStepInARow = 0
        guard let readAt, fixesInARow > Self.minimumFixes, real.seconds != last?.second, !time.isLeapSecond else {
            return nil
        }
        guard real >= earliestTrustedTime, real < latestTrustedTime else {
            distrusted += 1
            return nil
        }
        last = (real.seconds, readAt)
        let leap = time.month == 6 || time.month == 12 ? fix.leapSecondWarning : .none
        return TimeSample(real: real, clock: readAt, leap: leap)
    }

    private enum Step { case behind, ahead }

    /// How `real`, read at `readAt`, is out of step with the last sample: before it, or
    /// further after it than the read clock went on (a time read again has no read time
    /// to judge by, and is judged by the last sample's).
    private func outOfStep(_ real: WallTime, readAt: WallTime?, since last: (second: Int, readAt: WallTime)) -> Step? {
        if real.seconds < last.second { return .behind }
        let elapsed = Int((readAt ?? last.readAt).duration(since: last.readAt).components.seconds)
        return real.seconds - last.second > max(elapsed, 0) + Self.jumpTolerance ? .ahead : nil
    }

    /// The device was lost, fell silent or came back: its next fixes start a new run.
    public mutating func restart() {
        fixesInARow = 0
        last = nil
        outOfStepInARow = 0
    }
}
