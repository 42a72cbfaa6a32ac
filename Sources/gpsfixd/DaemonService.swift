#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import GPSFixDevices
import GPSFixMQTT
import GPSFixMetrics
import GPSFixNTRIP
import GPSFixServer
import GPSFixTime
import GPSFixTraccar
import Logging
import MDNSAnnouncement
import StopSignals
import SystemdSupport

/// The daemon as a service: binds the listeners, serves every provider, and on SIGTERM,
/// SIGINT or SIGHUP stops reading, closes the clients and removes the socket file.
struct DaemonService: Sendable {
    let server: GPSFixServer
    let providers: [NMEALocationProvider]
    /// Receiver time and pulses to chrony and ntpd; `nil` when no device is served.
    let timeService: TimeService?
    /// Every device's reports to an MQTT broker; `nil` without `--mqtt`.
    let fleet: FleetPublisher<ContinuousClock>?
    /// Positions to a Traccar server; `nil` without `--traccar`.
    let traccar: TraccarForwarder?
    /// RTK corrections into a receiver; `nil` without `--ntrip`.
    let ntrip: NTRIPClient?
    /// The base's frames to casters, one push a `--ntrip-server`.
    let ntripServers: [NTRIPServer]
    /// The receivers kept as their `[receiver]` tables say.
    let keepers: [ReceiverKeeper]
    /// The control socket for `gpsfix ubx`, the receivers it reaches, and whether it was
    /// asked for (a default one that cannot be bound is done without); `nil` when no serial
    /// receiver is served.
    let control: (path: String, receivers: [String: ReceiverControl], asked: Bool)?
    /// Where the HTTP server listens (`--http`, and `--metrics`, which serves the same);
    /// none without either.
    let httpAddresses: [(host: String, port: Int)]
    /// The origin allowed to read the API and the events from another site.
    let httpCORS: String?
    let demo: (terminal: PseudoTerminal, replayer: Replayer)?
    /// The service manager's notifier; `nil` when none listens (not run by systemd).
    let notifier: (any ServiceNotifier)?
    let watchdogInterval: Duration?
    /// How often the counters go to the log (and once more at shutdown).
    let statusInterval: Duration
    /// What the daemon's tasks sleep on: the server's loop, which they run on.
    let clock: EventLoopClock
    let logger: Logger

    func run(until stopSignals: StopSignals) async throws {
        do {
            try await server.start()
            try await startHTTP()
            if let control { try await startControl(control) }
        } catch {
            // A listener that cannot be bound ends the daemon as cleanly as a signal does.
            logger.critical("cannot start: \(error)")
            notifier?.notify("STOPPING=1")
            await server.shutdown()
            throw error
        }
        server.describeServices(with: serviceLines)
        let announcement = await announceNMEAOutput()
        await server.announce(devices: providers.map(\.device))
        logger.info("started", metadata: ["devices": "\(providers.map(\.device))"])
        let withdrawal = await withTaskGroup(of: Void.self) { serving in
            serving.addTask {
                guard let number = await stopSignals.first() else { return }
                logger.info("\(StopSignals.name(of: number)): stopping")
            }
            serving.addTask { await serve() }
            // Serving ends only when cancelled: here, by the signal.
            await serving.next()
            // Withdrawn as serving winds down, in a task the cancel does not reach (it would
            // cut the publisher's second to end): a stop that reached the publisher too
            // (the service manager's SIGTERM to the whole unit, a terminal's Ctrl-C) is not
            // taken for an end to start it again after.
            let withdrawal = Task { [clock] in await announcement?.withdraw(clock: clock) }
            serving.cancelAll()
            // Said at once, not after the winding down: the watchdog's pings ended with the
            // cancel, and a stop systemd did not ask for (SIGINT, SIGHUP, kill) would
            // otherwise be taken for a hang after WatchdogSec, aborted and restarted.
            notifier?.notify("STOPPING=1")
            return withdrawal
        }
        logger.info("stopping")
        await withdrawal.value
        await logCounters()
        await server.shutdown()
    }

    /// Every provider, the services, the demo and the status log, until cancelled.
    private func serve() async {
        await withDiscardingTaskGroup { group in
            if let notifier { group.addTask { await reportToServiceManager(through: notifier) } }
            for provider in providers {
                let device = provider.device
                let time = timeService.flatMap { $0.serves(device) ? $0 : nil }
                let keeper = keepers.first { $0.port.name == device }
                guard time != nil || keeper != nil else {
                    group.addTask { await server.serve(provider) }
                    continue
                }
                group.addTask {
                    await server.serve(provider) { update in
                        switch update {
                        case .receiverTime(let sample): time?.offer(sample, of: device)
                        case .nextPulse(let announcement): time?.offer(announcement, of: device)
                        case .device(let event): keeper?.take(event)
                        default: break
                        }
                    }
                }
            }
            if let timeService { group.addTask { await timeService.run() } }
            if let fleet { group.addTask { await fleet.run() } }
            if let traccar { group.addTask { await traccar.run() } }
            if let ntrip { group.addTask { await ntrip.run() } }
            for push in ntripServers {
                group.addTask {
                    await server.subscribe(rtcm3: push)
                    await push.run()
                }
            }
            if let demo {
                group.addTask {
                    try? await demo.replayer.play(into: demo.terminal, loop: true, retime: true, burst: 3, clock: clock)
                }
            }
            if !httpAddresses.isEmpty {
                // The pages' status, pushed each second (nothing is sent while none is open).
                group.addTask {
                    while (try? await clock.sleep(for: .seconds(1))) != nil { server.publishStatus(serviceLines()) }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await clock.sleep(for: statusInterval)
                    guard !Task.isCancelled else { break }
                    await logCounters()
                }
            }
        }
    }

