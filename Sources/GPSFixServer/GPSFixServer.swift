#if canImport(Glibc)
import Glibc
#endif
import GPSDProtocol
import GPSFix
import GPSFixDevices
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// gpsfixd's server: location providers in, gpsd-protocol clients out, over a Unix socket
/// and, on request, TCP.
public final class GPSFixServer: Sendable {
    /// Where and how to listen.
    public struct Configuration: Sendable {
        /// The Unix socket's path (created with mode 0660); none when `nil`.
        public var socketPath: String?
        /// A TCP address (`127.0.0.1:2947`), for gpsd's clients: libgps speaks TCP only.
        public var tcpHost: String?
        public var tcpPort: Int?
        /// The release string clients see in VERSION.
        public var release: String
        /// The source revision clients see as VERSION's `rev` (gpsd's own: its git
        /// revision); none when `nil`.
        public var revision: String?
        /// The bounds of every connection of every listener: its unsent bytes, the stall
        /// cut-off, the idle timeouts, the connection caps. While a gpsd client is over
        /// its cap its requests are not read, sources that can wait are held back for it
        /// when it watches their reports or sentences (see `holdBackLimit`), and the
        /// reports of the others are left out for it, counted.
        public var limits: SessionLimits
        /// How long, in a row, sources that can wait are held back for lagging clients,
        /// whichever lag; after a hold that lasted this long, they read for at least four
        /// times as long before the next.
        public var holdBackLimit: Duration
        /// Listening sockets handed over by socket activation. They are served beside
        /// `socketPath` and the TCP address; a passed socket for the same path or
        /// address stands in for binding it.
        public var adoptedSockets: [Int32]
        /// NMEA 0183 out, when asked for.
        public var nmeaOutput: NMEAOutput
        /// The NTRIP caster of a base receiver's corrections, when asked for.
        public var caster: CasterConfiguration?

        public init(socketPath: String?, tcpHost: String? = nil, tcpPort: Int? = nil, release: String,
                    revision: String? = nil, limits: SessionLimits = SessionLimits(),
                    holdBackLimit: Duration = .seconds(2), adoptedSockets: [Int32] = [],
                    nmeaOutput: NMEAOutput = NMEAOutput(), caster: CasterConfiguration? = nil) {
            self.socketPath = socketPath
            self.tcpHost = tcpHost
            self.tcpPort = tcpPort
            self.release = release
            self.revision = revision
            self.limits = limits
            self.holdBackLimit = holdBackLimit
            self.adoptedSockets = adoptedSockets
            self.nmeaOutput = nmeaOutput
            self.caster = caster
        }
    }

    public let configuration: Configuration
    let hub: Hub
    private let listeners = NIOLockedValueBox<[any Channel]>([])
    /// The socket file this server bound itself, and so removes at shutdown.
    let boundSocketPaths = NIOLockedValueBox<[String]>([])
    /// The listeners of NMEA 0183 out, and its UDP sender.
    let nmeaListeners = NIOLockedValueBox<[any Channel]>([])
    /// The control socket's listener, when one is served.
    let controlListeners = NIOLockedValueBox<[any Channel]>([])
    let nmeaDatagrams = NIOLockedValueBox<NMEADatagramSender?>(nil)
    /// The HTTP server's listeners.
    let httpListeners = NIOLockedValueBox<[any Channel]>([])
    /// The NTRIP caster's listener.
    let casterListeners = NIOLockedValueBox<[any Channel]>([])

    /// Serves on one event loop of `group`: the hub, every session and every device read
    /// on it, so the fan-out takes no locks. The group is the caller's, shared with
    /// whatever else of the process runs on SwiftNIO (the daemon's one group), and outlives
    /// the server: ``shutdown()`` leaves it running.
    ///
    /// `subscribers` take every TPV, SKY and DEVICE report besides the sockets (the MQTT
    /// publisher), on the event loop: see ``ReportSubscriber``.
    public init(
        configuration: Configuration, group: any EventLoopGroup, subscribers: [any ReportSubscriber] = [], logger: Logger
    ) {
        self.configuration = configuration
        hub = Hub(
            eventLoop: group.next(), release: configuration.release, revision: configuration.revision, limits: configuration.limits,
            holdBackLimit: TimeAmount(configuration.holdBackLimit), subscribers: subscribers, logger: logger)
    }

