import GPSFix
import NIOConcurrencyHelpers
import Synchronization

/// The device's activity and the silence watch over it, shared by the reading and the
/// watch's timer (which may run on another thread).
///
/// While the device sends, the timer is set for at most a timeout after the last
/// sentence: a sentence that finds the deadline less than half a timeout away moves it to
/// a timeout from then, so the timer never comes due while the device sends (at 1 Hz and
/// a 3 s timeout, it is set once every two sentences: in the daemon, a system call in a
/// turn of the event loop the sentence has woken anyway, where a timer left to come due
/// woke the loop every 2 to 3 s). Coming due before a timeout has passed since the last
/// sentence, it sets itself for the rest: the device is silent exactly a timeout after its
/// last sentence. Once it is silent, and before the first sentence, the timer is not set:
/// the next sentence sets it.
///
/// A source held back by its consumer (``ReadingHold``) is not silent: while it is held,
/// and for a whole timeout after it was last let go, the watch only sets itself again.
/// Nor is one whose bytes wait unread: the device sent, and its reader is late (an event
/// loop that took seconds for one turn under a flood of clients, on a loaded machine), for
/// ``unreadLooksAllowed`` timeouts at most.
final class DeviceActivity: Sendable {
    private struct State {
        var lastSentence = Duration.zero
        /// The watch's timer, made with the first sentence.
        var timer: (any DeadlineTimer)?
        /// When the timer comes due, while it is set.
        var deadline: Duration?
        var stopped = false
        /// The hold's release count when the watch last looked.
        var releasesSeen = 0
        /// Timeouts in a row that found bytes waiting and no sentence since.
        var unreadLooks = 0
    }

    /// How many timeouts in a row bytes waiting unread put a silence off: a reader late by
    /// that much is stuck, and bytes that never make a sentence (a wrong speed) are no sign
    /// of life.
    static let unreadLooksAllowed = 3

    /// Time on the provider's clock since the activity began.
    private let elapsed: @Sendable () -> Duration
    private let timers: any TimerScheduler
    let timeout: Duration
    /// How near its deadline a sentence moves the timer: half the timeout.
    private let movedWithin: Duration
    private let reportSilence: @Sendable () -> Void
    /// Touched by the reader's thread and the timers' loop: behind a pthread mutex, which
    /// ThreadSanitizer sees.
    private let state = NIOLockedValueBox(State())
    /// Reported silent, and no sentence since: an atomic, read for every sentence.
    private let silent = Atomic<Bool>(false)
    /// The consumer's hold on a source that can wait; `nil` for one that cannot.
    private let hold: ReadingHold?
    /// Whether the source's bytes wait unread.
    private let hasUnreadInput: @Sendable () -> Bool

    init<C: Clock<Duration>>(
        clock: C, timers: any TimerScheduler, timeout: Duration, hold: ReadingHold?,
        hasUnreadInput: @escaping @Sendable () -> Bool, reportSilence: @escaping @Sendable () -> Void
    ) {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        self.timers = timers
        self.timeout = timeout
        movedWithin = timeout / 2
        self.hold = hold
        self.hasUnreadInput = hasUnreadInput
        self.reportSilence = reportSilence
    }

    /// Time on the provider's clock since the activity began.
    var now: Duration { elapsed() }

    /// Sentences arrived (called by the reader for each chunk that had some).
    func record() {
        let now = elapsed()
        state.withLockedValue { state in
            state.lastSentence = now
            state.unreadLooks = 0
            guard !state.stopped else { return }
            if let deadline = state.deadline, deadline - now >= movedWithin { return }
            set(&state, in: timeout, from: now)
        }
    }

    /// The event announcing that a silent device sends again, once per silence.
    func takeResumption(of device: String) -> DeviceEvent? {
        guard silent.load(ordering: .relaxed), silent.exchange(false, ordering: .acquiring) else { return nil }
        return DeviceEvent(device: device, kind: .resumed)
    }

    /// Stops the watch: no silence is reported after this.
    func stop() {
        state.withLockedValue { state in
            state.stopped = true
            state.timer?.stop()
            state.timer = nil
            state.deadline = nil
        }
    }

    private func set(_ state: inout State, in delay: Duration, from now: Duration) {
        let timer = state.timer ?? timers.makeTimer { [weak self] in self?.fire() }
        state.timer = timer
        state.deadline = now + delay
        timer.set(in: delay)
    }

    private func fire() {
        let now = elapsed(), held = hold?.isHolding ?? false, releases = hold?.releaseCount ?? 0
        let waiting = hasUnreadInput()
        let isSilent = state.withLockedValue { state -> Bool in
            guard !state.stopped else { return false }
            // A reading held back by its consumer (a lagging client), now or since the
            // last look, is not silence: the time counts from when it was let go. Bytes
            // waiting unread are not either: the time counts from this look.
            let unread = waiting && state.unreadLooks < Self.unreadLooksAllowed && now >= state.lastSentence + timeout
            if unread { state.unreadLooks += 1 }
            let wasHeld = held || unread || releases != state.releasesSeen
            state.releasesSeen = releases
            let deadline = wasHeld ? now + timeout : state.lastSentence + timeout
            if deadline > now {
                set(&state, in: deadline - now, from: now)
                return false
            }
            state.deadline = nil
            return true
        }
        guard isSilent else { return }
        reportSilence()
        // Only now: a sentence before it would be announced ahead of the silence.
        silent.store(true, ordering: .releasing)
    }
}
