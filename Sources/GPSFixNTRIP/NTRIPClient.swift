import ClientTLS
import GPSFix
import GPSFixDevices
import GPSFixServer
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import OutputFormats

/// RTCM corrections from an NTRIP caster into one receiver, and the receiver's position
/// back to the caster.
///
/// Everything runs on one SwiftNIO event loop: resolving (off the loop, by NIO), connecting,
/// TLS, reading the caster and writing the receiver's port (``CorrectionWriter``), so a
/// caster that is slow, silent or gone delays neither the device nor any client. A
/// connection that fails, is refused or goes silent for ``Configuration/timeout`` is
/// logged once per outage with its reason and retried with a backoff, from a second up
/// to ``Configuration/maximumBackoff``. A stream that lasted a minute starts the backoff
/// again from a second; one that ends sooner (a caster that lets another rover log in
/// with the same account) does not, so the two rovers do not take turns every second.
///
/// As a ``ReportSubscriber`` it follows its device's TPVs and SKYs: the position it sends
/// is the live fix's (or the configured one before the first fix), from the moment the
/// caster accepts and then every ``Configuration/positionInterval``.
public final class NTRIPClient: ReportSubscriber, @unchecked Sendable {
    public struct Configuration: Sendable {
        public var caster: NTRIPCaster
        /// The receiver's path, as the hub names its reports.
        public var device: String
        /// Between positions sent; zero sends none.
        public var positionInterval: Duration
        /// Sent before the first fix, when given.
        public var fixedPosition: PositionReport?
        /// For the connection, the caster's answer, and the silence of an accepted stream.
        public var timeout: Duration
        public var maximumBackoff: Duration
        /// The certificate authorities for `ntrips://` (a PEM file); the system's when `nil`.
        public var certificateAuthorities: String?
        /// After `NTRIP ` in `User-Agent`: `GPSFix/0.1`.
        public var userAgent: String
        /// Where every frame goes besides the receiver (the caster's relay), when given.
        public var relay: CorrectionRelay?

        public init(
            caster: NTRIPCaster, device: String, positionInterval: Duration = .seconds(10), fixedPosition: PositionReport? = nil,
            timeout: Duration = .seconds(30),
            maximumBackoff: Duration = .seconds(60), certificateAuthorities: String? = nil, userAgent: String,
            relay: CorrectionRelay? = nil
        ) {
            self.caster = caster
            self.device = device
            self.positionInterval = positionInterval
            self.fixedPosition = fixedPosition
            self.timeout = timeout
            self.maximumBackoff = maximumBackoff
            self.certificateAuthorities = certificateAuthorities
            self.userAgent = userAgent
            self.relay = relay
        }
    }

    /// What the client received, wrote and dropped.
    public struct Counters: Sendable {
        /// Whether a caster's stream is open now.
        public var connected = false
        /// 1 or 2, of the current or last stream.
        public var version: Int?
        public var bytesReceived = 0
        public var framesReceived = 0
        /// Intact frames received, by message type.
        public var framesByType: [Int: Int] = [:]
        /// Dropped before the queue: candidate frames whose CRC failed, bytes outside frames.
        public var badCRC = 0
        public var bytesSkipped = 0
        /// Accepted streams after the first.
        public var reconnects = 0
        public var positionsSent = 0
        /// Positions not sent because the caster had not read the ones before (its window
        /// full): at most SwiftNIO's write buffer waits for a caster that does not read.
        public var positionsDropped = 0
        /// Why the caster is not streaming, during an outage.
        public var lastError: String?
        /// When the newest intact frame arrived.
        var newestFrame: NIODeadline?
        /// The receiver's writer's (every frame written to the receiver).
        var writer = ReceiverWriter.Counters()

        public var framesWritten: Int { writer.written }
        public var droppedQueueFull: Int { writer.droppedQueueFull }
        public var droppedStale: Int { writer.droppedStale }
        public var failedWrites: Int { writer.failedWrites }
        /// Seconds since the newest frame arrived; `nil` before the first.
        public var newestCorrectionAge: Double? { newestFrame.map { Double((NIODeadline.now() - $0).nanoseconds) / 1e9 } }
        /// From a frame's arrival to its write to the port, over the last 1024 frames.
        public var latencyMedian: Duration? { writer.latencies.percentile(0.5).map { .nanoseconds($0.nanoseconds) } }
        public var latency99: Duration? { writer.latencies.percentile(0.99).map { .nanoseconds($0.nanoseconds) } }
    }

