/// Who wants a turn at talking to a receiver, and so what each waiting turn is for.
public enum ConversationReason: Int, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    /// `gpsfix ubx`, through the control socket: an operator waits for it, so it goes first.
    case tool
    /// The daemon's keeper, bringing the receiver back to its `[receiver]` table.
    case keeper

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .tool: "gpsfix ubx"
        case .keeper: "the [receiver] table's keeper"
        }
    }

    /// The name in metrics' labels.
    public var metricName: String {
        switch self {
        case .tool: "tool"
        case .keeper: "keeper"
        }
    }
}

/// One granted turn: whoever holds it may talk to the receiver until it ends the turn or
/// its deadline passes. An ended or expired turn's number never matches again, so a late
/// end from a turn already taken away changes nothing.
public struct ConversationTurn: Hashable, Sendable {
    /// Counts the turns of one receiver from 1.
    public let number: UInt64
    /// Who holds it.
    public let reason: ConversationReason
}

/// The rules of one receiver's conversation, as a value: idle, or one turn under way
/// with a deadline, and at most one waiting request for each ``ConversationReason``.
///
/// Each event is a `mutating` method that returns what the caller must do. The machine
/// performs no I/O, holds no callbacks and reads no clock (the caller passes `now`), so
/// every transition is tested as input and action (as async-http-client's state machines
/// are). ``ReceiverConversations`` drives it.
public struct ConversationStateMachine<Instant: Comparable & Sendable>: Sendable {
    enum State: Sendable {
        case idle
        case conversing(ConversationTurn, deadline: Instant)
    }

    /// What the caller does after a request.
    public enum RequestAction: Equatable, Sendable {
        /// The turn is the caller's now: talk, then end it.
        case begin(ConversationTurn)
        /// Another holds the receiver: the caller's turn begins when the current one ends
        /// (see ``EndAction/begin(_:)``).
        case wait
        /// A request for the same reason already waits; this one is folded into it (one
        /// pending reconfiguration is enough, however many events asked for one).
        case alreadyWaiting
    }

    /// What the caller does after a turn ends, or its deadline passes.
    public enum EndAction: Equatable, Sendable {
        /// That turn was not the current one (ended before, or taken away): nothing.
        case none
        /// The receiver is free and nobody waits.
        case idle
        /// The turn of the waiting request for its reason begins: tell its holder.
        case begin(ConversationTurn)
    }

    private(set) var state: State = .idle
    /// At most one waiting request per reason.
    private(set) var waiting: Set<ConversationReason> = []
    private var lastNumber: UInt64 = 0

    public init() {}

    /// The turn under way, if any.
    public var current: ConversationTurn? {
        if case .conversing(let turn, _) = state { return turn }
        return nil
    }

    /// Asks for a turn for `reason`; one that begins now lasts until `deadline`.
    public mutating func request(_ reason: ConversationReason, deadline: Instant) -> RequestAction {
        switch state {
        case .idle:
            return .begin(begin(reason, deadline: deadline))
        case .conversing:
            return waiting.insert(reason).inserted ? .wait : .alreadyWaiting
        }
    }

    /// Withdraws the waiting request for `reason` (a tool that hung up before its turn);
    /// whether one waited.
    public mutating func withdraw(_ reason: ConversationReason) -> Bool {
        waiting.remove(reason) != nil
    }

    /// `turn` is over; the next waiting request (the tool's before the keeper's) begins,
    /// to last until `nextDeadline`.
    public mutating func end(_ turn: ConversationTurn, nextDeadline: Instant) -> EndAction {
        guard current == turn else { return .none }
        guard let next = waiting.min() else {
            state = .idle
            return .idle
        }
        waiting.remove(next)
        return .begin(begin(next, deadline: nextDeadline))
    }

    /// The clock reached `now`: a turn past its deadline is over, as if it had ended.
    public mutating func deadlinePassed(for turn: ConversationTurn, now: Instant, nextDeadline: Instant) -> EndAction {
        guard case .conversing(let current, let deadline) = state, current == turn, now >= deadline else { return .none }
        return end(turn, nextDeadline: nextDeadline)
    }

    private mutating func begin(_ reason: ConversationReason, deadline: Instant) -> ConversationTurn {
        lastNumber += 1
        let turn = ConversationTurn(number: lastNumber, reason: reason)
        state = .conversing(turn, deadline: deadline)
        return turn
    }
}
