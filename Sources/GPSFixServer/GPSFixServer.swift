#if canImport(Glibc)
import Glibc
#endif
import GPSDProtocol
import GPSFix
import Logging
import NIOCore
import NIOPosix
import Synchronization

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
        /// Each client's outbound buffer: past `high` bytes unread, the client is cut off.
        public var clientBuffer: (low: Int, high: Int)
        /// Listening sockets handed over by socket activation; when there are any, they
        /// are served instead of binding `socketPath` and the TCP address.
        public var adoptedSockets: [Int32]

        public init(socketPath: String?, tcpHost: String? = nil, tcpPort: Int? = nil, release: String,
                    clientBuffer: (low: Int, high: Int) = (64 * 1024, 256 * 1024), adoptedSockets: [Int32] = []) {
            self.socketPath = socketPath
            self.tcpHost = tcpHost
            self.tcpPort = tcpPort
            self.release = release
            self.clientBuffer = clientBuffer
            self.adoptedSockets = adoptedSockets
        }
    }

    public let configuration: Configuration
    private let group: MultiThreadedEventLoopGroup
    private let hub: Hub
    private let listeners = Mutex<[any Channel]>([])

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        // One event loop: the hub and every session on it, so the fan-out takes no locks.
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        hub = Hub(eventLoop: group.next(), release: configuration.release, logger: logger)
    }

    /// Binds the listeners. Throws when the socket is held by a live server.
    public func start() async throws {
        let hub = self.hub
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(
                .writeBufferWaterMark,
                value: .init(low: configuration.clientBuffer.low, high: configuration.clientBuffer.high)
            )
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RequestLineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(ClientSession(hub: hub))
                }
            }
        var bound: [any Channel] = []
        for descriptor in configuration.adoptedSockets {
            let channel = try await bootstrap.withBoundSocket(descriptor).get()
            bound.append(channel)
            hub.logger.info("listening on a socket from the service manager", metadata: ["fd": "\(descriptor)"])
        }
        if configuration.adoptedSockets.isEmpty, let path = configuration.socketPath {
            try SocketPath.prepare(path)
            // The file is created 0660 by bind itself: a chmod after it would leave a window
            // in which anyone could connect. The daemon creates no other file meanwhile.
            let previousMask = umask(0o117)
            defer { umask(previousMask) }
            let channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
            bound.append(channel)
            hub.logger.info("listening", metadata: ["socket": "\(path)"])
        }
        if configuration.adoptedSockets.isEmpty, let host = configuration.tcpHost, let port = configuration.tcpPort {
            let channel = try await bootstrap.bind(host: host, port: port).get()
            bound.append(channel)
            hub.logger.info("listening", metadata: ["tcp": "\(channel.localAddress?.description ?? "\(host):\(port)")"])
        }
        listeners.withLock { $0 = bound }
    }

    /// The TCP port actually bound (useful with port 0).
    public var tcpPort: Int? {
        listeners.withLock { $0.compactMap { $0.localAddress?.port }.first }
    }

    /// On while any client watches raw sentences: give it to the providers, so that
    /// they copy sentences out only then.
    public var sentenceDemand: SentenceDemand { hub.sentenceDemand }

    /// Serves `provider` until its updates end or the task is cancelled.
    ///
    /// The provider hands each update over on its own task (``LocationProvider/run(delivering:)``),
    /// and it goes straight to the event loop, without a round trip each, but at most
    /// ``maximumUpdatesInFlight`` at a time: a provider faster than the fan-out waits
    /// for it instead of queueing without bound.
    public func serve(_ provider: some LocationProvider, bps: Int? = nil) async {
        let hub = self.hub
        let device = provider.device
        try? await hub.eventLoop.submit { hub.add(device: DeviceInfo(path: device, bps: bps)) }.get()
        let handedOver = Atomic<Int>(0)
        await provider.run { update in
            hub.eventLoop.execute { hub.publish(update, from: device) }
            if handedOver.add(1, ordering: .relaxed).newValue % Self.maximumUpdatesInFlight == 0 {
                try? await hub.eventLoop.submit {}.get()
            }
        }
    }

    /// Updates handed to the event loop before waiting for it to catch up.
    static let maximumUpdatesInFlight = 64

    /// Whether any device has sent valid sentences.
    public func anyDeviceOnline() async -> Bool {
        let hub = self.hub
        return (try? await hub.eventLoop.submit { hub.anyDeviceOnline }.get()) ?? false
    }

    /// Whether the event loop answers within `limit`: a stalled loop must stop the
    /// watchdog pings, so that systemd restarts the daemon.
    public func isResponsive(within limit: Duration) async -> Bool {
        let loop = hub.eventLoop
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await loop.submit { true }.get()) ?? false }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// A one-line summary for logs and systemd: `3D fix, 14/22 satellites, 2 clients`.
    public func status() async -> String {
        let hub = self.hub
        return (try? await hub.eventLoop.submit { () -> String in
            let mode = hub.latestFix.map { fix -> String in
                switch fix.mode {
                case .threeDimensional: "3D fix"
                case .twoDimensional: "2D fix"
                case .noFix: "no fix"
                case .unknown: "waiting for data"
                }
            } ?? "waiting for data"
            let sky = hub.latestSky.map { ", \($0.usedCount ?? 0)/\($0.visibleCount) satellites" } ?? ""
            return "\(mode)\(sky), \(hub.sessionCount) clients"
        }.get()) ?? "stopping"
    }

    /// The server's counters for the clients, in one line for the periodic log.
    public func counters() async -> String {
        let hub = self.hub
        return (try? await hub.eventLoop.submit { () -> String in
            let counts = hub.statistics
            return "clients accepted \(counts.clientsAccepted), cut off \(counts.clientsCutOff); "
                + "reports sent \(counts.reportsSent); requests refused \(counts.requestsRefused)"
        }.get()) ?? ""
    }

    /// Each device's counters (sentences, refused lines by reason, cycles, reconnects).
    public func deviceCounters() async -> [(device: String, counters: DeviceCounters)] {
        let hub = self.hub
        return (try? await hub.eventLoop.submit { hub.deviceCounters }.get()) ?? []
    }

    /// Closes the listeners and every client, removes the socket file, stops the loop.
    public func shutdown() async {
        let channels = listeners.withLock { channels in defer { channels = [] }; return channels }
        for channel in channels { try? await channel.close() }
        // A socket from the service manager is the manager's to remove.
        if configuration.adoptedSockets.isEmpty, let path = configuration.socketPath { unlink(path) }
        try? await group.shutdownGracefully()
    }
}