    /// Binds the listeners. Throws when the socket is held by a live server.
    public func start() async throws {
        let hub = self.hub
        // A client that shuts down its sending side still gets its answers.
        let bootstrap = clientBootstrap(idleTimeout: configuration.limits.idleTimeout, halfClosure: true) { channel in
            try channel.pipeline.syncOperations.addHandler(ClientSession(hub: hub))
        }
        var bound: [any Channel] = []
        // Kept even when a later bind fails, so that ``shutdown()`` closes what was bound.
        defer { listeners.withLockedValue { $0 = bound } }
        for descriptor in configuration.adoptedSockets {
            let channel = try await bootstrap.withBoundSocket(descriptor).get()
            bound.append(channel)
            hub.logger.info(
                "listening on a socket from the service manager",
                metadata: ["fd": "\(descriptor)", "address": "\(channel.localAddress?.description ?? "?")"])
        }
        let passed = bound.compactMap(\.localAddress)
        if let path = configuration.socketPath, !passed.contains(where: { $0.pathname == path }) {
            let channel = try await bind(bootstrap, unixPath: path, mask: 0o117)  // 0660
            bound.append(channel)
            hub.logger.info("listening", metadata: ["socket": "\(path)"])
        }
        if let host = configuration.tcpHost, let port = configuration.tcpPort {
            // A passed socket on the same port covers it when it is on the same address
            // or on every address (binding beside a wildcard socket would fail anyway).
            let wanted = try? SocketAddress.makeAddressResolvingHost(host, port: port)
            let covers: (SocketAddress) -> Bool = { passed in
                guard let wanted, passed.port == wanted.port else { return false }
                return passed.ipAddress == wanted.ipAddress || passed.ipAddress == "0.0.0.0" || passed.ipAddress == "::"
            }
            if passed.contains(where: covers) {
                hub.logger.info("TCP \(host):\(port) is served on the socket from the service manager")
            } else {
                let channel = try await bind(bootstrap, host: host, port: port)
                bound.append(channel)
                hub.logger.info("listening", metadata: ["tcp": "\(channel.localAddress?.description ?? "\(host):\(port)")"])
            }
        }
        try await startNMEAOutput()
        if let caster = configuration.caster { try await startCaster(caster) }
    }

    /// Binds `bootstrap` at `path` (a stale socket file replaced, a live one refused), the
    /// file created with `mask` by bind itself: a chmod after it would leave a window in
    /// which anyone could connect. The daemon creates no other file meanwhile. The file is
    /// removed at shutdown.
    func bind(_ bootstrap: ServerBootstrap, unixPath path: String, mask: mode_t) async throws -> any Channel {
        try SocketPath.prepare(path)
        let previousMask = umask(mask)
        defer { umask(previousMask) }
        do {
            let channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
            boundSocketPaths.withLockedValue { $0.append(path) }
            return channel
        } catch let error as IOError {
            throw CannotListen(address: .unixSocket(path: path), errno: error.errnoCode)
        }
    }

    /// The TCP port actually bound (useful with port 0).
    public var tcpPort: Int? {
        listeners.withLockedValue { $0.compactMap { $0.localAddress?.port }.first }
    }

    /// The event loop the hub and every session run on.
    var eventLoop: any EventLoop { hub.eventLoop }

    /// Reads devices on the server's event loop (see ``DescriptorReactor``): give it to
    /// serial ports and pseudo-terminals, so that each read wakes one thread only.
    public var descriptorReactor: any DescriptorReactor { EventLoopReactor(hub: hub) }

    /// Timers on the server's event loop, for the providers' silence watches.
    public var timers: any TimerScheduler { EventLoopTimers(eventLoop: hub.eventLoop, logger: hub.logger) }

    /// On while any client watches raw sentences: give it to the providers, so that
    /// they copy sentences out only then.
    public var sentenceDemand: SentenceDemand { hub.sentenceDemand }

    /// On while sources that can wait are held back for a lagging client: give it to
    /// the providers, so that their silence watches do not count that time.
    public var readingHold: ReadingHold { hub.readingHold }

    /// Makes the devices known, in this order, before any sends: DEVICES, POLL and the
    /// status list them in the order they were configured, not in the order their
    /// providers happen to start.
    public func announce(devices: [String]) async {
        let hub = self.hub
        try? await hub.eventLoop.submit { for device in devices { hub.add(device: DeviceInfo(path: device)) } }.get()
    }

    /// Serves `provider` until its updates end or the task is cancelled.
    ///
    /// The provider hands its updates over on the thread that produced them. A device
    /// read on the server's event loop (``descriptorReactor``) is published in the same
    /// turn, and that is where back-pressure lives: while a client lags, the loop stops
    /// reading the devices whose sources can wait (their channels' `autoRead`), and a
    /// lagging client loses the reports of the others. Updates from another thread (the
    /// provider's task, when its device is lost or its data ends; a provider of the
    /// tests', or one whose silence watch runs elsewhere) are handed to the loop, and that
    /// thread waits until the loop has published them: it reads no further meanwhile, so
    /// nothing queues on the loop. The loop must outlive the providers it serves (the
    /// daemon's lives as long as the process): a loop shut down first runs no task, and
    /// the wait would not end. `alongside`, when given, sees every update first, on the
    /// delivering thread (the time service takes its samples there); it must not wait.
    public func serve(_ provider: some LocationProvider, alongside: (@Sendable (LocationUpdate) -> Void)? = nil) async {
        let hub = self.hub
        let device = provider.device, canWait = provider.canWait
        try? await hub.eventLoop.submit { hub.add(device: DeviceInfo(path: device), canWait: canWait) }.get()
        await provider.run { updates in
            if let alongside { for update in updates { alongside(update) } }
            if hub.eventLoop.inEventLoop {
                for update in updates { hub.publish(update, from: device) }
            } else if MultiThreadedEventLoopGroup.currentEventLoop != nil {
                // Another loop (the daemon's tasks run on SwiftNIO's loops) must never wait.
                hub.eventLoop.execute { for update in updates { hub.publish(update, from: device) } }
            } else {
                // A reading thread waits: it reads no further than the hub publishes.
                try? hub.eventLoop.submit { for update in updates { hub.publish(update, from: device) } }.wait()
            }
        }
    }

