#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NIOConcurrencyHelpers
import UBXConfiguration

/// What configuration reaches of one serial receiver the daemon reads: its one writer, its
/// answers taken from the daemon's reading, who holds its conversation, and its port (for
/// a speed change).
public struct ReceiverControl: Sendable {
    /// Everything written to the receiver goes through it.
    public let writer: ReceiverWriter
    /// The receiver's answers to configuration.
    public let replies: ReceiverReplies
    /// Whose turn it is to talk to the receiver.
    public let conversations: ReceiverConversations
    /// The port, held open by the daemon's reader.
    public let port: SerialPort

    /// Without `conversations`, their turns are timed on the writer's event loop: a turn
    /// taken away there is seen by every frame the writer has not queued yet.
    public init(writer: ReceiverWriter, replies: ReceiverReplies, conversations: ReceiverConversations? = nil, port: SerialPort) {
        self.writer = writer
        self.replies = replies
        self.conversations = conversations ?? ReceiverConversations(eventLoop: writer.eventLoop)
        self.port = port
    }

    /// Switches the port to `bps` once every frame queued before was written (the one that
    /// told the receiver to switch among them), however long they waited: the port follows
    /// what the receiver was told; `done` says whether it did.
    public func changeSpeed(to bps: Int, then done: @escaping @Sendable (Bool) -> Void) {
        writer.afterQueued { [port] written in
            guard written else { return done(false) }
            // tcdrain waits for the line: off the event loop, and off SwiftNIO's small
            // blocking pool that other work needs, on a thread that ends with the change.
            let started = DeviceThread.start(named: "gpsfix-speed") { done((try? port.changeSpeedWhileOpen(to: bps)) != nil) }
            if !started { done(false) }
        }
    }
}

/// The daemon's own link to a receiver it reads (see ``ReceiverControl``), for one turn of
/// its conversation. Use it inside ``ReceiverReplies/listening(during:_:)``.
public final class DaemonReceiverLink: ReceiverLink {
    private let control: ReceiverControl
    private let turn: ConversationTurn

    /// The turn was taken away at its deadline: nothing more is sent in it.
    public struct TurnOver: Error, CustomStringConvertible {
        public var description: String { "the conversation took longer than its turn allows" }
    }

    public init(control: ReceiverControl, turn: ConversationTurn) {
        self.control = control
        self.turn = turn
    }

    public func send(_ frame: [UInt8]) throws {
        guard control.conversations.holds(turn) else { throw TurnOver() }
        // Asked again where the turn changes, on the event loop: it may end meanwhile.
        control.writer.send(frame, while: stillHeld)
    }

    /// Whether the turn is still under way.
    private var stillHeld: @Sendable () -> Bool {
        { [conversations = control.conversations, turn] in conversations.holds(turn) }
    }

    public func receive(timeout: Duration) throws -> [UInt8] {
        control.replies.next(timeout: timeout) ?? []
    }

    public var speed: Int { control.port.line?.bps ?? 0 }

    public func changeSpeed(to bps: Int) throws {
        guard control.conversations.holds(turn) else { throw TurnOver() }
        let finished = DispatchSemaphore(value: 0)
        let changed = NIOLockedValueBox(false)
        control.changeSpeed(to: bps) { done in
            changed.withLockedValue { $0 = done }
            finished.signal()
        }
        let waited = finished.wait(timeout: .now() + 30) == .success
        guard control.conversations.holds(turn) else { throw TurnOver() }
        guard waited, changed.withLockedValue({ $0 }) else {
            throw DeviceError.from(errno: EIO, path: control.port.path, call: "tcsetattr")
        }
    }
}
