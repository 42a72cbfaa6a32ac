import GPSFix
import GPSFixDevices
import GPSFixServer
import Logging
import ServiceLifecycle
import SystemdSupport

/// The daemon as a service: binds the listeners, serves every provider, and on SIGTERM
/// or SIGINT stops reading, closes the clients and removes the socket file.
struct DaemonService: Service {
    let server: GPSFixServer
    let providers: [NMEALocationProvider]
    let bps: Int?
    let demo: (terminal: PseudoTerminal, replayer: Replayer)?
    let notifier: any ServiceNotifier
    let watchdogInterval: Duration?
    let logger: Logger

    func run() async throws {
        try await server.start()
        logger.info("started", metadata: ["devices": "\(providers.map(\.device))"])
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await reportToServiceManager() }
                for provider in providers {
                    group.addTask { await server.serve(provider, bps: bps) }
                }
                if let demo {
                    group.addTask { try? await demo.replayer.play(into: demo.terminal, loop: true) }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(60))
                        guard !Task.isCancelled else { break }
                        let status = await server.status()
                        logger.info("status: \(status)")
                    }
                }
            }
        }
        logger.info("stopping")
        notifier.notify("STOPPING=1")
        await server.shutdown()
    }

    /// READY=1 once the listeners are up and a device sends sentences (or after five
    /// seconds, so that an unplugged receiver does not fail the start); then STATUS= when
    /// the summary changes, at most once a second, and WATCHDOG=1 at half the watchdog
    /// interval, only while the event loop answers.
    private func reportToServiceManager() async {
        let started = ContinuousClock.now
        while !Task.isCancelled, await !server.anyDeviceOnline(), ContinuousClock.now - started < .seconds(5) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        notifier.notify("READY=1")
        var lastStatus = ""
        var lastPing = ContinuousClock.now
        while !Task.isCancelled {
            let status = await server.status()
            if status != lastStatus {
                notifier.notify("STATUS=" + status)
                lastStatus = status
            }
            if let watchdogInterval, ContinuousClock.now - lastPing >= watchdogInterval / 2 {
                if await server.isResponsive(within: watchdogInterval / 4) {
                    notifier.notify("WATCHDOG=1")
                } else {
                    logger.error("event loop unresponsive: withholding the watchdog ping")
                }
                lastPing = ContinuousClock.now
            }
            try? await Task.sleep(for: min(.seconds(1), watchdogInterval.map { $0 / 4 } ?? .seconds(1)))
        }
    }
}
