#if canImport(Glibc)
import Glibc
#endif
import GPSFixDevices
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ReceiverFraming

/// What the daemon's control socket reaches of one serial receiver: its one writer, its
/// answers taken from the daemon's reading, and its port (for a speed change).
public struct ReceiverControl: Sendable {
    public let writer: ReceiverWriter
    public let replies: ReceiverReplies
    public let port: SerialPort

    public init(writer: ReceiverWriter, replies: ReceiverReplies, port: SerialPort) {
        self.writer = writer
        self.replies = replies
        self.port = port
    }
}

/// One connection to the daemon's control socket: `gpsfix ubx` talking to a receiver the
/// daemon holds. Only root and the daemon's own user are served (`SO_PEERCRED`).
///
/// Messages both ways are a type byte, a big-endian 16-bit length and that many bytes
/// (``ControlMessage``): `H` names the device, answered `O` with its speed or `E` with why
/// not; then `F` carries one whole UBX frame each way (the receiver's answers to
/// configuration: acknowledgements, CFG and MON replies), and `S` asks for a new port
/// speed, answered `O`. One conversation per receiver at a time; when it ends the daemon
/// asks the receiver who it is again (MON-VER), so DEVICE follows a change.
final class ControlSession: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let receivers: [String: ReceiverControl]
    private var pending = ByteBuffer()
    private var receiver: ReceiverControl?
    /// Set while the replies are forwarded; cleared to stop the forwarding thread.
    private let forwarding = NIOLockedValueBox(false)
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
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        if authorized { readMessages(context) }
        if pending.readableBytes > ControlMessage.maximumLength + 3 { refuse("a message over the limit", context) }
    }

    private func readMessages(_ context: ChannelHandlerContext) {
        while let message = ControlMessage.next(from: &pending) {
            context.triggerUserOutboundEvent(SessionActivity.request, promise: nil)
            handle(message, context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    private func handle(_ message: ControlMessage, _ context: ChannelHandlerContext) {
        switch (message.type, receiver) {
        case (UInt8(ascii: "H"), nil):
            let asked = String(decoding: message.payload, as: UTF8.self)
            let path = SerialPort.resolved(asked) ?? asked
            guard let found = receivers.first(where: { (SerialPort.resolved($0.key) ?? $0.key) == path })?.value else {
                return refuse("\(asked) is not a serial receiver this daemon serves", context)
            }
            guard found.replies.beginConversation() else {
                return refuse("\(asked) is being configured by another conversation; try again", context)
            }
            receiver = found
            forward(found.replies, to: context.channel)
            context.writeAndFlush(wrapOutboundOut(ControlMessage.ok(found.port.line?.bps ?? 0).buffer), promise: nil)
        case (UInt8(ascii: "F"), let receiver?):
            guard message.payload.withUnsafeBytes({ UBXFrame(validating: $0) }) != nil else {
                return refuse("an F message carries one whole UBX frame", context)
            }
            receiver.writer.send(message.payload)
        case (UInt8(ascii: "S"), let receiver?):
            guard let speed = message.number else { return refuse("an S message carries a speed", context) }
            let channel = context.channel
            // tcdrain waits for the line: off the event loop.
            NIOThreadPool.singleton.submit { _ in
                let answer = (try? receiver.port.changeSpeedWhileOpen(to: speed)) != nil
                    ? ControlMessage.ok(speed) : ControlMessage.error("the port cannot run at \(speed) bps")
                channel.writeAndFlush(answer.buffer, promise: nil)
            }
        default:
            refuse("unexpected message '\(UnicodeScalar(message.type))'", context)
        }
    }

    /// The receiver's answers to the connection, from a thread of the blocking pool, as
    /// long as the connection lasts; frames the connection has no room for are dropped
    /// (the tool asks again).
    private func forward(_ replies: ReceiverReplies, to channel: any Channel) {
        forwarding.withLockedValue { $0 = true }
        let forwarding = self.forwarding
        NIOThreadPool.singleton.submit { _ in
            replies.listening {
                while forwarding.withLockedValue({ $0 }) {
                    guard let frame = replies.next(timeout: .milliseconds(200)) else { continue }
                    if channel.isWritable { channel.writeAndFlush(ControlMessage(type: UInt8(ascii: "F"), payload: frame).buffer, promise: nil) }
                }
            }
        }
    }

    private func finish() {
        forwarding.withLockedValue { $0 = false }
        guard let receiver else { return }
        self.receiver = nil
        receiver.replies.endConversation()
        // Who it is now, and so its DEVICE report, after whatever was changed.
        receiver.writer.send(UBXFrame.encode(messageClass: 0x0A, id: 0x04, payload: []))
    }

    private func refuse(_ reason: String, _ context: ChannelHandlerContext) {
        let channel = context.channel
        pending.clear()
        channel.writeAndFlush(ControlMessage.error(reason).buffer).whenComplete { _ in channel.close(promise: nil) }
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

    /// Takes the first whole message out of `buffer`, if there is one.
    static func next(from buffer: inout ByteBuffer) -> ControlMessage? {
        guard let type = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
            let length = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt16.self),
            Int(length) <= maximumLength, buffer.readableBytes >= 3 + Int(length)
        else { return nil }
        buffer.moveReaderIndex(forwardBy: 3)
        let payload = buffer.readBytes(length: Int(length)) ?? []
        buffer.discardReadBytes()
        return ControlMessage(type: type, payload: payload)
    }
}

extension GPSFixServer {
    /// Serves the control socket at `path` (mode 0600: the daemon's user; root passes any
    /// mode) for `receivers`, by device path. Never on TCP.
    public func startControl(path: String, receivers: [String: ReceiverControl]) async throws {
        let bootstrap = clientBootstrap(idleTimeout: configuration.limits.idleTimeout) { channel in
            try channel.pipeline.syncOperations.addHandler(ControlSession(receivers: receivers))
        }
        try SocketPath.prepare(path)
        let previousMask = umask(0o177)
        defer { umask(previousMask) }
        let channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
        controlListeners.withLockedValue { $0.append(channel) }
        boundSocketPaths.withLockedValue { $0.append(path) }
        hub.logger.info("configuration control", metadata: ["socket": "\(path)"])
    }
}
