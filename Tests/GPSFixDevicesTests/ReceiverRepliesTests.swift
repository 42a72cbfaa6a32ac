@testable import GPSFixDevices
import ReceiverFraming
import TestSupport
import Testing

/// The receiver's answers, handed from the daemon's reading to a configuration conversation.
@Suite("Receiver replies")
struct ReceiverRepliesTests {
    static func offer(_ replies: ReceiverReplies, _ messageClass: UInt8, _ id: UInt8, _ payload: [UInt8] = [0]) {
        UBXFrame.encode(messageClass: messageClass, id: id, payload: payload).withUnsafeBytes { replies.offer($0) }
    }

    @Test("nothing is kept while nobody listens, and only configuration's answers while someone does")
    func onlyWhileListening() {
        let replies = ReceiverReplies()
        Self.offer(replies, 0x05, 0x01)
        #expect(replies.next(timeout: .milliseconds(10)) == nil)
        replies.listening(during: Self.turn(1)) {
            Self.offer(replies, 0x01, 0x07)  // NAV-PVT: the reading's, not the conversation's
            Self.offer(replies, 0x05, 0x01, [0x06, 0x8A])
            #expect(replies.next(timeout: .milliseconds(10)) == UBXFrame.encode(messageClass: 0x05, id: 0x01, payload: [0x06, 0x8A]))
            #expect(replies.next(timeout: .milliseconds(10)) == nil)
        }
    }

    @Test("a listener that does not take its frames holds at most the limit; the oldest are dropped and counted")
    func bounded() {
        let replies = ReceiverReplies(limit: 4)
        replies.listening(during: Self.turn(1)) {
            for index in 0..<10 { Self.offer(replies, 0x0A, 0x04, [UInt8(index)]) }
            #expect(replies.dropped == 6)
            let kept = (0..<5).compactMap { _ in replies.next(timeout: .milliseconds(10)) }
            #expect(kept.map { $0[6] } == [6, 7, 8, 9])
        }
    }

    @Test("a turn taken away at its deadline, stopping late, does not stop the next turn's forwarding")
    func lateStopLeavesTheNextTurn() {
        let replies = ReceiverReplies()
        let received = Locked<[[UInt8]]>([])
        replies.listening(during: Self.turn(1)) {
            replies.forward(during: Self.turn(2)) { frame in received.withLock { $0.append(frame) } }
        }
        Self.offer(replies, 0x05, 0x01)
        #expect(received.withLock { $0.count } == 1)
        replies.stopForwarding(for: Self.turn(2))
        Self.offer(replies, 0x05, 0x01)
        #expect(received.withLock { $0.count } == 1)
    }

    static func turn(_ number: UInt64) -> ConversationTurn { ConversationTurn(number: number, reason: .keeper) }
}
