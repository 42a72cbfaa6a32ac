import NIOConcurrencyHelpers
import NIOCore

/// A clock whose sleeps are timers on a SwiftNIO event loop: the daemon's sleeping tasks
/// (its status log, its backoffs, the demo's pace, the service manager's ticks) wake the
/// loop, which the daemon's tasks run on, and never start libdispatch.
///
/// `Task.sleep` and `ContinuousClock` sleep on libdispatch's timers, even for a task that
/// runs on an event loop; its first worker thread starts a monitor thread that wakes once
/// a second for the rest of the process's life, reading `/proc` for every worker.
public struct EventLoopClock: Clock {
    /// `ContinuousClock`'s instants: a sleep's length is measured on it when the sleep
    /// starts, and the loop's timer (on the monotonic clock) counts it down, so a machine
    /// suspended meanwhile wakes the sleeper later than the deadline by the time it slept.
    public typealias Instant = ContinuousClock.Instant

    /// The loop whose timers wake the sleepers.
    public let eventLoop: any EventLoop

    /// A clock whose sleepers `eventLoop` wakes.
    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// `ContinuousClock`'s now.
    public var now: Instant { .now }

    /// `ContinuousClock`'s resolution.
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    /// Sleeps until `deadline` (the tolerance is not used: the loop's timers are exact);
    /// throws `CancellationError` as soon as the task is cancelled, and the loop's error
    /// when it is shut down first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let timer = eventLoop.scheduleTask(in: TimeAmount(Instant.now.duration(to: deadline))) {
                    sleeper.wake(with: nil)
                }
                // A loop shut down fails the timer instead of running it.
                timer.futureResult.whenFailure { sleeper.wake(with: $0) }
                sleeper.begin(continuation, timer: timer)
            }
        } onCancel: {
            sleeper.wake(with: CancellationError())
        }
    }

    /// One sleep: resumed once, by its timer or by its cancellation, whichever comes first.
    private final class Sleeper: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Void, any Error>?
            var timer: Scheduled<Void>?
            /// The cancellation that came before the sleep began.
            var earlyError: (any Error)?
            var woken = false
        }

        private let state = NIOLockedValueBox(State())

        func begin(_ continuation: CheckedContinuation<Void, any Error>, timer: Scheduled<Void>) {
            let early: (any Error)?? = state.withLockedValue { state in
                guard !state.woken else { return .some(state.earlyError) }
                state.continuation = continuation
                state.timer = timer
                return .none
            }
            guard let early else { return }
            timer.cancel()
            if let error = early { continuation.resume(throwing: error) } else { continuation.resume() }
        }

        func wake(with error: (any Error)?) {
            let waiting = state.withLockedValue { state -> (CheckedContinuation<Void, any Error>, Scheduled<Void>?)? in
                guard !state.woken else { return nil }
                state.woken = true
                state.earlyError = error
                guard let continuation = state.continuation else { return nil }
                state.continuation = nil
                return (continuation, state.timer)
            }
            guard let (continuation, timer) = waiting else { return }
            if error != nil { timer?.cancel() }
            if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
    }
}
