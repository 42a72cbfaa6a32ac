@testable import GPSFixDevices
import Testing

/// Each transition of a receiver's conversation, as input and action: no receiver, no
/// threads, no clock (instants are plain numbers).
@Suite("Conversation state machine")
struct ConversationStateMachineTests {
    typealias Machine = ConversationStateMachine<Int>

    @Test("idle: a request begins a turn at once")
    func idleBegins() {
        var machine = Machine()
        #expect(machine.request(.tool, deadline: 60) == .begin(ConversationTurn(number: 1, reason: .tool)))
        #expect(machine.current == ConversationTurn(number: 1, reason: .tool))
    }

    @Test("conversing: a request waits, and a second one for the same reason folds into it")
    func conversingQueuesOnePerReason() {
        var machine = Machine()
        _ = machine.request(.tool, deadline: 60)
        #expect(machine.request(.keeper, deadline: 60) == .wait)
        #expect(machine.request(.keeper, deadline: 60) == .alreadyWaiting)
        #expect(machine.request(.keeper, deadline: 60) == .alreadyWaiting)
        #expect(machine.waiting == [.keeper])
    }

    @Test("the holder's own reason may wait once behind its turn (the device reopened during it)")
    func holderMayQueueOnce() {
        var machine = Machine()
        let first = ConversationTurn(number: 1, reason: .keeper)
        _ = machine.request(.keeper, deadline: 60)
        #expect(machine.request(.keeper, deadline: 60) == .wait)
        #expect(machine.end(first, nextDeadline: 120) == .begin(ConversationTurn(number: 2, reason: .keeper)))
        #expect(machine.end(ConversationTurn(number: 2, reason: .keeper), nextDeadline: 180) == .idle)
    }

    @Test("ending the turn with nobody waiting leaves the receiver idle; a later end of it does nothing")
    func endToIdle() {
        var machine = Machine()
        let turn = ConversationTurn(number: 1, reason: .tool)
        _ = machine.request(.tool, deadline: 60)
        #expect(machine.end(turn, nextDeadline: 120) == .idle)
        #expect(machine.current == nil)
        #expect(machine.end(turn, nextDeadline: 120) == .none)
    }

    @Test("a waiting tool goes before a waiting keeper")
    func toolFirst() {
        var machine = Machine()
        _ = machine.request(.keeper, deadline: 60)
        _ = machine.request(.keeper, deadline: 60)
        _ = machine.request(.tool, deadline: 60)
        #expect(machine.end(ConversationTurn(number: 1, reason: .keeper), nextDeadline: 120) == .begin(ConversationTurn(number: 2, reason: .tool)))
        #expect(machine.end(ConversationTurn(number: 2, reason: .tool), nextDeadline: 180) == .begin(ConversationTurn(number: 3, reason: .keeper)))
        #expect(machine.end(ConversationTurn(number: 3, reason: .keeper), nextDeadline: 240) == .idle)
    }

    @Test("the end of a turn that is not the current one changes nothing")
    func staleEnd() {
        var machine = Machine()
        _ = machine.request(.tool, deadline: 60)
        #expect(machine.end(ConversationTurn(number: 7, reason: .tool), nextDeadline: 120) == .none)
        #expect(machine.end(ConversationTurn(number: 1, reason: .keeper), nextDeadline: 120) == .none)
        #expect(machine.current == ConversationTurn(number: 1, reason: .tool))
    }

    @Test("a deadline not yet reached does nothing; once reached, the turn is over and the next begins")
    func deadline() {
        var machine = Machine()
        let turn = ConversationTurn(number: 1, reason: .tool)
        _ = machine.request(.tool, deadline: 60)
        _ = machine.request(.keeper, deadline: 60)
        #expect(machine.deadlinePassed(for: turn, now: 59, nextDeadline: 119) == .none)
        #expect(machine.deadlinePassed(for: turn, now: 60, nextDeadline: 120) == .begin(ConversationTurn(number: 2, reason: .keeper)))
        // The late holder's own end, after its turn was taken away:
        #expect(machine.end(turn, nextDeadline: 180) == .none)
        #expect(machine.current == ConversationTurn(number: 2, reason: .keeper))
    }

    @Test("a withdrawn request is not begun")
    func withdraw() {
        var machine = Machine()
        _ = machine.request(.keeper, deadline: 60)
        _ = machine.request(.tool, deadline: 60)
        let withdrawn = machine.withdraw(.tool)
        let withdrawnAgain = machine.withdraw(.tool)
        #expect(withdrawn && !withdrawnAgain)
        #expect(machine.end(ConversationTurn(number: 1, reason: .keeper), nextDeadline: 120) == .idle)
    }
}
