import GPSFix
import GPSFixDevices
import NIOCore

/// The hub's event loop as a ``TimerScheduler``: a provider's silence watch wakes the
/// loop, which is awake for the device's reads anyway, and no task on Swift's
/// cooperative pool (whose worker threads and their monitor would wake with it).
struct EventLoopTimers: TimerScheduler {
    let eventLoop: any EventLoop

    func schedule(in delay: Duration, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        LoopTimer(scheduled: eventLoop.scheduleTask(in: TimeAmount(delay), body))
    }

    private struct LoopTimer: ScheduledTimer {
        let scheduled: Scheduled<Void>
        func cancel() { scheduled.cancel() }
    }
}
