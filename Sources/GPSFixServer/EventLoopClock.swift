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
        private enum State {
            /// Before the continuation is given: a wake-up now is kept for it.
            case starting
            case sleeping(CheckedContinuation<Void, any Error>, Scheduled<Void>)
            /// Woken, with the cancellation's or the loop's error, if any.
            case woken((any Error)?)
        }

        private let state = NIOLockedValueBox(State.starting)

        func begin(_ continuation: CheckedContinuation<Void, any Error>, timer: Scheduled<Void>) {
            let early = state.withLockedValue { state -> Result<Void, any Error>? in
                guard case .woken(let error) = state else {
                    state = .sleeping(continuation, timer)
                    return nil
                }
                return error.map { .failure($0) } ?? .success(())
            }
            guard let early else { return }
            timer.cancel()
            continuation.resume(with: early)
        }

        func wake(with error: (any Error)?) {
            let sleeping = state.withLockedValue { state -> (CheckedContinuation<Void, any Error>, Scheduled<Void>)? in
                switch state {
                case .woken: return nil
                case .starting:
                    state = .woken(error)
                    return nil
                case .sleeping(let continuation, let timer):
                    state = .woken(error)
                    return (continuation, timer)
                }
            }
            guard let (continuation, timer) = sleeping else { return }
            guard let error else { return continuation.resume() }
            timer.cancel()
            continuation.resume(throwing: error)
        }
    }
}
