/// Runs a callback after a delay: the timer of a provider's silence watch.
///
/// The server gives its event loop (a timer there wakes that thread alone, which is
/// awake for the device's reads anyway); ``ClockTimers`` sleeps on a ``Clock`` in a task
/// of its own, so that tests drive a provider's time by hand.
public protocol TimerScheduler: Sendable {
    /// Calls `body` once, `delay` from now, unless cancelled first.
    func schedule(in delay: Duration, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer
}

/// A callback scheduled by a ``TimerScheduler``.
public protocol ScheduledTimer: Sendable {
    /// Keeps the callback from running, if it has not yet.
    func cancel()
}

/// Timers as tasks sleeping on a clock.
public struct ClockTimers: TimerScheduler {
    public let clock: any Clock<Duration>

    public init(clock: any Clock<Duration>) {
        self.clock = clock
    }

    public func schedule(in delay: Duration, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        TaskTimer(task: Task { [clock] in
            guard (try? await clock.sleep(for: delay)) != nil else { return }
            body()
        })
    }

    private struct TaskTimer: ScheduledTimer {
        let task: Task<Void, Never>
        func cancel() { task.cancel() }
    }
}
