import GPSDProtocol
import Logging
import NIOCore

/// One client connection speaking gpsd's protocol: the handler of its channel, after the
/// ``BoundedSession`` that every connection starts with (which reads only while answers
/// can be written, and cuts off a client that stays over its cap for the stall timeout).
///
/// It greets with VERSION, answers requests as they come, keeps the client's WATCH
/// settings, and sends what the hub publishes. While the client *lags* (its unwritten
/// bytes past the cap), it answers nothing, and the reports of sources that cannot wait
/// are left out for it, counted. Sources that can wait are held back for it instead (when
/// it watches a stream), as long as the hub's hold lasts (``Hub/lags(_:)``); after that
/// it loses their reports too.
///
/// A session of NMEA 0183 out (``Role/nmeaFeed(_:)``) is the same, but says nothing but
/// the sentences that pass its filter, and throws away what the client sends.
///
/// Every method runs on the hub's event loop: NIO calls the handler methods there, and the
/// hub, which lives on the same loop, calls ``write(_:canBeHeldFor:)`` and ``flush()``.
final class ClientSession: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What a session speaks.
    enum Role {
        /// gpsd's protocol: VERSION at once, then answers to requests.
        case gpsd
        /// NMEA 0183 out: the devices' sentences that pass the filter, and nothing else.
        case nmeaFeed(SentenceFilter)
        /// Server-Sent Events (`GET /events`): every report as `event: tpv` (the class,
        /// in lower case) and `data:` its gpsd JSON, after an HTTP head already written.
        case eventStream
    }

    /// One spell of lagging.
    private struct Lag {
        /// Whether the hub holds back sources that can wait for this client.
        var holdsBack: Bool
    }

    private let hub: Hub
    let role: Role
    private var context: ChannelHandlerContext?
    private(set) var settings = WatchSettings()
    private(set) var sent = 0
    /// Reports left out while the client lagged.
    private(set) var dropped = 0
    private var peer = "client"
    private var requestLines = RequestLines()
    /// Requests read but not yet answered: the rest of a line, while the client lags.
    private var unanswered: [ClientRequest] = []
    private var inputEnded = false
    private var lag: Lag?

    init(hub: Hub, role: Role = .gpsd) {
        self.hub = hub
        self.role = role
    }

    /// Whether the session takes `sentence` (an NMEA feed's filter), given it watches sentences.
    func takes(sentence: [UInt8]) -> Bool {
        guard case .nmeaFeed(let filter) = role else { return true }
        return filter.passes(sentence)
    }

    /// Whether the session is an HTTP event stream.
    var isEventStream: Bool {
        if case .eventStream = role { true } else { false }
    }

    /// Whether the session is NMEA 0183 out, whose sentences carry a checksum always.
    var isNMEAFeed: Bool {
        if case .nmeaFeed = role { true } else { false }
    }

    /// An event stream's session joins a connection that is already active.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive, self.context == nil { begin(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if self.context == nil { begin(context) }
        context.fireChannelActive()
    }

    private func begin(_ context: ChannelHandlerContext) {
        self.context = context
        peer = context.remoteAddress?.description ?? "unix-socket client"
        hub.register(self)
        switch role {
        case .gpsd:
            answer(hub.versionReport)
        case .nmeaFeed:
            settings.enable = true
            settings.nmea = true
            hub.settingsChanged()
        case .eventStream:
            settings.enable = true
            settings.json = true
            settings.pps = true
            hub.settingsChanged()
        }
        tellWatching()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Gone: nothing to tell it when its lag ends here.
        devicesMissed.removeAll()
        endLag()
        hub.unregister(self)
        self.context = nil
        hub.logger.debug("client left", metadata: ["peer": "\(peer)", "sent": "\(sent)", "dropped": "\(dropped)"])
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .gpsd = role else { return }  // an NMEA listener's input means nothing
        var bytes = unwrapInboundIn(data)
        requestLines.append(&bytes)
        answerWhatCanBeAnswered()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent, case .gpsd = role {
            inputEnded = true
            if let last = requestLines.finish() { take(last) }
            answerWhatCanBeAnswered()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            endLag()
            answerWhatCanBeAnswered()
        } else {
            startLag()
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        hub.logger.debug("client error", metadata: ["peer": "\(peer)", "error": "\(error)"])
        context.close(promise: nil)
    }

    /// Requests answered in one turn of the loop before the others' work comes first.
    static let requestsPerTurn = 64

    /// Answers requests while the channel can take the answers, and reads further only
    /// while it still can; a client that ended its input is closed once all is answered.
    /// At most ``requestsPerTurn`` are answered at once: a client sending requests as
    /// fast as it can delays the devices' reports and the other clients by that much.
    private func answerWhatCanBeAnswered() {
        guard let context else { return }
        var answered = 0
        while context.channel.isWritable {
            guard answered < Self.requestsPerTurn else {
                context.channel.setOption(.autoRead, value: false).whenFailure { _ in }
                hub.eventLoop.assumeIsolated().execute { [weak self] in self?.answerWhatCanBeAnswered() }
                return
            }
            answered += 1
            if !unanswered.isEmpty {
                answer(unanswered.removeFirst())
            } else if let line = requestLines.next() {
                take(line)
            } else {
                break
            }
        }
        let idle = unanswered.isEmpty && requestLines.isEmpty
        if inputEnded, idle {
            // Once the answers queued before it are written.
            context.close(after: context.writeAndFlush(wrapOutboundOut(ByteBuffer())))
            return
        }
        // Reading on: while the channel is over its cap, its bounded session holds the reads.
        context.channel.setOption(.autoRead, value: true).whenFailure { _ in }
    }

    /// Tells the connection's bounds whether it watches: a watcher is never closed for
    /// idleness. As in gpsd, a WATCH enabled is one, whatever it streams: a poller enables
    /// a WATCH that streams nothing and asks `?POLL;` as seldom as it likes. At a
    /// connection cap, one sent nothing and asking nothing for its idle timeout makes room.
    private func tellWatching() {
        context?.triggerUserOutboundEvent(SessionActivity.watching(settings.enable), promise: nil)
    }

    private func take(_ line: RequestLine) {
        context?.triggerUserOutboundEvent(SessionActivity.request, promise: nil)
        switch line {
        case .line(let bytes):
            unanswered += ClientRequest.parse(line: bytes.readableBytesView)
        case .tooLong(let limit):
            hub.noteRefused()
            answer(ByteBuffer(bytes: SessionReport.error("Request longer than \(limit) bytes: discarded.")))
        }
    }

    private func answer(_ request: ClientRequest) {
        switch request {
        case .version:
            answer(hub.versionReport)
        case .devices:
            answer(ByteBuffer(bytes: hub.devicesReport()))
        case .watch(let watch):
            if let device = watch?.device, !hub.knows(device: device) {
                hub.noteRefused()
                return answer(ByteBuffer(bytes: SessionReport.error("No such device as \(device)")))
            }
            if let watch {
                settings.apply(watch)
                hub.settingsChanged()
                tellWatching()
            }
            answer(ByteBuffer(bytes: hub.devicesReport()))
            answer(ByteBuffer(bytes: SessionReport.watch(settings)))
        case .poll:
            answer(ByteBuffer(bytes: hub.pollReport(device: settings.device)))
        case .device(let device):
            answer(ByteBuffer(bytes: hub.deviceReport(for: device)))
        case .status:
            answer(ByteBuffer(bytes: hub.statusDocument(services: hub.services())))
        case .unrecognized(let text):
            hub.noteRefused()
            answer(ByteBuffer(bytes: SessionReport.error("Unrecognized request '\(text.prefix(80))'")))
        }
    }

    /// Sends an answer to the client's own request now.
    private func answer(_ buffer: ByteBuffer) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        sent += 1
    }

    /// Queues one complete report, to be flushed by the hub with the others of the same
    /// turn of the loop: a report is never sent in part. While the client lags, a report
    /// is queued only when its source is being held back for the client (`canBeHeld`, and
    /// the hold has not run out); otherwise it is left out, counted. Returns whether the
    /// report was queued.
    func write(_ buffer: ByteBuffer, canBeHeldFor canBeHeld: Bool = false) -> Bool {
        hub.eventLoop.assertInEventLoop()
        guard let context else { return false }
        if let lag, !(canBeHeld && lag.holdsBack) {
            dropped += 1
            hub.noteDropped()
            return false
        }
        context.write(wrapOutboundOut(isEventStream ? EventStream.event(buffer) : buffer), promise: nil)
        sent += 1
        awaitsFlush = true
        return true
    }

    /// Whether reports were queued since the last flush.
    private(set) var awaitsFlush = false

    /// The devices whose DEVICE notices the session lost while it lagged; the hub tells it
    /// their state once it has caught up. At most one entry a device of the daemon's.
    var devicesMissed: Set<String> = []

    /// Sends what was queued.
    func flush() {
        hub.eventLoop.assertInEventLoop()
        awaitsFlush = false
        context?.flush()
    }

    /// The channel went past its high-water mark: the hub holds back the sources that can
    /// wait for the session if a hold keeps anything for it (see ``Hub/lags(_:)``; the
    /// cut-off is the bounded session's).
    private func startLag() {
        guard lag == nil, context != nil else { return }
        lag = Lag(holdsBack: hub.lags(self))
    }

    /// The hub's hold ran out: the session loses the reports of every source until it reads.
    func holdRanOut() {
        lag?.holdsBack = false
    }

    private func endLag() {
        guard lag != nil else { return }
        lag = nil
        hub.caughtUp(self)
    }
}
