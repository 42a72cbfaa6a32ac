#if canImport(Glibc)
import Glibc
#endif
import GPSFixDevices
import NIOCore
import NIOPosix
import ReceiverFraming

/// One connection to the daemon's control socket: `gpsfix ubx` talking to a receiver the
/// daemon holds. Only root and the daemon's own user are served (`SO_PEERCRED`).
///
/// Messages both ways are a type byte, a big-endian 16-bit length and that many bytes
/// (``ControlMessage``): `H` names the device, answered `O` with its speed or `E` with why
/// not; then `F` carries one whole UBX frame each way (the receiver's answers to
/// configuration: acknowledgements, CFG, MON and SEC replies, survey progress), and `S`
/// asks for a new port speed, answered `O`. One conversation per receiver at a time,
/// through its ``ReceiverConversations``: while another holds the receiver (the daemon's
/// keeper), `H` is answered `W` and `O` follows when the turn comes. When it ends the
/// daemon asks the receiver who it is again (MON-VER), so DEVICE follows a change.
final class ControlSession: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How many of a conversation's frames may wait for the port at once: a tool sends one
    /// and waits for its answer, so more is a flood, which would crowd out corrections.
    static let framesInFlight = 4

    private let receivers: [String: ReceiverControl]
    private var pending: [UInt8] = []
    private var receiver: ReceiverControl?
    /// The turn this conversation holds, once it began.
    private var turn: ConversationTurn?
    /// The receiver whose turn this connection waits for, and its request once it waits.
    private var awaiting: ReceiverControl?
    private var waitingRequest: ReceiverConversations.WaitingRequest?
    /// This conversation's frames queued and not yet written.
    private var inFlight = 0
    /// A speed change asked for and not yet answered: one at a time.
    private var changingSpeed = false
    /// Whether the peer is root or the daemon's user: nothing is read before.
    private var authorized = false

    init(receivers: [String: ReceiverControl]) {
        self.receivers = receivers
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard let provider = context.channel as? any SocketOptionProvider else { return refuse("no peer credentials", context) }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        future.whenComplete { result in
            let (session, context) = bound.value
            guard case .success(let credentials) = result, credentials.uid == 0 || credentials.uid == geteuid() else {
                return session.refuse("only root and the daemon's user may configure its receivers", context)
            }
            session.authorized = true
            session.readMessages(context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        pending += bytes.readableBytesView
        if authorized { readMessages(context) }
        // Refused as soon as its header says so, not once its bytes have come.
        if ControlMessage.declaresTooLong(pending) { refuse("a message over the limit", context) }
    }

    private func readMessages(_ context: ChannelHandlerContext) {
        while let message = ControlMessage.take(from: &pending) {
            context.triggerUserOutboundEvent(SessionActivity.request, promise: nil)
            handle(message, context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    private func handle(_ message: ControlMessage, _ context: ChannelHandlerContext) {
        // A turn taken away at its deadline sends nothing more: its connection is closing.
        if let receiver, let turn, !receiver.conversations.holds(turn) {
            return refuse("this conversation's turn is over", context)
        }
        switch (message.type, receiver) {
        case (UInt8(ascii: "H"), nil):
            let asked = String(decoding: message.payload, as: UTF8.self)
            guard let found = receivers[asked] else {
                return refuse(with: .notServed, context)
            }
            guard found.port.duplicateOpenDescriptor().map({ close($0) }) != nil else {
                return refuse("\(asked) is not open now (unplugged?); try again once the daemon reads it", context)
            }
            guard awaiting == nil else { return refuse("one H message per connection", context) }
            requestTurn(of: found, asked: asked, context)
        case (UInt8(ascii: "F"), let receiver?):
            guard message.payload.withUnsafeBytes({ UBXFrame(validating: $0) }) != nil else {
                return refuse("an F message carries one whole UBX frame", context)
            }
            guard inFlight < Self.framesInFlight else {
                return refuse("more than \(Self.framesInFlight) frames waiting for the receiver: send one, then wait for its answer", context)
            }
            inFlight += 1
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            receiver.writer.send(message.payload) { _ in
                bound.eventLoop.execute { bound.value.inFlight -= 1 }
            }
        case (UInt8(ascii: "S"), let receiver?):
            guard let speed = message.number else { return refuse("an S message carries a speed", context) }
            guard !changingSpeed else { return refuse("one S message at a time: wait for its answer", context) }
            changingSpeed = true
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let channel = context.channel
            // Made once the frames before it are written, even if this turn ended meanwhile
            // (the tool gave up waiting on a slow line): the receiver was told to switch,
            // and a port left behind would read it no more.
            receiver.changeSpeed(to: speed) { changed in
                bound.eventLoop.execute { bound.value.changingSpeed = false }
                let answer = changed ? ControlMessage.ok(speed) : ControlMessage.error("the port cannot run at \(speed) bps")
                channel.writeAndFlush(answer.buffer, promise: nil)
            }
        default:
            refuse("unexpected message '\(UnicodeScalar(message.type))'", context)
        }
    }

    /// Asks `found`'s conversations for the tool's turn: it begins now (`O`), or when the
    /// conversation under way ends (`W` now, `O` then); a second tool waiting for the same
    /// receiver is refused. The turn is taken away, and the connection closed, at its limit.
    private func requestTurn(of found: ReceiverControl, asked: String, _ context: ChannelHandlerContext) {
        awaiting = found
        // Never closed as idle to make room while it waits for or holds the receiver: a
        // conversation cut off mid-configuration would leave it half set. The turn's
        // limit bounds it instead.
        context.triggerUserOutboundEvent(SessionActivity.watching(true), promise: nil)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let channel = context.channel
        let limit = found.conversations.turnLimit
        let answer = found.conversations.request(
            .tool,
            begin: { turn in
                bound.eventLoop.execute {
                    let (session, context) = bound.value
                    session.begin(turn, of: found, context)
                }
            },
            expired: {
                let message = ControlMessage.error("a conversation may hold a receiver for \(limit) at most")
                channel.close(after: channel.writeAndFlush(message.buffer))
            })
        switch answer {
        case .begun(let turn): begin(turn, of: found, context)
        case .waiting(let request):
            waitingRequest = request
            let seconds = Int(limit.components.seconds)
            context.writeAndFlush(wrapOutboundOut(ControlMessage.waiting(seconds: seconds).buffer), promise: nil)
        case .alreadyWaiting:
            // Not this connection's request that waits: it must not be withdrawn at the close.
            awaiting = nil
            refuse("another gpsfix ubx waits for \(asked) already; try again", context)
        }
    }

    /// The tool's turn began: the receiver's answers go to it from now on.
    private func begin(_ turn: ConversationTurn, of found: ReceiverControl, _ context: ChannelHandlerContext) {
        guard context.channel.isActive, awaiting != nil else { return found.conversations.end(turn) }
        awaiting = nil
        waitingRequest = nil
        receiver = found
        self.turn = turn
        forward(found.replies, during: turn, to: context.channel)
        context.writeAndFlush(wrapOutboundOut(ControlMessage.ok(found.port.line?.bps ?? 0).buffer), promise: nil)
    }

    /// The receiver's answers to the connection, as they are read; those the connection has
    /// no room for are dropped (the tool asks again), and counted.
    private func forward(_ replies: ReceiverReplies, during turn: ConversationTurn, to channel: any Channel) {
        replies.forward(during: turn) { frame in
            channel.eventLoop.execute {
                guard channel.isWritable else { return replies.countDropped() }
                channel.writeAndFlush(ControlMessage(type: UInt8(ascii: "F"), payload: frame).buffer, promise: nil)
            }
        }
    }

    private func finish() {
        if let awaiting {
            self.awaiting = nil
            if let waitingRequest { awaiting.conversations.withdraw(waitingRequest) }
            waitingRequest = nil
        }
        guard let receiver, let turn else { return }
        self.receiver = nil
        self.turn = nil
        receiver.replies.stopForwarding(for: turn)
        // Who it is now, and so its DEVICE report, after whatever was changed: asked within
        // the turn, so that the answer is no other conversation's.
        if receiver.conversations.holds(turn) {
            receiver.writer.send(UBXFrame.encode(messageClass: 0x0A, id: 0x04, payload: []))
        }
        receiver.conversations.end(turn)
    }

    private func refuse(_ reason: String, _ context: ChannelHandlerContext) {
        refuse(with: .error(reason), context)
    }

    /// Answers `message` and closes the connection once it is written.
    private func refuse(with message: ControlMessage, _ context: ChannelHandlerContext) {
        let channel = context.channel
        pending.removeAll()
        authorized = false
        channel.close(after: channel.writeAndFlush(message.buffer))
    }
}

/// Linux's `struct ucred`, which Glibc's module does not export: who is at the other end
/// of a Unix socket (`SO_PEERCRED`).
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

extension ControlMessage {
    var buffer: ByteBuffer { ByteBuffer(bytes: bytes) }
}

extension GPSFixServer {
    /// Serves the control socket at `path` (mode 0600: the daemon's user; root passes any
    /// mode) for `receivers`, by device path. Never on TCP. Each receiver is asked for by
    /// its path or the device its links resolve to now (``ReceiverNames``).
    public func startControl(path: String, receivers: [String: ReceiverControl]) async throws {
        let receivers = ReceiverNames.index(receivers)
        let bootstrap = clientBootstrap(idleTimeout: configuration.limits.idleTimeout) { channel in
            try channel.pipeline.syncOperations.addHandler(ControlSession(receivers: receivers))
        }
        let channel = try await bind(bootstrap, unixPath: path, mask: 0o177)  // 0600
        controlListeners.withLockedValue { $0.append(channel) }
        hub.logger.info("configuration control", metadata: ["socket": "\(path)"])
    }
}
