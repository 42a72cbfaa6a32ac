import GPSFix
import GPSFixDevices
import GPSFixServer
import Logging
import ServiceLifecycle

/// The daemon as a service: binds the listeners, serves every provider, and on SIGTERM
/// or SIGINT stops reading, closes the clients and removes the socket file.
struct DaemonService: Service {
    let server: GPSFixServer
    let providers: [NMEALocationProvider]
    let bps: Int?
    let demo: (terminal: PseudoTerminal, replayer: Replayer)?
    let logger: Logger

    func run() async throws {
        try await server.start()
        logger.info("started", metadata: ["devices": "\(providers.map(\.device))"])
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
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
        await server.shutdown()
    }
}