    public let configuration: Configuration
    let eventLoop: any EventLoop
    private let logger: Logger
    private let connector: CasterConnector
    private let box = NIOLockedValueBox(Counters())
    private let writer: ReceiverWriter

    /// The device's latest position and sky, and whether the stream has had the live
    /// position yet: updated where the hub publishes (no hop to this client's loop per
    /// report), read where a position is sent.
    private struct Position {
        var live: PositionReport?
        var sky: (used: Int?, hdop: Double?) = (nil, nil)
        /// Whether a stream is open, and whether the live position was sent on it yet.
        var streaming = false
        var liveSent = false
    }

    private let position = NIOLockedValueBox(Position())

    /// What may wait to go to the caster: the request, then a short GGA every few seconds.
    /// A caster that has not read about 50 of them is not reading; the next are dropped and
    /// counted (``Counters/positionsDropped``), not kept.
    static let uploadBuffer = ChannelOptions.Types.WriteBufferWaterMark(low: 1024, high: 4096)
    /// The socket's own send buffer (the kernel doubles it), which it would otherwise grow
    /// to megabytes for a caster that does not read.
    static let uploadSendBuffer = 4096

    // On the event loop only.
    private var stream: (any Channel)?
    private var positionTimer: RepeatedTask?
    private var everAccepted = false

    /// Frames go to the receiver through `writer`, its device's one writer, on whose event
    /// loop the client runs. Throws when the certificate authorities cannot be read.
    public init(configuration: Configuration, writer: ReceiverWriter, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.writer = writer
        eventLoop = writer.eventLoop
        connector = try CasterConnector(caster: configuration.caster, certificateAuthorities: configuration.certificateAuthorities)
    }

    /// The counters now.
    public var counters: Counters {
        var counters = box.withLockedValue { $0 }
        counters.writer = writer.counters
        return counters
    }

    /// For the status line: `ntrip: ntrip://user@caster:2101/MOUNT streaming (NTRIP 2), 1200 frames, 1200 written, ...`.
    public var status: String {
        let counters = self.counters
        let state = counters.connected
            ? "streaming (NTRIP \(counters.version ?? 1))" : counters.lastError.map { "retrying (\($0))" } ?? "not connected"
        let age = counters.newestCorrectionAge.map { ", newest \(Self.seconds($0)) s ago" } ?? ""
        let latency = counters.latencyMedian.flatMap { median in
            counters.latency99.map { ", written in \(Self.milliseconds(median)) ms (p99 \(Self.milliseconds($0)) ms)" }
        } ?? ""
        return "ntrip: \(configuration.caster.description) \(state), \(counters.framesReceived) frames, \(counters.framesWritten) written, "
            + "\(counters.droppedQueueFull + counters.droppedStale) dropped, \(counters.badCRC) bad CRC\(age)\(latency), "
            + "\(counters.reconnects) reconnects"
    }

