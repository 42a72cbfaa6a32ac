@testable import GPSFixDevices
import TestSupport
import Testing

/// The silence watch's timer: what it costs while a device sends, and when it reports.
@Suite("Silence watch")
struct SilenceWatchTests {
    /// A device's activity with a 3 s watch on hand-driven timers, and its silences counted.
    private static func watch() -> (HandTimers, Locked<Int>, DeviceActivity) {
        let clock = ManualClock()
        let timers = HandTimers(clock: clock)
        let silences = Locked(0)
        let activity = DeviceActivity(
            clock: clock, timers: timers, timeout: .seconds(3), hold: nil, hasUnreadInput: { false },
            reportSilence: { silences.withLock { $0 += 1 } })
        return (timers, silences, activity)
    }

    @Test("a device sending once a second never lets the watch's timer come due: it is set once every two sentences")
    func timerNeverComesDueWhileTheDeviceSends() {
        let (timers, silences, activity) = Self.watch()
        for _ in 0..<30 {
            activity.record()
            timers.advance(by: .seconds(1))
        }
        #expect(timers.cameDue == 0)
        #expect(timers.settings == 15)
        #expect(silences.withLock { $0 } == 0)
    }

    @Test("moved ahead as the device sends, the watch still reports its silence exactly a timeout after the last sentence")
    func silentExactlyATimeoutAfterTheLastSentence() {
        let (timers, silences, activity) = Self.watch()
        for second in 0..<10 {
            activity.record()
            if second < 9 { timers.advance(by: .seconds(1)) }
        }
        // The last sentence at 9 s: silent at 12 s, not a tenth of a second before.
        timers.advance(by: .milliseconds(2900))
        #expect(silences.withLock { $0 } == 0)
        timers.advance(by: .milliseconds(100))
        #expect(silences.withLock { $0 } == 1)
        // Set at 8 s for 11 s, it came due then and was set for the second left.
        #expect(timers.cameDue == 2)
        // Silent, the watch leaves its timer unset until the next sentence.
        timers.advance(by: .seconds(30))
        #expect(timers.cameDue == 2)
        activity.record()
        #expect(timers.isSet)
        activity.stop()
        #expect(!timers.isSet)
    }
}

/// Timers on a ``ManualClock`` that the test brings due by moving the clock, counting how
/// often they were set and how often they came due.
private final class HandTimers: TimerScheduler, Sendable {
    private struct Timer {
        var body: @Sendable () -> Void
        var deadline: ManualClock.Instant?
        var stopped = false
    }

    private struct State {
        var timers: [Timer] = []
        var settings = 0
        var cameDue = 0
    }

    private let clock: ManualClock
    private let state = Locked(State())

    init(clock: ManualClock) {
        self.clock = clock
    }

    var settings: Int { state.withLock { $0.settings } }
    var cameDue: Int { state.withLock { $0.cameDue } }
    /// Whether any timer has a deadline.
    var isSet: Bool { state.withLock { $0.timers.contains { $0.deadline != nil && !$0.stopped } } }

    func makeTimer(_ body: @escaping @Sendable () -> Void) -> any DeadlineTimer {
        let index = state.withLock { state in
            state.timers.append(Timer(body: body))
            return state.timers.count - 1
        }
        return HandTimer(owner: self, index: index)
    }

    /// Moves the clock, running each timer whose deadline it passes, in order.
    func advance(by duration: Duration) {
        let end = clock.now.advanced(by: duration)
        while true {
            let due = state.withLock { state -> (Int, ManualClock.Instant)? in
                let pending = state.timers.indices.compactMap { index in
                    state.timers[index].deadline.map { (index, $0) }
                }
                guard let next = pending.min(by: { $0.1 < $1.1 }), next.1 <= end else { return nil }
                state.timers[next.0].deadline = nil
                state.cameDue += 1
                return next
            }
            guard let (index, deadline) = due else { break }
            clock.advance(by: clock.now.duration(to: deadline))
            state.withLock { $0.timers[index].body }()
        }
        clock.advance(by: clock.now.duration(to: end))
    }

    fileprivate func set(_ index: Int, in delay: Duration) {
        let now = clock.now
        state.withLock { state in
            guard !state.timers[index].stopped else { return }
            state.timers[index].deadline = now.advanced(by: delay)
            state.settings += 1
        }
    }

    fileprivate func stop(_ index: Int) {
        state.withLock { state in
            state.timers[index].stopped = true
            state.timers[index].deadline = nil
        }
    }

    private struct HandTimer: DeadlineTimer {
        let owner: HandTimers
        let index: Int
        func set(in delay: Duration) { owner.set(index, in: delay) }
        func stop() { owner.stop(index) }
    }
}
