/// A moment in UTC, or a reading of the system's real-time clock (`CLOCK_REALTIME`, which
/// counts UTC): whole seconds since 1970 and nanoseconds, exactly, as the time service's
/// consumers (chrony, ntpd's shared memory, gpsd's TOFF and PPS reports) take them.
public struct WallTime: Hashable, Sendable, Comparable {
    public var seconds: Int
    /// 0 to 999,999,999.
    public var nanoseconds: Int

    public init(seconds: Int, nanoseconds: Int = 0) {
        self.seconds = seconds + nanoseconds / 1_000_000_000
        self.nanoseconds = nanoseconds % 1_000_000_000
        if self.nanoseconds < 0 {
            self.seconds -= 1
            self.nanoseconds += 1_000_000_000
        }
    }

    /// A receiver's time: the UTC time of a fix.
    public init(_ time: GPSTime) {
        self.init(seconds: time.daysSince1970 * 86_400, nanoseconds: Int(time.time.nanosecondsSinceMidnight))
    }

    public static func < (lhs: WallTime, rhs: WallTime) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `self - other`, exactly.
    public func duration(since other: WallTime) -> Duration {
        .seconds(seconds - other.seconds) + .nanoseconds(nanoseconds - other.nanoseconds)
    }

    public static func + (time: WallTime, duration: Duration) -> WallTime {
        let (seconds, attoseconds) = duration.components
        return WallTime(seconds: time.seconds + Int(seconds), nanoseconds: time.nanoseconds + Int(attoseconds / 1_000_000_000))
    }

    public static func - (time: WallTime, duration: Duration) -> WallTime { time + (.zero - duration) }
}

/// A true time and the system clock's reading at that moment: what a clock discipline
/// (chrony, ntpd) needs from a receiver. `real - clock` is the system clock's error.
public struct TimeSample: Hashable, Sendable {
    /// The true time: the receiver's UTC for a cycle, or the second a pulse marks.
    public var real: WallTime
    /// The system clock when that time was observed: when the cycle's first timed
    /// sentence was read from the device, or when the pulse's edge was captured.
    public var clock: WallTime
    /// A leap second due at the end of `real`'s UTC day, which the clock discipline is
    /// told with the sample (chrony's SOCK `leap`, the SHM segment's `leap`).
    public var leap: LeapSecondWarning

    public init(real: WallTime, clock: WallTime, leap: LeapSecondWarning = .none) {
        self.real = real
        self.clock = clock
        self.leap = leap
    }
}

/// What a receiver says of a pulse: the UTC second it marks, and how far from that
/// second's true start its edge is. A receiver places its pulse on its own oscillator's
/// ticks, so each pulse is early or late by up to a tick (about 20 ns on a u-blox 8); the
/// time service moves the pulse's sample by this much. u-blox's TIM-TP speaks of the next
/// pulse, before it; Trimble's 0x8F-AB and 0x8F-AC of the pulse just past, after it.
public struct PulseAnnouncement: Hashable, Sendable {
    /// Which pulse an announcement speaks of, and so whether it comes before or after it.
    public enum Pulse: Hashable, Sendable {
        /// The receiver's next pulse: announced before its edge (u-blox TIM-TP).
        case next
        /// The pulse just past: announced after its edge (Trimble 0x8F-AB with 0x8F-AC).
        case past
    }

    /// The UTC second, since 1970, the pulse marks.
    public var second: Int
    /// How far the pulse's edge comes before the second's true start (u-blox's qErr,
    /// positive when the edge is early): the true start is the edge plus this.
    public var quantisationError: Duration
    /// Whether the pulse is still to come or has just been.
    public var pulse: Pulse

    /// A quantisation error of a microsecond or more (a million picoseconds) is no tick
    /// of any receiver's oscillator (a u-blox 8's are about 20 ns, a Trimble's a few): a
    /// damaged or misread message, which would move the pulse's sample by as much.
    public static let quantisationErrorLimit = 1_000_000.0

    /// A receiver's quantisation error of `picoseconds` (u-blox's unit) as a duration;
    /// `nil` at ``quantisationErrorLimit`` or past it either way, or not a number.
    public static func quantisationError(picoseconds: Double) -> Duration? {
        guard abs(picoseconds) < quantisationErrorLimit else { return nil }
        // A million attoseconds a picosecond.
        return Duration(secondsComponent: 0, attosecondsComponent: Int64(picoseconds.rounded()) * 1_000_000)
    }

    public init(second: Int, quantisationError: Duration, pulse: Pulse = .next) {
        self.second = second
        self.quantisationError = quantisationError
        self.pulse = pulse
    }
}

/// What the time service did with a sample, for gpsd-protocol watchers that asked for
/// `"pps":true`: a `TOFF` report for receiver time, a `PPS` report for a pulse.
public struct TimeReport: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// Receiver time against the system clock (gpsd's `TOFF`).
        case receiverTime
        /// A pulse against the system clock (gpsd's `PPS`).
        case pulse
    }

    public var kind: Kind
    public var sample: TimeSample
    /// The sample's precision as a power of two seconds (-1: half a second; -20: a microsecond).
    public var precision: Int
    /// The NTP shared-memory segment the sample went to (`NTP0`), when one did.
    public var sharedMemoryUnit: Int?
    /// The receiver's quantisation error applied to a pulse's sample, when it gave one
    /// (gpsd's `qErr`, in picoseconds).
    public var quantisationError: Duration?

    public init(
        kind: Kind, sample: TimeSample, precision: Int, sharedMemoryUnit: Int? = nil, quantisationError: Duration? = nil
    ) {
        self.kind = kind
        self.sample = sample
        self.precision = precision
        self.sharedMemoryUnit = sharedMemoryUnit
        self.quantisationError = quantisationError
    }
}
