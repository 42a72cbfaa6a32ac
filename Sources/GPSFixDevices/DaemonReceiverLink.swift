import UBXConfiguration

/// The daemon's own link to a receiver it reads: frames go out through the device's one
/// ``ReceiverWriter``, answers come back from its reading (``ReceiverReplies``), and a
/// speed change is made on the port the reader holds open. Use it inside
/// ``ReceiverReplies/listening(_:)``.
public final class DaemonReceiverLink: ReceiverLink {
    private let writer: ReceiverWriter
    private let replies: ReceiverReplies
    private let port: SerialPort

    public init(writer: ReceiverWriter, replies: ReceiverReplies, port: SerialPort) {
        self.writer = writer
        self.replies = replies
        self.port = port
    }

    public func send(_ frame: [UInt8]) throws {
        writer.send(frame)
    }

    public func receive(timeout: Duration) throws -> [UInt8] {
        replies.next(timeout: timeout) ?? []
    }

    public func changeSpeed(to bps: Int) throws {
        try port.changeSpeedWhileOpen(to: bps)
    }
}
