import NIOConcurrencyHelpers
import Synchronization

/// A receiver's answers to configuration (ACK-ACK and ACK-NAK, CFG and MON replies),
/// taken from the daemon's own reading of the port, for the one configuration
/// conversation held with it at a time.
///
/// The reading thread copies a frame out only while someone listens (one atomic load per
/// UBX frame otherwise). The frames wait in a queue of at most ``limit``; when it is full
/// the oldest is dropped and counted, so a listener that stops taking costs nothing more.
public final class ReceiverReplies: Sendable {
    /// The most frames kept for the listener.
    public let limit: Int
    private let listeners = Atomic<Int>(0)
    /// Whether a configuration conversation holds the receiver.
    private let conversing = Atomic<Bool>(false)
    /// 1 while frames wait, 0 while none does: a waiter sleeps until it is 1.
    private let waiting = ConditionLock(value: 0)
    private let frames = NIOLockedValueBox(Queue())

    private struct Queue {
        var frames: [[UInt8]] = []
        var dropped = 0
    }

    public init(limit: Int = 64) {
        self.limit = limit
    }

    /// Takes the receiver for one configuration conversation; `false` while another holds it.
    public func beginConversation() -> Bool {
        conversing.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    /// Gives the receiver back.
    public func endConversation() {
        conversing.store(false, ordering: .releasing)
    }

    /// Frames dropped because the listener did not take them in time.
    public var dropped: Int { frames.withLockedValue { $0.dropped } }

    /// Runs `body` while listening; the frames left when it returns are dropped.
    public func listening<Result>(_ body: () throws -> Result) rethrows -> Result {
        listeners.add(1, ordering: .relaxed)
        defer {
            if listeners.subtract(1, ordering: .relaxed).newValue == 0 { frames.withLockedValue { $0.frames.removeAll() } }
        }
        return try body()
    }

    /// From the reading thread: `frame` (a whole UBX frame), if it answers configuration
    /// and someone listens.
    func offer(_ frame: UnsafeRawBufferPointer) {
        guard listeners.load(ordering: .relaxed) > 0, frame.count >= 8, frame[0] == 0xB5, [0x05, 0x06, 0x0A].contains(frame[2]) else {
            return
        }
        let copy = Array(frame)
        waiting.lock()
        frames.withLockedValue { queue in
            queue.frames.append(copy)
            if queue.frames.count > limit {
                queue.frames.removeFirst()
                queue.dropped += 1
            }
        }
        waiting.unlock(withValue: 1)
    }

    /// The next frame, waiting up to `timeout`; `nil` when none came.
    public func next(timeout: Duration) -> [UInt8]? {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard waiting.lock(whenValue: 1, timeoutSeconds: max(0.001, seconds)) else { return nil }
        let (frame, left) = frames.withLockedValue { queue in
            (queue.frames.isEmpty ? nil : queue.frames.removeFirst(), queue.frames.count)
        }
        waiting.unlock(withValue: left > 0 ? 1 : 0)
        return frame
    }
}
