import NIOConcurrencyHelpers
import Synchronization
import UBX

/// A receiver's answers to configuration (ACK-ACK and ACK-NAK, CFG, MON and SEC replies),
/// taken from the daemon's own reading of the port, for the one configuration
/// conversation held with it at a time (whose turn it is, ``ReceiverConversations`` says).
///
/// The reading thread copies a frame out only while a conversation listens (one atomic
/// load per UBX frame otherwise), and hands it either to a sink (the control socket's
/// session, which writes it on its event loop) or to a queue a blocking listener takes
/// from (the daemon's own conversations). The queue holds at most ``limit`` frames; when
/// it is full the oldest is dropped and counted.
public final class ReceiverReplies: Sendable {
    /// The most frames kept for a listener.
    public let limit: Int
    /// Whether anyone listens: read for every UBX frame, without a lock.
    private let listened = Atomic<Bool>(false)
    /// Rung when a frame is queued: a listener sleeps on it, timed by the monotonic clock.
    private let arrived = MonotonicCondition()
    /// The queue and the sink; a sink is called with it held, so none is called after
    /// ``stopForwarding(for:)`` returns.
    private let shared = NIOLockedValueBox(Shared())

    private struct Shared {
        var frames: [[UInt8]] = []
        var dropped = 0
        var sink: (@Sendable ([UInt8]) -> Void)?
        /// The turn that listens: only it stops the listening (a turn taken away at its
        /// deadline must not stop the next one's).
        var listener: ConversationTurn?
    }

    public init(limit: Int = 64) {
        self.limit = limit
    }

    /// Frames dropped because the listener did not take them in time, or the sink had no
    /// room for them (``countDropped()``).
    public var dropped: Int { shared.withLockedValue { $0.dropped } }

    /// Whether a conversation listens now (its receiver may be between two speeds).
    public var isListened: Bool { listened.load(ordering: .relaxed) }

    /// Counts a frame a sink had no room for: the control socket's client, not reading.
    public func countDropped() {
        shared.withLockedValue { $0.dropped += 1 }
    }

    // MARK: Listening

    /// Runs `body` while `turn` listens with ``next(timeout:)``; the frames left when it
    /// returns are dropped.
    public func listening<Result>(during turn: ConversationTurn, _ body: () throws -> Result) rethrows -> Result {
        start(turn, sink: nil)
        defer { stop(turn) }
        return try body()
    }

    /// Hands each frame to `sink` (on the reading thread) until ``stopForwarding(for:)``.
    public func forward(during turn: ConversationTurn, to sink: @escaping @Sendable ([UInt8]) -> Void) {
        start(turn, sink: sink)
    }

    /// Stops handing frames to `turn`'s sink; none reaches it after this returns.
    public func stopForwarding(for turn: ConversationTurn) {
        stop(turn)
    }

    private func start(_ turn: ConversationTurn, sink: (@Sendable ([UInt8]) -> Void)?) {
        shared.withLockedValue { shared in
            shared.frames.removeAll()
            shared.sink = sink
            shared.listener = turn
            listened.store(true, ordering: .releasing)
        }
    }

    private func stop(_ turn: ConversationTurn) {
        shared.withLockedValue { shared in
            guard shared.listener == turn else { return }
            listened.store(false, ordering: .releasing)
            shared.frames.removeAll()
            shared.sink = nil
            shared.listener = nil
        }
    }

    /// Whether a UBX frame of class and id is one the tool may be waiting for.
    static func isForTheTool(_ messageClass: UInt8, _ id: UInt8) -> Bool {
        [0x05, 0x06, 0x0A].contains(messageClass) || (messageClass == 0x01 && id == 0x3B) || (messageClass == 0x0D && id == 0x04)
            || UInt16(messageClass) << 8 | UInt16(id) == SecUniqueID.message
    }

    /// From the reading thread: `frame` (a whole UBX frame), if it answers configuration
    /// (ACK, CFG, MON, the chip's ID) or is a survey-in's progress (NAV-SVIN, TIM-SVIN,
    /// which the tool polls), and someone listens.
    func offer(_ frame: UnsafeRawBufferPointer) {
        guard listened.load(ordering: .acquiring), frame.count >= 8, frame[0] == 0xB5, Self.isForTheTool(frame[2], frame[3]) else {
            return
        }
        let copy = Array(frame)
        // Looked at again under the lock: the listener may have gone since.
        let queued = shared.withLockedValue { shared -> Bool in
            guard listened.load(ordering: .relaxed) else { return false }
            if let sink = shared.sink {
                sink(copy)
                return false
            }
            shared.frames.append(copy)
            if shared.frames.count > limit {
                shared.frames.removeFirst()
                shared.dropped += 1
            }
            return true
        }
        if queued { arrived.signal() }
    }

    /// The next frame, waiting up to `timeout`; `nil` when none came.
    public func next(timeout: Duration) -> [UInt8]? {
        guard arrived.wait(timeout: timeout, until: { shared.withLockedValue { !$0.frames.isEmpty } }) else { return nil }
        return shared.withLockedValue { $0.frames.isEmpty ? nil : $0.frames.removeFirst() }
    }
}