    /// `duration` in milliseconds, with three decimals.
    private static func milliseconds(_ duration: Duration) -> String {
        let microseconds = Int(duration.components.seconds) * 1_000_000 + Int(duration.components.attoseconds / 1_000_000_000_000)
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    private static func seconds(_ value: Double) -> String {
        FixedPoint.string(value, decimals: 1)
    }

    public func receive(_ report: PublishedReport) {
        guard report.device == configuration.device else { return }
        switch report.content {
        case .tpv(let fix):
            let sendNow = position.withLockedValue { position in
                position.live = PositionReport(fix: fix, satellitesUsed: position.sky.used, hdop: position.sky.hdop) ?? position.live
                return position.live != nil && position.streaming && !position.liveSent
            }
            // The first fix is sent at once: a virtual reference station needs it.
            if sendNow { eventLoop.execute { [self] in sendPosition() } }
        case .sky(let view):
            position.withLockedValue { $0.sky = (view.usedCount, view.hdop) }
        default:
            break
        }
    }

    /// Connects and reconnects until the task is cancelled.
    public func run() async {
        var backoff = Duration.seconds(1)
        while !Task.isCancelled {
            let began = NIODeadline.now()
            let (streamed, reason) = await connectOnce()
            guard !Task.isCancelled else { break }
            if streamed, NIODeadline.now() - began >= .minutes(1) { backoff = .seconds(1) }
            let firstOfOutage = box.withLockedValue { counters in
                defer { counters.lastError = reason }
                return counters.lastError == nil
            }
            if firstOfOutage {
                logger.warning("NTRIP: no corrections from \(configuration.caster.description): \(reason); retrying until it answers")
            } else {
                logger.debug("NTRIP: still no corrections: \(reason)")
            }
            // A timer on the connection's loop: no libdispatch timer (see `EventLoopClock`).
            try? await EventLoopClock(eventLoop: eventLoop).sleep(for: backoff)
            backoff = min(backoff * 2, configuration.maximumBackoff)
        }
        try? await eventLoop.submit { [self] in
            positionTimer?.cancel()
            writer.close()
        }.get()
    }

    /// One connection, until it ends: whether it streamed, and why it ended.
    private func connectOnce() async -> (streamed: Bool, reason: String) {
        let handler = StreamHandler(client: self)
        do {
            let channel = try await connector.connect(
                on: eventLoop, timeout: configuration.timeout, writeBuffer: Self.uploadBuffer, sendBuffer: Self.uploadSendBuffer
            ) { try $0.addHandler(handler) }.channelUnlessCancelled()
            await withTaskCancellationHandler {
                try? await channel.closeFuture.get()
            } onCancel: {
                channel.close(promise: nil)
            }
            return (try? await eventLoop.submit { (handler.streamed, handler.reason ?? "the caster closed the connection") }.get())
                ?? (false, "stopped")
        } catch {
            return (false, Self.describe(error))
        }
    }

    /// Why a connection could not be made, in a few words.
    static func describe(_ error: any Error) -> String {
        switch error {
        case ChannelError.connectTimeout(let amount): "no connection within \(amount.nanoseconds / 1_000_000_000) s"
        case let error as NIOConnectionError:
            error.connectionErrors.first.map { "cannot connect: \($0.error)" } ?? (error.dnsAError ?? error.dnsAAAAError).map { "cannot resolve the caster: \($0)" }
                ?? "cannot connect"
        default: "\(error)"
        }
    }

    // MARK: The stream, on the event loop

    fileprivate func accepted(_ channel: any Channel, version: Int) {
        stream = channel
        position.withLockedValue { position in
            position.streaming = true
            position.liveSent = false
        }
        box.withLockedValue { counters in
            counters.connected = true
            counters.version = version
            if everAccepted { counters.reconnects += 1 }
        }
        // Said once; an outage ends with its first frame (see `received`), not here: a
        // caster may accept and stay silent.
        if !everAccepted {
            logger.info("NTRIP: streaming corrections from \(configuration.caster.description) (NTRIP \(version))")
        } else {
            logger.debug("NTRIP: \(configuration.caster.description) accepted again (NTRIP \(version))")
        }
        everAccepted = true
        sendPosition()
        if configuration.positionInterval > .zero {
            let interval = TimeAmount(configuration.positionInterval)
            positionTimer = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [self] _ in sendPosition() }
        }
    }

    /// `bytes` arrived at `arrivedAt`, completing `frames`; `badCRC` candidate frames and
    /// `skipped` bytes were dropped.
    fileprivate func received(bytes: Int, frames: [RTCMFrame], badCRC: Int, skipped: Int, arrivedAt: NIODeadline) {
        let outage = box.withLockedValue { counters -> String? in
            counters.bytesReceived += bytes
            counters.framesReceived += frames.count
            counters.badCRC += badCRC
            counters.bytesSkipped += skipped
            for frame in frames { counters.framesByType[frame.messageType, default: 0] += 1 }
            guard !frames.isEmpty else { return nil }
            counters.newestFrame = arrivedAt
            defer { counters.lastError = nil }
            return counters.lastError
        }
        if let outage { logger.info("NTRIP: corrections resume from \(configuration.caster.description) (the outage: \(outage))") }
        for frame in frames {
            writer.enqueue(frame.bytes, arrivedAt: arrivedAt)
            configuration.relay?.forward(frame.bytes)
        }
    }

    fileprivate func ended(_ channel: any Channel) {
        guard stream === channel else { return }
        stream = nil
        position.withLockedValue { $0.streaming = false }
        positionTimer?.cancel()
        positionTimer = nil
        box.withLockedValue { $0.connected = false }
    }

