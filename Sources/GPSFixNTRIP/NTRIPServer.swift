import ClientTLS
import GPSFixServer
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// A base receiver's RTCM 3 frames pushed to an NTRIP caster (an "NTRIP server", in
/// NTRIP's words): RTK2go, Centipede, Onocoy, a private caster. One per caster, so a base
/// can feed a public and a private one at once.
///
/// It opens the stream with NTRIP 1.0's `SOURCE` or 2.0's `POST` (see
/// ``NTRIPServerHandshake``), then writes every frame whole, in order, as the hub hands it
/// over (``receive(rtcm3:)``). Nothing queues outside SwiftNIO's channel: above the
/// channel's high water mark (``Configuration/writeBuffer``), and while no caster takes
/// the stream, a frame is dropped and counted, so a slow or absent caster costs the daemon
/// a bounded amount of memory and delays nothing else.
///
/// A refusal, a lost connection, or no answer within ``Configuration/timeout`` is logged
/// and retried with a backoff that doubles from a second: up to
/// ``Configuration/maximumBackoff`` while the caster cannot be reached (so a restarted
/// caster is found again within it), up to ``Configuration/maximumRefusalBackoff`` while
/// it refuses (public casters shut out sources that knock too often). A stream that lasted
/// a minute starts the backoff again from a second (a caster that takes a stream and drops
/// it at once is not knocked on every second). A caster that stops reading for
/// ``Configuration/timeout`` is left, and reconnected. A refused NTRIP 1.0 source tries the
/// mountpoint's other form (`/MOUNT`, `MOUNT`) next, and keeps the one that worked.
public final class NTRIPServer: RTCMFrameSubscriber, @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The caster, its mountpoint, the user (NTRIP 2.0) and the password.
        public var caster: NTRIPCaster
        public var version: NTRIPServerVersion
        /// For the connection and for the caster's answer.
        public var timeout: Duration
        public var maximumBackoff: Duration
        public var maximumRefusalBackoff: Duration
        /// Bytes written but not yet taken by the socket above which frames are dropped
        /// (the high mark), and below which they are written again (the low mark).
        public var writeBuffer: ChannelOptions.Types.WriteBufferWaterMark
        /// The certificate authorities for `ntrips://` (a PEM file); the system's when `nil`.
        public var certificateAuthorities: String?
        /// After `NTRIP ` in the agent's header: `GPSFix/0.2`.
        public var userAgent: String

        public init(
            caster: NTRIPCaster, version: NTRIPServerVersion = .one, timeout: Duration = .seconds(10),
            maximumBackoff: Duration = .seconds(8), maximumRefusalBackoff: Duration = .seconds(60),
            writeBuffer: ChannelOptions.Types.WriteBufferWaterMark = .init(low: 16 * 1024, high: 64 * 1024),
            certificateAuthorities: String? = nil, userAgent: String
        ) {
            self.caster = caster
            self.version = version
            self.timeout = timeout
            self.maximumBackoff = maximumBackoff
            self.maximumRefusalBackoff = maximumRefusalBackoff
            self.writeBuffer = writeBuffer
            self.certificateAuthorities = certificateAuthorities
            self.userAgent = userAgent
        }
    }

    /// What the push sent and dropped.
    public struct Counters: Sendable, Equatable {
        /// Whether a caster takes the stream now.
        public var connected = false
        /// Frames, and their bytes (the frames' own, without NTRIP 2.0's chunking), taken by the socket.
        public var framesSent = 0
        public var bytesSent = 0
        /// Frames that arrived while no caster took the stream or its buffer was full, or
        /// whose write failed when the connection was lost.
        public var framesDropped = 0
        /// Streams the caster accepted.
        public var connections = 0
        /// Answers other than acceptance.
        public var refusals = 0
        /// Why no caster takes the stream, during an outage.
        public var lastError: String?
    }

    public let configuration: Configuration
    /// Where the connection, its writes and its timers run.
    public let eventLoop: any EventLoop
    private let logger: Logger
    private let connector: CasterConnector
    private let handshake: NTRIPServerHandshake

    private struct Shared {
        var counters = Counters()
        /// Bytes of frames on their way to the event loop from another thread.
        var inTransit = 0
    }

    private let shared = NIOLockedValueBox(Shared())

    /// The kernel's send buffer asked for the stream (Linux doubles it): room for some
    /// seconds of a base's frames, and 32 KB a second over a link of 0.5 s round trip.
    /// Left to the kernel, it grows to megabytes: a caster that stops reading would take
    /// minutes of frames, stale on arrival, before the stall below could be seen.
    static let streamSendBuffer = 8 * 1024

    // On the event loop only.
    private var stream: (any Channel)?
    /// When each frame given to the stream whose write has not completed was given, oldest
    /// first (writes complete in order). Bounded by the stream's high water mark: past it,
    /// frames are dropped, not given.
    private var waiting = CircularBuffer<NIODeadline>()

    /// Pushes on `eventLoop`. Throws when the certificate authorities cannot be read.
    public init(configuration: Configuration, eventLoop: any EventLoop, logger: Logger) throws {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        connector = try CasterConnector(caster: configuration.caster, certificateAuthorities: configuration.certificateAuthorities)
        handshake = NTRIPServerHandshake(caster: configuration.caster, version: configuration.version, userAgent: configuration.userAgent)
    }

    /// The counters now.
    public var counters: Counters { shared.withLockedValue { $0.counters } }

    /// For the status line: `ntrip server: ntrip://base@caster:2101/MOUNT streaming (NTRIP 1), 1200 frames sent, ...`.
    public var status: String {
        let counters = self.counters
        let state = counters.connected
            ? "streaming (NTRIP \(configuration.version.rawValue))" : counters.lastError.map { "retrying (\($0))" } ?? "not connected"
        return "ntrip server: \(configuration.caster.description) \(state), \(counters.framesSent) frames (\(counters.bytesSent) bytes) sent, "
            + "\(counters.framesDropped) dropped, \(counters.connections) connections, \(counters.refusals) refusals"
    }

    /// Takes `frame` for the caster: written at once when called on ``eventLoop``;
    /// otherwise handed to it, with at most the high water mark's worth of frames on the
    /// way (past it they are dropped and counted).
    public func receive(rtcm3 frame: ByteBuffer) {
        guard !eventLoop.inEventLoop else { return send(frame) }
        let size = frame.readableBytes
        let admitted = shared.withLockedValue { shared in
            guard shared.inTransit + size <= configuration.writeBuffer.high else {
                shared.counters.framesDropped += 1
                return false
            }
            shared.inTransit += size
            return true
        }
        guard admitted else { return }
        eventLoop.execute { [self] in
            shared.withLockedValue { $0.inTransit -= size }
            send(frame)
        }
    }

    /// Connects and reconnects until the task is cancelled.
    public func run() async {
        var backoff = Duration.seconds(1)
        var bareMountpoint = false
        while !Task.isCancelled {
            let outcome = await connectOnce(bareMountpoint: bareMountpoint)
            guard !Task.isCancelled else { break }
            let reason: String
            var limit = configuration.maximumBackoff
            switch outcome {
            case .ended(let why, let lasted):
                if lasted >= .seconds(60) { backoff = .seconds(1) }
                reason = why
            case .failed(let why):
                reason = why
            case .refused(let line):
                reason = "refused: '\(line)'"
                limit = configuration.maximumRefusalBackoff
                if configuration.version == .one { bareMountpoint.toggle() }
            }
            let firstOfOutage = shared.withLockedValue { shared in
                defer { shared.counters.lastError = reason }
                if case .refused = outcome { shared.counters.refusals += 1 }
                return shared.counters.lastError != reason
            }
            let message: Logger.Message = "NTRIP server: \(configuration.caster.description) \(reason); retrying in \(backoff)"
            if firstOfOutage { logger.warning(message) } else { logger.debug(message) }
            // A timer on the connection's loop: no libdispatch timer (see `EventLoopClock`).
            try? await EventLoopClock(eventLoop: eventLoop).sleep(for: backoff)
            backoff = min(backoff * 2, limit)
        }
        try? await eventLoop.submit { [self] in stream?.close(promise: nil) }.get()
    }

    /// How one connection ended.
    fileprivate enum Outcome: Sendable {
        /// The caster took the stream, which then ended after `lasted`.
        case ended(String, lasted: Duration)
        case refused(String)
        /// No connection, or no answer.
        case failed(String)
    }

    private func connectOnce(bareMountpoint: Bool) async -> Outcome {
        let handler = PushHandler(server: self, request: handshake.request(bareMountpoint: bareMountpoint))
        do {
            let channel = try await connector.connect(
                on: eventLoop, timeout: configuration.timeout, writeBuffer: configuration.writeBuffer, sendBuffer: Self.streamSendBuffer
            ) {
                try $0.addHandler(ByteToMessageHandler(StatusLineDecoder()))
                try $0.addHandler(handler)
            }.channelUnlessCancelled()
            await withTaskCancellationHandler {
                try? await channel.closeFuture.get()
            } onCancel: {
                channel.close(promise: nil)
            }
            return (try? await eventLoop.submit { handler.finalOutcome }.get()) ?? .failed("stopped")
        } catch {
            return .failed(NTRIPClient.describe(error))
        }
    }

    // MARK: The stream, on the event loop

    private func send(_ frame: ByteBuffer) {
        guard let stream, !leftIfStalled(stream), stream.isWritable else {
            shared.withLockedValue { $0.counters.framesDropped += 1 }
            return
        }
        let size = frame.readableBytes
        let written = eventLoop.makePromise(of: Void.self)
        waiting.append(.now())
        written.futureResult.whenComplete { [self] result in
            if stream === self.stream { _ = waiting.popFirst() }
            shared.withLockedValue { shared in
                switch result {
                case .success:
                    shared.counters.framesSent += 1
                    shared.counters.bytesSent += size
                case .failure:
                    shared.counters.framesDropped += 1
                }
            }
        }
        stream.writeAndFlush(handshake.framed(frame), promise: written)
    }

    /// Closes `stream` (it reconnects) when a frame has waited for its socket longer than
    /// the timeout: a caster that stopped reading, once the kernels' buffers between are
    /// full, or that reads slower than the base sends, whose frames would reach it ever
    /// later (minutes, once SwiftNIO's buffer is full) while the stream looked alive.
    /// Measured by the oldest frame's wait, not by SwiftNIO's buffer filling, which at a
    /// base's rate would take a minute more.
    private func leftIfStalled(_ stream: any Channel) -> Bool {
        guard let oldest = waiting.first, NIODeadline.now() - oldest > TimeAmount(configuration.timeout) else { return false }
        logger.warning(
            "NTRIP server: \(configuration.caster.description) left a frame waiting for \(configuration.timeout) (it reads nothing, or slower than the base sends); reconnecting")
        waiting.removeAll()
        stream.close(promise: nil)
        return true
    }

    fileprivate func accepted(_ channel: any Channel) {
        stream = channel
        waiting.removeAll()
        let outage = shared.withLockedValue { shared in
            defer {
                shared.counters.connected = true
                shared.counters.connections += 1
                shared.counters.lastError = nil
            }
            return shared.counters.lastError
        }
        let version = configuration.version.rawValue
        if let outage {
            logger.info("NTRIP server: pushing corrections to \(configuration.caster.description) again (NTRIP \(version); the outage: \(outage))")
        } else {
            logger.info("NTRIP server: pushing corrections to \(configuration.caster.description) (NTRIP \(version))")
        }
    }

    fileprivate func ended(_ channel: any Channel) {
        guard stream === channel else { return }
        stream = nil
        shared.withLockedValue { $0.counters.connected = false }
    }

    fileprivate func statusLine(_ line: String) -> NTRIPServerHandshake.Verdict {
        handshake.verdict(on: line)
    }
}

