#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import GPSFixDevices
import Synchronization

/// Where pulse-per-second edges come from: the kernel's PPS API, a serial line's
/// carrier detect, or a fake in tests.
public protocol PulseSource: Sendable {
    /// The source as logs name it: `/dev/pps0`, `DCD of /dev/ttyS0`.
    var name: String { get }

    /// The edges, from now until the source fails (throws) or the consumer stops.
    func pulses() -> AsyncThrowingStream<PulseEdge, any Error>
}

/// One assert edge of a pulse source, and what the source dropped before it.
public struct PulseEdge: Sendable, Equatable {
    /// The system clock (`CLOCK_REALTIME`) at the edge: the start of a receiver second.
    public var time: WallTime
    /// The edges the source had dropped, in all, when it sent this one, because they came
    /// faster than they were taken (a noisy carrier-detect line, a pulse set far faster
    /// than once a second): the consumer counts them from the difference. A drop that
    /// sending this edge caused is counted with the next.
    public var droppedBefore: Int

    /// An edge at `time`; a source that drops none leaves `droppedBefore` at 0.
    public init(time: WallTime, droppedBefore: Int = 0) {
        self.time = time
        self.droppedBefore = droppedBefore
    }
}

/// Why a pulse was not sent to the clock.
public enum PulseRejection: String, Error, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// No receiver time to pair it with: the device has had no fix for more than
    /// ``PulsePairing/fixTimeout`` (or never had one), or it is silent.
    case noFix = "no fix"
    /// The receiver's last time was read more than ``PulsePairing/maximumDelay`` before
    /// the pulse: the second the pulse marks cannot be named.
    case late
    /// The pulse came before the receiver time it would be paired with was read.
    case early
    /// The pulse marks an inserted leap second (23:59:60), which the system clock's count
    /// of seconds has no number of its own for: its sample would be a second wrong. Or it
    /// may: the receiver cannot warn of one, and the day is the last of June or December.
    case leapSecond = "leap second"
    /// A second edge for a second already paired: noise on the line (a bouncing carrier
    /// detect), or a pulse set faster than once a second. Only a second's first is sent,
    /// so that the clock gets one sample a second, as from gpsd.
    case repeated
    /// Edges came faster than they were paired, and the source kept only the newest
    /// four: not a pulse a second.
    case overrun
    /// Held for the receiver's word on it (Trimble 0x8F-AB/0x8F-AC), which never came, and
    /// the next pulse came more than ``PulsePairing/maximumOverdue`` after it (the pulses
    /// stopped a while), or before it (the clock was stepped back): a clock is given no
    /// sample that old.
    case stale

    public var description: String { rawValue }
}

/// Pairs pulses with the receiver's time, as gpsd does: a receiver sends the time of a
/// second after that second's pulse, so a pulse marks the second after the last receiver
/// time read before it. The pair holds only when that time was read less than
/// ``maximumDelay`` before the pulse. A pulse's sample warns of the leap second that
/// receiver time warned of, as gpsd's pulse samples carry its one leap notice; at the
/// warned end of the day, the pulse of an inserted second is dropped and the one after a
/// deleted second's eve marks midnight.
///
/// A receiver that speaks of its pulses after them (Trimble's 0x8F-AB and 0x8F-AC) has
/// each pulse held, once it has spoken of the one before, until its word on that pulse
/// comes; a pulse whose word does not come by the next pulse goes uncorrected.
public struct PulsePairing: Sendable {
    /// A pulse more than this after the last receiver time is not paired (late).
    public static let maximumDelay = Duration.seconds(1)
    /// Past this without a receiver time, the device counts as having no fix.
    public static let fixTimeout = Duration.seconds(2)
    /// A pulse held for the receiver's word on it is sent uncorrected when the next pulse
    /// comes without that word, if that pulse comes at most this after it: one a second,
    /// or two with an edge lost between, and the edges' jitter.
    public static let maximumOverdue = Duration.milliseconds(2500)

    private var lastReceiverTime: TimeSample?
    /// The receiver's last word on its next pulse.
    private var announcement: PulseAnnouncement?
    /// The receiver's last word on a pulse just past.
    private var pastAnnouncement: PulseAnnouncement?
    /// A pulse paired and waiting for the receiver's word on it.
    private var held: TimeSample?
    /// The second the last pulse paired marks (given to ``hold(_:)``).
    private var lastPairedSecond: Int?

    public init() {}

    /// A pulse's sample, and the quantisation error applied to it when there was one.
    public typealias Paired = (sample: TimeSample, correction: Duration?)

    /// The receiver's time for a cycle, as sent to the clock.
    public mutating func note(_ sample: TimeSample) {
        lastReceiverTime = sample
    }

    /// The receiver's word on a pulse. On its next one: the pulse that marks that second
    /// will be corrected by the quantisation error. On the one just past: the held pulse
    /// of that second, corrected, to send now.
    @discardableResult
    public mutating func note(_ announcement: PulseAnnouncement) -> Paired? {
        switch announcement.pulse {
        case .next:
            self.announcement = announcement
            return nil
        case .past:
            pastAnnouncement = announcement
            guard let pulse = held, pulse.real.seconds == announcement.second else { return nil }
            held = nil
            return Self.corrected(pulse, by: announcement)
        }
    }

    /// A paired pulse, to send now (corrected if the receiver's word on it came already),
    /// or held (`nil`) for that word when the receiver spoke of the pulse before after it.
    public mutating func hold(_ pulse: Paired) -> Paired? {
        lastPairedSecond = pulse.sample.real.seconds
        guard let past = pastAnnouncement else { return pulse }
        if past.second == pulse.sample.real.seconds { return Self.corrected(pulse.sample, by: past) }
        guard past.second == pulse.sample.real.seconds - 1 else { return pulse }
        held = pulse.sample
        return nil
    }