    /// Sends the position, when one is known and the caster streams.
    private func sendPosition() {
        guard configuration.positionInterval > .zero, let stream else { return }
        let report = self.position.withLockedValue { position -> PositionReport? in
            if position.live != nil { position.liveSent = true }
            return position.live ?? configuration.fixedPosition
        }
        guard let report else { return }
        guard stream.isWritable else { return box.withLockedValue { $0.positionsDropped += 1 } }
        stream.writeAndFlush(ByteBuffer(bytes: report.gga(at: .systemNow())), promise: nil)
        box.withLockedValue { $0.positionsSent += 1 }
    }
}

/// One connection to the caster: sends the request, reads the answer, finds the frames,
/// and ends the connection when the caster does not answer or goes silent.
private final class StreamHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let client: NTRIPClient
    private var reader: NTRIPResponseReader
    private var finder = RTCMFrameFinder()
    private var isAccepted = false
    /// When the last RTCM 3 frame arrived (or the connection was made, or the caster
    /// accepted): bytes that hold none (another format, a proxy's page) are not
    /// corrections, and keep no stream alive.
    private var lastFrame = NIODeadline.now()
    /// Bytes received since the last frame.
    private var bytesWithoutFrames = 0
    private var watch: Scheduled<Void>?
    /// Whether frames arrived on this connection.
    private(set) var streamed = false
    /// Why the connection ended, once it has.
    private(set) var reason: String?

    init(client: NTRIPClient) {
        self.client = client
        reader = NTRIPResponseReader(caster: client.configuration.caster)
    }

    private var timeout: TimeAmount { TimeAmount(client.configuration.timeout) }

    func channelActive(context: ChannelHandlerContext) {
        let request = client.configuration.caster.request(userAgent: client.configuration.userAgent)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: request)), promise: nil)
        lastFrame = .now()
        watchSilence(context: context, reason: "no answer within \(timeout.nanoseconds / 1_000_000_000) s")
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrivedAt = NIODeadline.now()
        let bytes = Array(unwrapInboundIn(data).readableBytesView)
        var events: [NTRIPResponseReader.Event] = []
        var fault: NTRIPError?
        do {
            try reader.feed(bytes, into: &events)
        } catch {
            fault = error
        }
        // What arrived whole before a fault is delivered; then the connection ends.
        defer { if let fault { end(context, because: fault.description) } }
        for event in events {
            switch event {
            case .accepted(let version):
                isAccepted = true
                // The caster's wait for its first frame starts once it has accepted.
                lastFrame = arrivedAt
                client.accepted(context.channel, version: version)
            case .data(let payload):
                let before = finder.statistics
                var frames: [RTCMFrame] = []
                finder.feed(payload) { frames.append($0) }
                if frames.isEmpty {
                    bytesWithoutFrames += payload.count
                } else {
                    lastFrame = arrivedAt
                    bytesWithoutFrames = 0
                }
                streamed = streamed || !frames.isEmpty
                client.received(
                    bytes: payload.count, frames: frames, badCRC: finder.statistics.badCRC - before.badCRC,
                    skipped: finder.statistics.bytesSkipped - before.bytesSkipped, arrivedAt: arrivedAt)
            case .sourceTable:
                return end(context, because: "the caster has no such mountpoint (it sent its source table)")
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        watch?.cancel()
        if reason == nil {
            reason = isAccepted ? "the caster closed the stream" : "the caster closed the connection without answering"
            if case .sourceTable? = reader.finish().first { reason = "the caster has no such mountpoint (it sent its source table)" }
        }
        client.ended(context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(context, because: "\(error)")
    }

    private func end(_ context: ChannelHandlerContext, because why: String) {
        if reason == nil { reason = why }
        context.close(promise: nil)
    }

    /// Ends the connection once nothing arrived for the timeout: no answer, or a stream
    /// gone silent or sending no frame. One timer, set again for the time left after the
    /// last frame.
    private func watchSilence(context: ChannelHandlerContext, reason: String) {
        let deadline = lastFrame + timeout
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        watch = context.eventLoop.scheduleTask(deadline: deadline) { [self] in
            let context = loopBound.value
            if lastFrame + timeout <= .now() {
                let seconds = timeout.nanoseconds / 1_000_000_000
                let silence = !isAccepted ? reason
                    : bytesWithoutFrames > 0
                    ? "no RTCM 3 frame for \(seconds) s, only \(bytesWithoutFrames) bytes of something else: is the mountpoint's format RTCM 3?"
                    : "no corrections for \(seconds) s"
                end(context, because: silence)
            } else {
                watchSilence(context: context, reason: reason)
            }
        }
    }
}
