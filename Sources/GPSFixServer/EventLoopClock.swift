import NIOCore
import Synchronization

/// A clock whose sleeps are timers of a SwiftNIO event loop, for the daemon's long
/// waits (the status interval, the silence timeout, a reconnection's backoff).
///
/// Swift's own clocks sleep through libdispatch, whose timer thread wakes the process
/// every second until a long deadline comes (a one-minute sleep costs sixty wake-ups);
/// an event loop programs its timer for the deadline itself, so a sleep wakes the
/// process once, when it ends. Instants are `ContinuousClock`'s.
public struct EventLoopClock: Clock {
    public typealias Instant = ContinuousClock.Instant

    let eventLoop: any EventLoop

    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public var now: Instant { ContinuousClock.now }
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let delay = ContinuousClock.now.duration(to: deadline)
        guard delay > .zero else { return try Task.checkCancellation() }
        let (seconds, attoseconds) = delay.components
        let amount = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let timer = Mutex<(scheduled: Scheduled<Void>?, cancelled: Bool)>((nil, false))
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let scheduled = eventLoop.scheduleTask(in: amount) {}
                scheduled.futureResult.whenComplete { result in
                    switch result {
                    case .success: continuation.resume()
                    case .failure: continuation.resume(throwing: CancellationError())
                    }
                }
                let cancelledAlready = timer.withLock { timer in
                    timer.scheduled = scheduled
                    return timer.cancelled
                }
                if cancelledAlready { scheduled.cancel() }
            }
        } onCancel: {
            timer.withLock { timer in
                timer.cancelled = true
                return timer.scheduled
            }?.cancel()
        }
    }
}
