import Dispatch
@testable import GPSFixDevices
import TestSupport
import Testing

/// The owner of a receiver's conversation, driving its state machine: a waiting request
/// begins when the turn before ends, and a turn that overstays its limit is taken away.
@Suite("Receiver conversations")
struct ReceiverConversationsTests {
    @Test("a request that waits begins once, when the turn before it ends; a folded one never")
    func waitingBeginsOnce() throws {
        let conversations = ReceiverConversations()
        let begun = DispatchSemaphore(value: 0)
        let begins = Locked(0)
        guard case .begun(let first) = conversations.request(.tool, begin: { _ in Issue.record("began twice") }) else {
            throw Failure("the first request did not begin at once")
        }
        let onBegin: @Sendable (ConversationTurn) -> Void = { turn in
            begins.withLock { $0 += 1 }
            conversations.end(turn)
            begun.signal()
        }
        #expect(Self.waits(conversations.request(.keeper, begin: onBegin)))
        #expect(conversations.request(.keeper, begin: onBegin) == .alreadyWaiting)
        conversations.end(first)
        #expect(begun.wait(timeout: .now() + 10) == .success)
        #expect(begun.wait(timeout: .now() + 0.2) == .timedOut)
        #expect(begins.withLock { $0 } == 1)
        #expect(conversations.counters.turns == [.tool: 1, .keeper: 1])
        #expect(conversations.counters.folded == 1)
    }

    @Test("a turn held past the limit is taken away: its holder is told, it holds it no longer, the next begins")
    func expiry() throws {
        let conversations = ReceiverConversations(turnLimit: .milliseconds(50))
        let expired = DispatchSemaphore(value: 0)
        let next = DispatchSemaphore(value: 0)
        guard case .begun(let first) = conversations.request(.keeper, begin: { _ in }, expired: { expired.signal() }) else {
            throw Failure("the first request did not begin at once")
        }
        #expect(Self.waits(conversations.request(.tool, begin: { turn in conversations.end(turn); next.signal() })))
        #expect(expired.wait(timeout: .now() + 10) == .success)
        #expect(next.wait(timeout: .now() + 10) == .success)
        #expect(!conversations.holds(first))
        #expect(conversations.counters.expired == 1)
    }

    @Test("a tool that hangs up as its turn begins withdraws only its own request, not the next tool's that waits since")
    func withdrawIsByRequest() throws {
        let conversations = ReceiverConversations()
        guard case .begun(let keeper) = conversations.request(.keeper, begin: { _ in }) else {
            throw Failure("the first request did not begin at once")
        }
        let first = Locked<ConversationTurn?>(nil)
        let firstBegan = DispatchSemaphore(value: 0)
        guard case .waiting(let firstRequest) = conversations.request(.tool, begin: { turn in
            first.withLock { $0 = turn }
            firstBegan.signal()
        }) else { throw Failure("the first tool did not wait") }
        conversations.end(keeper)
        #expect(firstBegan.wait(timeout: .now() + 10) == .success)
        let secondBegan = DispatchSemaphore(value: 0)
        #expect(Self.waits(conversations.request(.tool, begin: { _ in secondBegan.signal() })))
        // The first tool's connection closes: its request, begun already, is not withdrawn, nor the second's.
        conversations.withdraw(firstRequest)
        conversations.end(try #require(first.withLock { $0 }))
        #expect(secondBegan.wait(timeout: .now() + 10) == .success)
    }

    static func waits(_ request: ReceiverConversations.Request) -> Bool {
        if case .waiting = request { true } else { false }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
