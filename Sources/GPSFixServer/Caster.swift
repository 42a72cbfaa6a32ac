import NIOCore
import NIOPosix
import NTRIPCasting

/// The caster inside the daemon: the base receiver's RTCM 3 frames served to NTRIP clients
/// (rovers, str2str, RTKLIB, pygnssutils), NTRIP 1.0 and 2.0, under one mountpoint.
public struct CasterConfiguration: Sendable {
    /// The address to listen on, and its port (2101, NTRIP's, by default in the daemon; 0
    /// for any free one).
    public var host: String
    public var port: Int
    /// The mountpoint the stream is served under.
    public var mountpoint: String
    /// Who may take the streams (Basic authentication); everyone when `nil`.
    public var users: CasterUsers?
    /// A second mountpoint serving what the relay is given (what `--ntrip` fetches).
    public var relay: (mountpoint: String, source: CorrectionRelay)?

    public init(
        host: String, port: Int, mountpoint: String, users: CasterUsers? = nil,
        relay: (mountpoint: String, source: CorrectionRelay)? = nil
    ) {
        self.host = host
        self.port = port
        self.mountpoint = mountpoint
        self.users = users
        self.relay = relay
    }

    /// The stream served under `mountpoint`, if any.
    func stream(at mountpoint: String) -> CasterStream? {
        if mountpoint == self.mountpoint { return .base }
        return mountpoint == relay?.mountpoint ? .relay : nil
    }
}

/// What the caster counts: its rovers, what it sent them and what they lost.
public struct CasterStatistics: Sendable, Hashable {
    /// Rovers streaming now.
    public var streams = 0
    /// Streams begun since the start.
    public var streamsServed = 0
    /// Source tables sent.
    public var sourceTables = 0
    /// Requests refused for want of the right user and password.
    public var unauthorized = 0
    /// Frames written to rovers, each rover's counted.
    public var framesSent = 0
    /// Frames a rover lost because it did not read (each rover's counted); a rover that
    /// stays behind is cut off (the sessions' stall cut-off).
    public var framesDropped = 0
    /// Frames of the base so far, and of other receivers, which are not served.
    public var baseFrames = 0
    public var framesOfOthers = 0
    /// Frames relayed from the caster `--ntrip` reads, and those dropped on their way.
    public var relayedFrames = 0
    public var relayDropped = 0
    /// Requests answered 503 because two password checks were running already.
    public var busy = 0
}

extension GPSFixServer {
    /// The kernel's send buffer asked for each rover (Linux doubles it): some seconds of a
    /// base's corrections. Left to the kernel, it grows with the connection (to megabytes
    /// on loopback): a rover that stops reading would take minutes of frames, stale on
    /// arrival, before its session's cap and the stall cut-off could see it.
    static let roverSendBuffer = 8 * 1024

    /// Listens for NTRIP clients on the hub's event loop, and returns the port bound.
    ///
    /// Each connection is a bounded session like a gpsd client's (the network side's caps,
    /// its cap of unsent bytes, the stall cut-off), idle after
    /// ``SessionLimits/httpIdleTimeout`` until its request head has come (at most
    /// ``CasterRequest/maximumHeadLength``). A stream never waits for a rover: a frame a
    /// rover's socket cannot take is dropped for it and counted, and a rover that stays
    /// behind is cut off; the others get every frame.
    @discardableResult
    public func startCaster(_ caster: CasterConfiguration) async throws -> Int {
        let hub = self.hub
        let access = CasterAccess(configuration: caster, release: configuration.release)
        let bootstrap = clientBootstrap(
            idleTimeout: configuration.limits.httpIdleTimeout, sendBuffer: Self.roverSendBuffer
        ) { channel in
            try channel.pipeline.syncOperations.addHandler(CasterSession(hub: hub, access: access))
        }
        let channel = try await bind(bootstrap, host: caster.host, port: caster.port)
        casterListeners.withLockedValue { $0.append(channel) }
        let port = channel.localAddress?.port ?? caster.port
        let relay = caster.relay?.source
        try await hub.eventLoop.submit {
            access.port = port
            hub.corrections.hasCaster = true
            hub.corrections.relaySource = relay
            hub.sentenceDemand.set(corrections: true)
        }.get()
        relay?.attach(hub)
        hub.logger.info(
            "NTRIP caster",
            metadata: [
                "tcp": "\(channel.localAddress?.description ?? "\(caster.host):\(port)")",
                "mountpoints": "\([caster.mountpoint] + (caster.relay.map { [$0.mountpoint] } ?? []))",
                "users": "\(caster.users.map { "\($0.count)" } ?? "anyone")",
            ])
        return port
    }
}

