import GPSDProtocol
import Logging
import NIOCore

/// One client connection speaking gpsd's protocol: a handler at the end of its channel's
/// pipeline, after ``RequestLineDecoder``.
///
/// It greets with VERSION, answers requests line by line, keeps the client's WATCH
/// settings, and sends what the hub publishes while the client keeps up.
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
    private var peer = "client"

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

    /// Sends one complete report now (an answer to the client's request), or cuts the
    /// client off when its outbound buffer is full. Returns whether the report went out.
    func send(_ buffer: ByteBuffer) -> Bool {
        guard write(buffer) else { return false }
        flush()
        return true
    }

    /// Queues one complete report, or cuts the client off when its outbound buffer is
    /// full: a report is never sent in part and never waits for a slow reader. The hub
    /// flushes it with the others of the same turn of the loop. Returns whether the
    /// report was queued.
    func write(_ buffer: ByteBuffer) -> Bool {
        hub.eventLoop.assertInEventLoop()
        guard let context else { return false }
        guard context.channel.isWritable else {
            hub.noteCutOff()
            hub.logger.warning("client cut off: it does not read its reports", metadata: ["peer": "\(peer)", "sent": "\(sent)"])
            self.context = nil
            context.close(promise: nil)
            return false
        }
        context.write(wrapOutboundOut(buffer), promise: nil)
        sent += 1
        awaitsFlush = true
        return true
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
