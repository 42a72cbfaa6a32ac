import NIOCore

/// The first handler of every connection of every listener: what makes a connection
/// bounded, whatever protocol the handlers after it speak.
///
/// - **It reads only while the answers can be written.** While the channel is over its
///   cap (its write buffer's high-water mark) the reads the pipeline asks for are held
///   back, and given again once the client has read down to the low mark, so a client
///   that sends without reading fills its own socket, never the daemon's memory. (The
///   handlers after it may stop reading for their own reasons too: HTTP's pipeline
///   handler while a response is outstanding.)
/// - **It cuts off a client that stays over the cap** for the stall timeout, whether or
///   not it reads a few bytes meanwhile.
/// - **It is idle when it watches nothing and nothing happened** (no whole request came,
///   nothing was sent) for its listener's idle timeout; then ``SessionTable`` closes it,
///   or closes it earlier to make room for a new connection at a cap.
/// - **It counts against its side's cap**: the local sockets' when its listener is a
///   Unix-domain socket, the network listeners' otherwise (``ListenerSide``).
///
/// The protocol handlers tell it of requests and watching with ``SessionActivity``
/// outbound user events. Everything runs on the hub's event loop.
final class BoundedSession: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let table: SessionTable
    private let idleTimeout: Duration
    /// The listener it came from (its server channel, known once active): caps are per
    /// listener.
    private(set) var listener: ObjectIdentifier
    /// Which cap it counts against, by its listener's address (known once active).
    private(set) var side = ListenerSide.network
    private var context: ChannelHandlerContext?
    private var admitted = false
    /// A read the pipeline asked for while the channel was over its cap.
    private var readHeld = false
    private var stall: Scheduled<Void>?
    private(set) var lastActivity = NIODeadline.now()
    private(set) var isWatching = false
    /// Whether a whole request ever came.
    private(set) var hasAsked = false

    init(table: SessionTable, idleTimeout: Duration) {
        self.table = table
        self.idleTimeout = idleTimeout
        listener = ObjectIdentifier(table)
    }

    /// When it becomes idle, if it watches nothing and nothing happens before.
    var idleDeadline: NIODeadline { lastActivity + TimeAmount(idleTimeout) }

    /// Whether it watches nothing and nothing happened for its idle timeout, at `now`.
    func isIdle(at now: NIODeadline) -> Bool {
        !isWatching && now >= idleDeadline
    }

    /// Whether it may be closed to make room at a connection cap, at `now`: it watches
    /// nothing, or it watches but was sent nothing and asked nothing for its idle timeout.
    func mayMakeRoom(at now: NIODeadline) -> Bool {
        !isWatching || now >= idleDeadline
    }

    /// Closes the connection (the table's decision).
    func close() {
        context?.close(promise: nil)
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        if let parent = context.channel.parent {
            listener = ObjectIdentifier(parent)
            side = ListenerSide(listeningOn: parent.localAddress)
        }
        lastActivity = .now()
        guard table.admit(self) else {
            context.close(promise: nil)
            return
        }
        admitted = true
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stall?.cancel()
        stall = nil
        table.remove(self)
        self.context = nil
        // A refused connection never told the handlers after it that it was active.
        if admitted { context.fireChannelInactive() }
    }

    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            context.read()
        } else {
            readHeld = true
        }
    }

    /// Something was sent: the connection is not idle (one clock reading per flush, not
    /// per report).
    func flush(context: ChannelHandlerContext) {
        lastActivity = .now()
        context.flush()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stall?.cancel()
            stall = nil
            if readHeld {
                readHeld = false
                context.read()
            }
        } else if stall == nil {
            let timeout = TimeAmount(table.limits.stallTimeout)
            stall = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [weak self] in self?.cutOff() }
        }
        context.fireChannelWritabilityChanged()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let activity = event as? SessionActivity else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        switch activity {
        case .request:
            lastActivity = .now()
            hasAsked = true
        case .watching(let watching):
            isWatching = watching
            lastActivity = .now()
            if !watching { table.planIdleCheck(for: self) }
        }
        promise?.succeed()
    }

    /// The client stayed over its cap for the stall timeout.
    private func cutOff() {
        stall = nil
        guard let context, !context.channel.isWritable else { return }
        let unread = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        table.noteCutOff(peer: context.remoteAddress?.description ?? "unix-socket client", unread: unread)
        context.close(promise: nil)
    }
}
