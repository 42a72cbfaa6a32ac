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
    let demo: (terminal: PseudoTerminal, replayer: Replayer)?
    /// The service manager's notifier; `nil` when none listens (not run by systemd).
    let notifier: (any ServiceNotifier)?
    let watchdogInterval: Duration?
    /// How often the counters go to the log (and once more at shutdown).
    let statusInterval: Duration
    let logger: Logger

    func run() async throws {
        try await server.start()
        await server.announce(devices: providers.map(\.device))
        logger.info("started", metadata: ["devices": "\(providers.map(\.device))"])
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                if let notifier { group.addTask { await reportToServiceManager(through: notifier) } }
                for provider in providers {
                    group.addTask { await server.serve(provider) }
                }
                if let demo {
                    group.addTask { try? await demo.replayer.play(into: demo.terminal, loop: true, retime: true, burst: 3) }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: statusInterval)
                        guard !Task.isCancelled else { break }
                        await logCounters()
                    }
                }
            }
        }
        logger.info("stopping")
        await logCounters()
        notifier?.notify("STOPPING=1")
        await server.shutdown()
    }

    /// The status line, the clients' counters, and one line of counters per device.
    private func logCounters() async {
        let status = await server.status()
        let counters = await server.counters()
        logger.info("status: \(status); \(counters)")
        for (device, counters) in await server.deviceCounters() {
            logger.info("device counters: \(counters.summary)", metadata: ["device": "\(device)"])
        }
    }

    /// READY, STATUS and WATCHDOG through ``ServiceManagerReporter``, from the server's state.
    private func reportToServiceManager(through notifier: any ServiceNotifier) async {
        let server = self.server
        let reporter = ServiceManagerReporter(notifier: notifier, watchdogInterval: watchdogInterval)
        await reporter.run(
            isReady: { await server.anyDeviceOnline() }, status: { await server.status() },
            isResponsive: { await server.isResponsive(within: $0) })
    }
}
