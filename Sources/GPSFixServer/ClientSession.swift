import GPSDProtocol
import Logging
import NIOCore

/// One client connection speaking gpsd's protocol: a handler at the end of its channel's
/// pipeline, after ``RequestLineDecoder``.
///
/// It greets with VERSION, answers requests line by line, keeps the client's WATCH
/// settings, and sends what the hub publishes.
///
/// A client whose outbound buffer passes its high-water mark *lags*: the hub holds back
/// the sources that can wait until it catches up (below the low-water mark), and drops
/// for it, counted, the reports of sources that cannot. A client that lags for the
/// hub's stall timeout while its socket takes nothing is cut off.
///
/// Every method runs on the hub's event loop: NIO calls the handler methods there, and the
/// hub, which lives on the same loop, calls ``write(_:)`` and ``flush()``, which assert it.
final class ClientSession: ChannelInboundHandler {
    typealias InboundIn = RequestLine
    typealias OutboundOut = ByteBuffer

    private let hub: Hub
    private var context: ChannelHandlerContext?
    private(set) var settings = WatchSettings()
    private(set) var sent = 0
    /// Reports left out while the client lagged (of sources that cannot wait).
    private(set) var dropped = 0
    /// Whether the client's outbound buffer is past its high-water mark.
    private var isLagging: Bool { takenWhileLagging != nil }
    private var peer = "client"
    /// Bytes of reports queued for the client since it connected.
    private var queuedBytes = 0
    /// While the client lags, the bytes its socket had taken at the last check of its
    /// progress; `nil` while it keeps up.
    private var takenWhileLagging: Int?

    init(hub: Hub) {
        self.hub = hub
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        peer = context.remoteAddress?.description ?? "unix-socket client"
        hub.register(self)
        _ = send(ByteBuffer(bytes: SessionReport.version(release: hub.release)))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        takenWhileLagging = nil
        hub.unregister(self)
        self.context = nil
        hub.logger.debug("client left", metadata: ["peer": "\(peer)", "sent": "\(sent)"])
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .line(let line):
            for request in ClientRequest.parse(line: line.readableBytesView) { answer(request) }
        case .tooLong(let limit):
            hub.noteRefused()
            _ = send(ByteBuffer(bytes: SessionReport.error("Request longer than \(limit) bytes: discarded.")))
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, isLagging {
            takenWhileLagging = nil
            hub.caughtUp(self)
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        hub.logger.debug("client error", metadata: ["peer": "\(peer)", "error": "\(error)"])
        context.close(promise: nil)
    }

    private func answer(_ request: ClientRequest) {
        switch request {
        case .version:
            _ = send(ByteBuffer(bytes: SessionReport.version(release: hub.release)))
        case .devices:
            _ = send(ByteBuffer(bytes: hub.devicesReport()))
        case .watch(let watch):
            if let watch {
                settings.apply(watch)
                hub.settingsChanged()
            }
            if watch != nil { _ = send(ByteBuffer(bytes: hub.devicesReport())) }
            _ = send(ByteBuffer(bytes: SessionReport.watch(settings)))
        case .poll:
            _ = send(ByteBuffer(bytes: hub.pollReport()))
        case .device(let device):
            _ = send(ByteBuffer(bytes: hub.deviceReport(for: device)))
        case .unrecognized(let text):
            hub.noteRefused()
            _ = send(ByteBuffer(bytes: SessionReport.error("Unrecognized request '\(text.prefix(80))'")))
        }
    }

    /// Sends one complete report now (an answer to the client's request). Returns
    /// whether the report went out.
    func send(_ buffer: ByteBuffer) -> Bool {
        guard write(buffer) else { return false }
        flush()
        return true
    }

    /// Queues one complete report, to be flushed by the hub with the others of the same
    /// turn of the loop: a report is never sent in part. While the client lags, the
    /// report is queued all the same when `dropWhileLagging` is off (its source is being
    /// held back, or it answers the client) and left out, counted, when it is on.
    /// Returns whether the report was queued.
    func write(_ buffer: ByteBuffer, dropWhileLagging: Bool = false) -> Bool {
        hub.eventLoop.assertInEventLoop()
        guard let context else { return false }
        if !context.channel.isWritable {
            startLagging(context)
            if dropWhileLagging {
                dropped += 1
                hub.noteDropped()
                return false
            }
        }
        queuedBytes += buffer.readableBytes
        context.write(wrapOutboundOut(buffer), promise: nil)
        sent += 1
        awaitsFlush = true
        return true
    }

    /// Notes that the client lags, once per lag, and checks its progress a stall timeout later.
    private func startLagging(_ context: ChannelHandlerContext) {
        guard !isLagging else { return }
        takenWhileLagging = taken(context)
        hub.lags(self)
        scheduleProgressCheck()
    }

    private func scheduleProgressCheck() {
        hub.eventLoop.assumeIsolated().scheduleTask(in: hub.stallTimeout) { [weak self] in self?.checkProgress() }
    }

    /// Cuts the client off when it still lags and its socket took nothing since the last check.
    private func checkProgress() {
        guard let context, let previously = takenWhileLagging else { return }
        let taken = taken(context)
        if taken > previously {
            takenWhileLagging = taken
            return scheduleProgressCheck()
        }
        let unread = queuedBytes - taken
        hub.noteCutOff()
        hub.logger.warning(
            "client cut off: it read none of its reports for \(hub.stallTimeout)",
            metadata: ["peer": "\(peer)", "sent": "\(sent)", "dropped": "\(dropped)", "unread": "\(unread) bytes"])
        self.context = nil
        takenWhileLagging = nil
        context.close(promise: nil)
        hub.unregister(self)
    }

    /// The bytes of reports the client's socket has taken: those queued less those
    /// still waiting in the channel.
    private func taken(_ context: ChannelHandlerContext) -> Int {
        queuedBytes - ((try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0)
    }

    /// Whether reports were queued since the last flush.
    private(set) var awaitsFlush = false

    /// Sends what was queued.
    func flush() {
        hub.eventLoop.assertInEventLoop()
        awaitsFlush = false
        context?.flush()
    }
}