    /// The control socket; a default one that cannot be bound (no /run/gpsfixd outside the
    /// service manager) is logged and done without: the daemon serves on.
    private func startControl(_ control: (path: String, receivers: [String: ReceiverControl], asked: Bool)) async throws {
        do {
            try await server.startControl(path: control.path, receivers: control.receivers)
        } catch where !control.asked {
            logger.warning(
                "no control socket at \(control.path) (\(error)): gpsfix ubx cannot reach the receivers this daemon holds; give --control-socket")
        }
    }

    /// NMEA 0183 out's TCP service over mDNS, when other hosts can reach it.
    private func announceNMEAOutput() async -> ServiceAnnouncement? {
        guard let (host, _) = server.configuration.nmeaOutput.tcp, let port = server.nmeaTCPPort else { return nil }
        guard !GPSFixDaemon.isLoopback(host) else {
            logger.info("NMEA 0183 out is not announced over mDNS: it listens on loopback only")
            return nil
        }
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        let hostName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return await ServiceAnnouncement(
            name: "GPSFix NMEA on \(hostName)", type: "_nmea-0183._tcp", port: port, clock: clock, logger: logger)
    }

    /// The HTTP server (the page, the API, the events, `/metrics`) on each address asked
    /// for: each scrape reads the server's, the time service's, MQTT's and Traccar's
    /// counters at that moment.
    private func startHTTP() async throws {
        guard !httpAddresses.isEmpty else { return }
        let collector = MetricsCollector()
        let (server, timeService, fleet, traccar, ntrip, ntripServers, keepers) = (
            self.server, self.timeService, self.fleet, self.traccar, self.ntrip, self.ntripServers, self.keepers
        )
        let receivers = (control?.receivers ?? [:]).sorted { $0.key < $1.key }
        let content = WebContent(
            metrics: {
                // One scrape at a time (concurrent ones would count twice).
                await collector.scrape { collector in
                    if let snapshot = await server.snapshot() { collector.record(snapshot) }
                    if let timeService { collector.record(time: timeService.counters()) }
                    if let fleet { collector.record(mqtt: fleet.counters()) }
                    if let traccar { collector.record(traccar: traccar.counters) }
                    if let ntrip { collector.record(ntrip: ntrip.counters) }
                    collector.record(ntripServers: ntripServers)
                    collector.record(receivers: receivers.map { device, control in
                        (device, control, keepers.first { $0.port.name == device }?.counters)
                    })
                }
            },
            services: serviceLines, cors: httpCORS)
        for address in httpAddresses { try await server.startHTTP(host: address.host, port: address.port, content: content) }
    }

    /// The services beside the hub, each as its status line.
    @Sendable private func serviceLines() -> StatusLines {
        StatusLines(
            timeService: timeService?.status, mqtt: fleet?.status, traccar: traccar?.status, ntrip: ntrip?.status,
            receivers: keepers.isEmpty ? nil : keepers.map(\.status).joined(separator: "; "))
    }

    /// The status line, the clients' counters, and one line of counters per device.
    private func logCounters() async {
        let status = await statusLine()
        let counters = await server.counters()
        logger.info("status: \(status); \(counters)")
        for (device, counters) in await server.deviceCounters() {
            logger.info("device counters: \(counters.summary)", metadata: ["device": "\(device)"])
        }
        for (device, counters) in timeService?.counters() ?? [] {
            logger.info("time service: \(counters.summary)", metadata: ["device": "\(device)"])
        }
        for (device, counters) in fleet?.counters() ?? [] {
            logger.info("mqtt: \(counters.summary)", metadata: ["device": "\(device)"])
        }
        if let counters = traccar?.counters {
            let failures = counters.failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            logger.info(
                "traccar: queued \(counters.queued), sent \(counters.sent), dropped \(counters.dropped); failures: \(failures.isEmpty ? "none" : failures)")
        }
    }

    /// The server's status, and the time service's and the MQTT publisher's when there
    /// are (not in systemd's STATUS, which would then change, and be sent, every second).
    private func statusLine() async -> String {
        let parts = [await server.status(), timeService?.status, fleet?.status, traccar?.status, ntrip?.status]
        return (parts.compactMap { $0 } + ntripServers.map(\.status)).joined(separator: ", ")
    }

    /// READY, STATUS and WATCHDOG through ``ServiceManagerReporter``, from the server's state.
    private func reportToServiceManager(through notifier: any ServiceNotifier) async {
        let server = self.server
        let reporter = ServiceManagerReporter(notifier: notifier, watchdogInterval: watchdogInterval, clock: clock)
        await reporter.run(
            isReady: { await server.anyDeviceOnline() }, status: { await server.status() },
            isResponsive: { [clock] in await server.isResponsive(within: $0, clock: clock) })
    }
}