/// One connection to the caster: sends the request, waits at most the timeout for the
/// caster's status line, and hands the stream to the server once accepted.
private final class PushHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = String
    typealias OutboundOut = ByteBuffer

    private let server: NTRIPServer
    private let request: [UInt8]
    private var answerWatch: Scheduled<Void>?
    /// When the caster took the stream.
    private var acceptedAt: NIODeadline?
    private var isEnded = false
    /// How the connection ended, once it has; read on the event loop.
    private(set) var outcome = NTRIPServer.Outcome.failed("the caster closed the connection without answering")

    init(server: NTRIPServer, request: [UInt8]) {
        self.server = server
        self.request = request
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: request)), promise: nil)
        let timeout = server.configuration.timeout
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        answerWatch = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) { [self] in
            end(loopBound.value, .failed("no answer within \(timeout)"))
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        answerWatch?.cancel()
        switch server.statusLine(unwrapInboundIn(data)) {
        case .accepted:
            acceptedAt = .now()
            outcome = .ended("the caster closed the stream", lasted: .zero)
            server.accepted(context.channel)
        case .refused(let line):
            end(context, .refused(line))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        answerWatch?.cancel()
        server.ended(context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let why = (error as? NTRIPError)?.description ?? "\(error)"
        end(context, acceptedAt == nil ? .failed(why) : .ended("the stream failed: \(why)", lasted: .zero))
    }

    /// Closes the connection; the first reason given is the one kept.
    private func end(_ context: ChannelHandlerContext, _ outcome: NTRIPServer.Outcome) {
        if !isEnded { self.outcome = outcome }
        isEnded = true
        context.close(promise: nil)
    }

    /// How the connection ended, with how long an accepted stream lasted.
    var finalOutcome: NTRIPServer.Outcome {
        guard case .ended(let why, _) = outcome, let acceptedAt else { return outcome }
        return .ended(why, lasted: .nanoseconds((NIODeadline.now() - acceptedAt).nanoseconds))
    }
}
