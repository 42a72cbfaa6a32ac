import NIOConcurrencyHelpers

/// Makes the timer of a provider's silence watch.
///
/// The server gives its event loop (the timer's expiry wakes that thread alone, which is
/// awake for the device's reads anyway); ``ClockTimers`` sleeps on a ``Clock`` in a task
/// of its own, so that tests drive a provider's time by hand.
public protocol TimerScheduler: Sendable {
    /// A timer, not yet set, that calls `body` each time a deadline set on it passes.
    func makeTimer(_ body: @escaping @Sendable () -> Void) -> any DeadlineTimer
}

/// A timer whose deadline moves: set again before it passes, the earlier deadline is
/// forgotten (though a callback for it may already be under way, on another thread).
public protocol DeadlineTimer: Sendable {
    /// Sets the deadline `delay` from now, in place of any set before.
    func set(in delay: Duration)

    /// Stops the timer for good: no deadline passes after this (a callback already under
    /// way may still finish).
    func stop()
}

/// Timers as tasks sleeping on a clock.
public struct ClockTimers: TimerScheduler {
    public let clock: any Clock<Duration>

    public init(clock: any Clock<Duration>) {
        self.clock = clock
    }

    public func makeTimer(_ body: @escaping @Sendable () -> Void) -> any DeadlineTimer {
        TaskTimer(body: body) { [clock] delay, body in
            let task = Task {
                guard (try? await clock.sleep(for: delay)) != nil else { return }
                body()
            }
            return { task.cancel() }
        }
    }
}

/// A timer made of one scheduled task at a time: each setting schedules one and cancels
/// the one before. What schedules them still wakes for a task cancelled (a sleeping task
/// wakes to end; SwiftNIO's loop wakes at a cancelled task's deadline).
public final class TaskTimer: DeadlineTimer {
    /// Schedules `body` to run `delay` from now; returns what cancels it.
    public typealias Schedule = @Sendable (
        _ delay: Duration, _ body: @escaping @Sendable () -> Void
    ) -> @Sendable () -> Void

    private struct State {
        var cancel: (@Sendable () -> Void)?
        var stopped = false
    }

    private let body: @Sendable () -> Void
    private let schedule: Schedule
    /// Behind a pthread mutex, which ThreadSanitizer sees.
    private let state = NIOLockedValueBox(State())

    public init(body: @escaping @Sendable () -> Void, schedule: @escaping Schedule) {
        self.body = body
        self.schedule = schedule
    }

    public func set(in delay: Duration) {
        state.withLockedValue { state in
            state.cancel?()
            guard !state.stopped else { return }
            state.cancel = schedule(delay, body)
        }
    }

    public func stop() {
        state.withLockedValue { state in
            state.stopped = true
            state.cancel?()
            state.cancel = nil
        }
    }
}
