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

    private let clock: any Clock<Duration>

    public init(
        notifier: any ServiceNotifier, watchdogInterval: Duration?, readyTimeout: Duration = .seconds(5),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.notifier = notifier
        self.watchdogInterval = watchdogInterval
        self.readyTimeout = readyTimeout
        self.clock = clock
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
        // Time is counted in the clock's ticks, so a test clock drives every decision.
        let readyPoll = Duration.milliseconds(50)
        var waited = Duration.zero
        while !Task.isCancelled, await !isReady(), waited < readyTimeout {
            try? await clock.sleep(for: readyPoll)
            waited += readyPoll
        }
        guard !Task.isCancelled else { return }
        notifier.notify("READY=1")
        let tick = min(.seconds(1), watchdogInterval.map { $0 / 8 } ?? .seconds(1))
        var lastStatus = ""
        var sinceStatus = Duration.seconds(1)
        var sincePing = Duration.zero
        while !Task.isCancelled {
            if sinceStatus >= .seconds(1) {
                let current = await status()
                // Nothing after a stop began: the daemon's STOPPING=1 is the last word.
                guard !Task.isCancelled else { return }
                if current != lastStatus {
                    notifier.notify("STATUS=" + current)
                    lastStatus = current
                    sinceStatus = .zero
                }
            }
            if let watchdogInterval, sincePing >= watchdogInterval / 2 {
                if await isResponsive(watchdogInterval / 4), !Task.isCancelled { notifier.notify("WATCHDOG=1") }
                sincePing = .zero
            }
            do { try await clock.sleep(for: tick) } catch { return }
            sinceStatus += tick
            sincePing += tick
        }
    }
}