/// The caster's fixed parts and what it learned of its users, shared by its sessions on
/// the hub's loop: the mountpoint, the users, the credentials already checked.
final class CasterAccess: @unchecked Sendable {
    let configuration: CasterConfiguration
    let release: String
    /// The port bound, for the source table's `CAS` line.
    var port = 0
    /// `Authorization` values already found right: a rover fleet sharing one account costs
    /// one hash check, not one per rover. Bounded: emptied when full.
    private var accepted: Set<String> = []
    private static let acceptedLimit = 64

    /// Hashed passwords being checked now, at most ``maximumChecks``, by `Authorization`
    /// value: each costs a hash's deliberate time on a thread of SwiftNIO's pool, so a
    /// flood of guesses waits its turn as 503s instead of taking the machine's cores. A
    /// request whose value is being checked waits for that check's answer: a fleet
    /// reconnecting at once after a restart costs one check, and no rover a 503.
    private var checks: [String: EventLoopFuture<Decision>] = [:]
    static let maximumChecks = 2

    init(configuration: CasterConfiguration, release: String) {
        self.configuration = configuration
        self.release = release
    }

    /// What the caster says to a request for a stream.
    enum Decision {
        case allowed, refused
        /// Too many password checks running: try again.
        case busy
    }

    /// Whether `request` may take the stream; a hashed password is checked on a thread of
    /// SwiftNIO's pool, never on the loop. On the hub's loop.
    func authorizes(_ request: CasterRequest, on loop: any EventLoop) -> EventLoopFuture<Decision> {
        guard let users = configuration.users else { return loop.makeSucceededFuture(.allowed) }
        guard let authorization = request.authorization, let (user, password) = request.basicCredentials else {
            return loop.makeSucceededFuture(.refused)
        }
        if accepted.contains(authorization) { return loop.makeSucceededFuture(.allowed) }
        guard users.isHashed(user) else {
            return loop.makeSucceededFuture(remember(users.accepts(user: user, password: password), authorization))
        }
        if let running = checks[authorization] { return running }
        guard checks.count < Self.maximumChecks else { return loop.makeSucceededFuture(.busy) }
        let decision = NIOThreadPool.singleton.runIfActive(eventLoop: loop) { users.accepts(user: user, password: password) }
            .map { [self] isRight in remember(isRight, authorization) }
        checks[authorization] = decision
        // Attached after the entry is made: a check failed at once (a pool stopped) ends it here.
        decision.whenComplete { [self] _ in checks[authorization] = nil }
        return decision
    }

    private func remember(_ isRight: Bool, _ authorization: String) -> Decision {
        guard isRight else { return .refused }
        if accepted.count >= Self.acceptedLimit { accepted.removeAll() }
        accepted.insert(authorization)
        return .allowed
    }

    /// The source table now, from what each stream carried so far.
    func sourceTable(summaries: [CasterStream: RTCMStreamSummary], host: String) -> String {
        let mountpoints = [(configuration.mountpoint, CasterStream.base)] + (configuration.relay.map { [($0.mountpoint, .relay)] } ?? [])
        return CasterSourceTable(
            streams: mountpoints.map { mountpoint, stream in
                .init(
                    mountpoint: mountpoint, summary: summaries[stream] ?? RTCMStreamSummary(),
                    requiresAuthentication: configuration.users != nil)
            }, host: host, port: port, generator: "GPSFix \(release)"
        ).text
    }
}