    /// What an edge at `clock` does, as the time service takes it: the pulse held before
    /// it, when this is the next pulse and the receiver's word on that one did not come
    /// (to send uncorrected); and this pulse, to send now, held (`nil`) for the receiver's
    /// word, or why it gives none. A further edge of a second already paired is noise, not
    /// the next pulse: it leaves the held pulse held.
    public mutating func take(_ clock: WallTime)
        -> (overdue: Result<TimeSample, PulseRejection>?, pulse: Result<Paired?, PulseRejection>)
    {
        let paired = pairWithCorrection(clock)
        if case .failure(.repeated) = paired { return (nil, .failure(.repeated)) }
        let overdue = takeOverdue(at: clock)
        return (overdue, paired.map { hold($0) })
    }

    /// The held pulse, when the next pulse, at `clock`, came before the receiver's word on
    /// it: to send uncorrected, or ``PulseRejection/stale`` when that pulse came more than
    /// ``maximumOverdue`` after it, or before it (the system clock was stepped back since:
    /// the held pulse's reading belongs to the clock as it was).
    public mutating func takeOverdue(at clock: WallTime) -> Result<TimeSample, PulseRejection>? {
        guard let pulse = held else { return nil }
        held = nil
        let age = clock.duration(since: pulse.clock)
        return age > .zero && age <= Self.maximumOverdue ? .success(pulse) : .failure(.stale)
    }

    /// The edge came `quantisationError` before the second's true start: the system clock
    /// read `clock + quantisationError` at that start.
    private static func corrected(_ pulse: TimeSample, by announcement: PulseAnnouncement) -> Paired {
        let correction = announcement.quantisationError
        return (TimeSample(real: pulse.real, clock: pulse.clock + correction, leap: pulse.leap), correction)
    }

    /// The sample a pulse at `clock` gives, or why it gives none.
    public func pair(_ clock: WallTime) -> Result<TimeSample, PulseRejection> {
        pairWithCorrection(clock).map(\.sample)
    }

    /// The sample a pulse at `clock` gives, with the quantisation error applied to it
    /// when the receiver announced one for that second, or why it gives none (`repeated`
    /// when a pulse of that second was paired already: given to ``hold(_:)``).
    public func pairWithCorrection(_ clock: WallTime) -> Result<Paired, PulseRejection> {
        guard let last = lastReceiverTime else { return .failure(.noFix) }
        let delay = clock.duration(since: last.clock)
        if delay <= .zero { return .failure(.early) }
        if delay > Self.fixTimeout { return .failure(.noFix) }
        if delay > Self.maximumDelay { return .failure(.late) }
        var second = last.real.seconds + 1
        if second % 86_400 == 0,
            last.leap == .insertion || last.leap == .unknown && GPSTime(millisecondsSince1970: (second - 1) * 1000).mayEndInLeapSecond
        {
            return .failure(.leapSecond)
        }
        if second % 86_400 == 86_399, last.leap == .deletion { second += 1 }  // 23:59:59 left out
        if second == lastPairedSecond { return .failure(.repeated) }
        // A warning is for the end of the day it came in: a pulse that begins the next
        // (after a deleted second) carries none.
        let sample = TimeSample(real: WallTime(seconds: second), clock: clock, leap: second % 86_400 == 0 ? .none : last.leap)
        guard let announcement, announcement.second == second else { return .success((sample, nil)) }
        return .success(Self.corrected(sample, by: announcement))
    }
}

/// The thread a pulse source waits on: its blocking calls (`PPS_FETCH`, `TIOCMIWAIT`)
/// run on a thread of their own, named `gpsfix-pps`, never on the cooperative pool.
enum PulseThread {
    /// The edges waiting to be paired, at most: a pulse a second is taken long before the
    /// next; past this, the oldest are dropped and counted (``PulseEdge/droppedBefore``).
    static let capacity = 4

    /// Runs `wait` on a new thread; it sends edges through the outlet, checks `isStopped`
    /// (the consumer has left) between its waits, and finishes the outlet.
    static func pulses(
        of source: String, _ wait: @escaping @Sendable (PulseOutlet, _ isStopped: @escaping @Sendable () -> Bool) -> Void
    ) -> AsyncThrowingStream<PulseEdge, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: PulseEdge.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(capacity))
        let stopped = StopFlag()
        continuation.onTermination = { _ in stopped.stop() }
        let outlet = PulseOutlet(continuation)
        if !DeviceThread.start(named: "gpsfix-pps", { wait(outlet, { stopped.isStopped }) }) {
            continuation.finish(throwing: PulseSourceError.system(path: source, call: "pthread_create", errno: EAGAIN))
        }
        return stream
    }

    private final class StopFlag: Sendable {
        private let flag = Atomic<Bool>(false)
        var isStopped: Bool { flag.load(ordering: .acquiring) }
        func stop() { flag.store(true, ordering: .releasing) }
    }
}

/// What a pulse thread sends its edges through: each carries the count of the edges
/// dropped before it, for the consumer to count. Used from that one thread only.
final class PulseOutlet: @unchecked Sendable {
    private let continuation: AsyncThrowingStream<PulseEdge, any Error>.Continuation
    private var dropped = 0

    init(_ continuation: AsyncThrowingStream<PulseEdge, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// Sends the edge at `time`; the oldest waiting is dropped when the stream is full.
    func send(_ time: WallTime) {
        if case .dropped = continuation.yield(PulseEdge(time: time, droppedBefore: dropped)) { dropped += 1 }
    }

    func finish(throwing error: (any Error)? = nil) {
        continuation.finish(throwing: error)
    }
}