    /// Sends what the time service did with a sample to the watchers that asked for
    /// `"pps":true` (gpsd's TOFF and PPS reports). Never waits for the loop.
    public func publish(_ report: TimeReport, of device: String) {
        let hub = self.hub
        hub.eventLoop.execute { hub.publish(report, of: device) }
    }

    /// Whether any device has sent valid sentences.
    public func anyDeviceOnline() async -> Bool {
        let hub = self.hub
        return (try? await hub.eventLoop.submit { hub.anyDeviceOnline }.get()) ?? false
    }

    /// Whether the event loop answers within `limit`, measured on `clock`: a stalled loop
    /// must stop the watchdog pings, so that systemd restarts the daemon. On a clock of
    /// its own, the answer comes at the latest after `limit`, whatever the loop does; on an
    /// ``EventLoopClock`` of this loop (the daemon's, whose tasks run on the loop), a
    /// stalled loop gives no answer, and so no ping, until it runs again.
    public func isResponsive(within limit: Duration, clock: any Clock<Duration> = ContinuousClock()) async -> Bool {
        let loop = hub.eventLoop
        let answer = FirstAnswer()
        return await withCheckedContinuation { continuation in
            answer.await(continuation)
            let deadline = Task {
                try? await clock.sleep(for: limit)
                answer.give(false)
            }
            loop.execute {
                answer.give(true)
                deadline.cancel()
            }
        }
    }

    /// A one-line summary of every device for logs and systemd: `3D fix, 14/22 satellites, 2 clients`.
    public func status() async -> String {
        let hub = self.hub
        return (try? await hub.eventLoop.submit { hub.status }.get()) ?? "stopping"
    }

    /// The server's counters for the clients, in one line for the periodic log.
    public func counters() async -> String {
        guard let counts = await snapshot()?.clients else { return "" }
        return "clients accepted \(counts.accepted), cut off \(counts.cutOff); "
            + "reports sent \(counts.reportsSent), dropped \(counts.reportsDropped); requests refused \(counts.requestsRefused)"
    }

    /// Everything the server counts and knows of its devices, read at once (for the
    /// metrics); `nil` once the server has stopped.
    public func snapshot() async -> ServerSnapshot? {
        let hub = self.hub
        return try? await hub.eventLoop.submit { hub.snapshot }.get()
    }

    /// Each device's counters (sentences, refused lines by reason, cycles, reconnects).
    public func deviceCounters() async -> [(device: String, counters: DeviceCounters)] {
        await snapshot()?.devices.map { ($0.path, $0.counters) } ?? []
    }

    /// Closes the listeners and every client, removes the socket file; the event loop's
    /// group is its owner's to shut down.
    public func shutdown() async {
        let channels = listeners.withLockedValue { channels in defer { channels = [] }; return channels }
        for channel in channels { try? await channel.close() }
        // A socket from the service manager is the manager's to remove.
        let others = nmeaListeners.withLockedValue { $0 } + httpListeners.withLockedValue { $0 }
            + controlListeners.withLockedValue { $0 } + casterListeners.withLockedValue { $0 }
        nmeaListeners.withLockedValue { $0 = [] }
        casterListeners.withLockedValue { $0 = [] }
        controlListeners.withLockedValue { $0 = [] }
        httpListeners.withLockedValue { $0 = [] }
        for channel in others { try? await channel.close() }
        if let sender = nmeaDatagrams.withLockedValue({ $0 }) {
            let hub = self.hub
            try? await hub.eventLoop.submit { sender.close() }.get()
        }
        for path in boundSocketPaths.withLockedValue({ $0 }) { unlink(path) }
        let hub = self.hub
        try? await hub.eventLoop.submit { hub.sessionTable.stop() }.get()
    }
}

/// The first of several racing answers, handed to one waiting continuation; later ones
/// are dropped.
private final class FirstAnswer: Sendable {
    private let waiting = NIOLockedValueBox<CheckedContinuation<Bool, Never>?>(nil)

    func await(_ continuation: CheckedContinuation<Bool, Never>) {
        waiting.withLockedValue { $0 = continuation }
    }

    func give(_ answer: Bool) {
        waiting.withLockedValue { continuation in
            defer { continuation = nil }
            return continuation
        }?.resume(returning: answer)
    }
}
