#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import OutputFormats

/// NMEA 0183 out: the receivers' sentences as read, for chartplotters, Signal K,
/// OpenCPN and geoclue, with no greeting and no handshake.
///
/// A TCP or Unix client is a session of the hub like a gpsd client, under the same bounds
/// (its cap, what it loses while it lags, the cut-off); what it sends is read and thrown
/// away. A UDP destination gets each sentence as one datagram, dropped (counted) when the
/// socket cannot take it at once.
public struct NMEAOutput: Sendable {
    /// A TCP address to listen on (port 10110, the IANA port for NMEA 0183, by default).
    public var tcp: (host: String, port: Int)?
    /// A Unix listening socket, as geoclue's `nmea-socket` reads one.
    public var socketPath: String?
    /// Where to send each sentence as a datagram (a broadcast or multicast address too).
    public var udp: (host: String, port: Int)?
    /// The sentence types to pass (`GGA`, `RMC`: an address's last three letters, as gpsd
    /// dispatches them); all when empty.
    public var sentenceTypes: Set<String>

    public init(
        tcp: (host: String, port: Int)? = nil, socketPath: String? = nil, udp: (host: String, port: Int)? = nil,
        sentenceTypes: Set<String> = []
    ) {
        self.tcp = tcp
        self.socketPath = socketPath
        self.udp = udp
        self.sentenceTypes = sentenceTypes
    }

    /// Whether any output is asked for.
    public var isEnabled: Bool { tcp != nil || socketPath != nil || udp != nil }
}

/// Which sentences an NMEA output passes, by the last three letters of their address.
struct SentenceFilter: Sendable {
    /// Three ASCII letters each; empty passes everything.
    private let types: Set<[UInt8]>

    init(_ types: Set<String>) {
        self.types = Set(types.map { Array($0.uppercased().utf8.suffix(3)) })
    }

    /// Whether `sentence` (`$GPGGA,...`, start character first) passes.
    func passes(_ sentence: [UInt8]) -> Bool {
        guard !types.isEmpty else { return true }
        guard let comma = sentence.firstIndex(of: UInt8(ascii: ",")), comma >= 4 else { return false }
        return types.contains(Array(sentence[(comma - 3)..<comma]))
    }
}

extension NMEAOutput {
    /// Whether `sentence` ends in `*hh`.
    static func hasChecksum(_ sentence: [UInt8]) -> Bool { NMEALine.hasChecksum(sentence) }

    /// `sentence` as it goes out (``NMEALine``): its checksum added when the receiver
    /// sent none, then CR LF.
    static func line(_ sentence: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: NMEALine.terminated(sentence))
    }
}

extension GPSFixServer {
    /// Binds NMEA 0183 out's listeners and its UDP sender, when asked for.
    func startNMEAOutput() async throws {
        let output = configuration.nmeaOutput
        guard output.isEnabled else { return }
        let hub = self.hub, filter = SentenceFilter(output.sentenceTypes)
        // A feed watches from its first byte: never idle.
        let bootstrap = clientBootstrap(idleTimeout: configuration.limits.idleTimeout) { channel in
            try channel.pipeline.syncOperations.addHandler(ClientSession(hub: hub, role: .nmeaFeed(filter)))
        }
        if let (host, port) = output.tcp {
            let channel = try await bind(bootstrap, host: host, port: port)
            nmeaListeners.withLockedValue { $0.append(channel) }
            hub.logger.info("NMEA 0183 out", metadata: ["tcp": "\(channel.localAddress?.description ?? "\(host):\(port)")"])
        }
        if let path = output.socketPath {
            // Readable by every local user, as geoclue (its own user) reads it; the sentences
            // are what any process could read from the port when the daemon did not hold it.
            let channel = try await bind(bootstrap, unixPath: path, mask: 0o111)  // 0666
            nmeaListeners.withLockedValue { $0.append(channel) }
            hub.logger.info("NMEA 0183 out", metadata: ["socket": "\(path)"])
        }
        if let (host, port) = output.udp {
            let sender = try await NMEADatagramSender.start(on: hub.eventLoop, to: host, port: port, filter: filter, logger: hub.logger)
            nmeaDatagrams.withLockedValue { $0 = sender }
            try await hub.eventLoop.submit { hub.send(sentencesTo: sender) }.get()
            hub.logger.info("NMEA 0183 out", metadata: ["udp": "\(host):\(port)"])
        }
    }

    /// A listener's bootstrap on the hub's loop: every connection it accepts starts with a
    /// ``BoundedSession`` (its caps, its stall cut-off, `idleTimeout`, the connection
    /// caps), a network one with TCP keepalive (``SessionLimits/keepalive``), then
    /// `addHandlers` sets up the protocol. Every listener is built on this,
    /// so none can forget a bound.
    ///
    /// `halfClosure` keeps a connection whose client ended its sending side open, for
    /// gpsd's protocol, which answers what was asked before that end; elsewhere the end
    /// closes the connection (a reader of a silent feed would otherwise never be noticed
    /// gone). `sendBuffer`, when given, is each connection's socket send buffer in bytes
    /// (`SO_SNDBUF`) in place of ``SessionLimits/sendBuffer``.
    func clientBootstrap(
        idleTimeout: Duration, halfClosure: Bool = false, sendBuffer: Int? = nil,
        _ addHandlers: @escaping @Sendable (any Channel) throws -> Void
    ) -> ServerBootstrap {
        let hub = self.hub, limits = configuration.limits
        return ServerBootstrap(group: hub.eventLoop)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: limits.queuedBytes.low, high: limits.queuedBytes.high))
            // A client's bytes are taken 2 KiB at a time, one read per turn of the loop:
            // what one read brings (HTTP requests parsed ahead of their answers included)
            // stays small, and a flooding client waits its turn.
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 1024, maximum: 2048))
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: halfClosure)
            .childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(sendBuffer ?? limits.sendBuffer))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Best effort: a kernel that refuses an option costs the connection its
                    // probes, not the connection.
                    if ListenerSide(listeningOn: channel.localAddress) == .network, let options = channel.syncOptions {
                        try? limits.enableKeepalive(on: options)
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        BoundedSession(table: hub.sessionTable, idleTimeout: idleTimeout))
                    try addHandlers(channel)
                }
            }
    }

    /// The TCP port NMEA 0183 out listens on (useful with port 0).
    public var nmeaTCPPort: Int? {
        nmeaListeners.withLockedValue { $0.compactMap { $0.localAddress?.port }.first }
    }
}
