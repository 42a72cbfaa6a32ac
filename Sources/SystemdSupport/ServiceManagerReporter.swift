/// Keeps the service manager informed: READY once, STATUS when it changes, WATCHDOG
/// pings while the daemon is healthy. The daemon supplies the facts; this type decides
/// what to say and when.
public struct ServiceManagerReporter: Sendable {
    public let notifier: any ServiceNotifier
    /// systemd's watchdog interval; pings go at half of it. No pings when `nil`.
    public let watchdogInterval: Duration?
    /// READY=1 is sent at the latest after this long, ready or not, so that a receiver
    /// that is unplugged at boot does not make the start fail.
    public let readyTimeout: Duration

    public init(notifier: any ServiceNotifier, watchdogInterval: Duration?, readyTimeout: Duration = .seconds(5)) {
        self.notifier = notifier
        self.watchdogInterval = watchdogInterval
        self.readyTimeout = readyTimeout
    }

    /// Reports until the task is cancelled.
    ///
    /// - `isReady`: whether the daemon is fully up (listeners bound, a device sending).
    /// - `status`: the one-line summary; sent when it changes, at most once a second.
    /// - `isResponsive`: whether the daemon's event loop answers within the given time;
    ///   a stalled loop must stop the pings so that systemd restarts the daemon.
    public func run(
        isReady: @Sendable () async -> Bool, status: @Sendable () async -> String,
        isResponsive: @Sendable (Duration) async -> Bool
    ) async {
        let clock = ContinuousClock()
        let started = clock.now
        while !Task.isCancelled, await !isReady(), clock.now - started < readyTimeout {
            try? await Task.sleep(for: .milliseconds(50))
        }
        guard !Task.isCancelled else { return }
        notifier.notify("READY=1")
        var lastStatus = ""
        var lastStatusTime = clock.now - .seconds(1)
        var lastPing = clock.now
        let tick = min(.seconds(1), watchdogInterval.map { $0 / 8 } ?? .seconds(1))
        while !Task.isCancelled {
            if clock.now - lastStatusTime >= .seconds(1) {
                let current = await status()
                if current != lastStatus {
                    notifier.notify("STATUS=" + current)
                    lastStatus = current
                    lastStatusTime = clock.now
                }
            }
            if let watchdogInterval, clock.now - lastPing >= watchdogInterval / 2 {
                if await isResponsive(watchdogInterval / 4) { notifier.notify("WATCHDOG=1") }
                lastPing = clock.now
            }
            try? await Task.sleep(for: tick)
        }
    }
}
