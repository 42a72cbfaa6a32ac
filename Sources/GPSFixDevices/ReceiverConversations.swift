import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The one owner of a receiver's conversation: whoever talks to the receiver (`gpsfix ubx`
/// through the control socket, the `[receiver]` table's keeper) asks it for a turn, talks,
/// and ends the turn. The rules are ``ConversationStateMachine``'s; this class only keeps
/// it behind a lock, runs each waiting request's start when its turn comes, and ends a
/// turn that overstays ``turnLimit``, both on an event loop: its timers start no thread.
///
/// RTCM corrections are not a conversation: they are a stream of frames the receiver does
/// not answer, written through the same ``ReceiverWriter`` beside whoever converses.
public final class ReceiverConversations: Sendable {
    /// The longest one turn lasts: a tool configures a receiver in seconds, and a keeper's
    /// conversation is a few dozen requests of a few seconds at most each.
    public let turnLimit: Duration
    private let eventLoop: any EventLoop
    private let shared = NIOLockedValueBox(Shared())

    private struct Shared {
        var machine = ConversationStateMachine<ContinuousClock.Instant>()
        /// What to run when a waiting request's turn begins, by reason.
        var starts: [ConversationReason: Holder] = [:]
        /// What to tell the holder of the current turn if its deadline passes.
        var current: Holder?
        var counters = Counters()
        var lastRequest: UInt64 = 0
    }

    /// Whoever asked for a turn: what to run when it begins, and when it is taken away.
    private struct Holder {
        var request: WaitingRequest
        var begin: @Sendable (ConversationTurn) -> Void
        var expired: @Sendable () -> Void
    }

    /// A request that waits for its turn: only its asker withdraws it.
    public struct WaitingRequest: Hashable, Sendable {
        let number: UInt64
    }

    /// What the conversations did, for the metrics and the status line.
    public struct Counters: Sendable, Equatable {
        /// Turns that began, by reason.
        public var turns: [ConversationReason: Int] = [:]
        /// Turns taken away at their deadline.
        public var expired = 0
        /// Requests folded into one already waiting for the same reason.
        public var folded = 0
    }

    /// The answer to ``request(_:begin:expired:)``.
    public enum Request: Equatable, Sendable {
        /// The turn is the caller's now; `begin` is not called.
        case begun(ConversationTurn)
        /// `begin` runs when the current turn ends, unless the request is withdrawn first.
        case waiting(WaitingRequest)
        /// A request for the same reason already waits: this one is dropped (and counted),
        /// `begin` is never called.
        case alreadyWaiting
    }

    /// An owner whose turns last `turnLimit` at most, timed on `eventLoop` (the daemon's
    /// one loop by default), where waiting requests' starts and expiries run too.
    public init(turnLimit: Duration = .seconds(60), eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()) {
        self.turnLimit = turnLimit
        self.eventLoop = eventLoop
    }

    /// What the conversations did so far.
    public var counters: Counters { shared.withLockedValue { $0.counters } }

    /// Asks for a turn for `reason`. When it cannot begin now, `begin` runs once it does.
    /// `expired` runs if the turn is still held at its deadline; the turn is over by then,
    /// and the next one may begin. Both run on the event loop: they must not block.
    public func request(
        _ reason: ConversationReason, begin: @escaping @Sendable (ConversationTurn) -> Void,
        expired: @escaping @Sendable () -> Void = {}
    ) -> Request {
        let answer = shared.withLockedValue { shared -> Request in
            shared.lastRequest += 1
            let holder = Holder(request: WaitingRequest(number: shared.lastRequest), begin: begin, expired: expired)
            switch shared.machine.request(reason, deadline: deadline()) {
            case .begin(let turn):
                shared.current = holder
                shared.counters.turns[reason, default: 0] += 1
                return .begun(turn)
            case .wait:
                shared.starts[reason] = holder
                return .waiting(holder.request)
            case .alreadyWaiting:
                shared.counters.folded += 1
                return .alreadyWaiting
            }
        }
        if case .begun(let turn) = answer { scheduleDeadline(of: turn) }
        return answer
    }

    /// Withdraws `request` if it still waits (its asker went away). A request whose turn
    /// has begun is not withdrawn (its holder ends the turn), nor is another's that waits
    /// for the same reason since.
    public func withdraw(_ request: WaitingRequest) {
        shared.withLockedValue { shared in
            guard let reason = shared.starts.first(where: { $0.value.request == request })?.key else { return }
            if shared.machine.withdraw(reason) { shared.starts[reason] = nil }
        }
    }

    /// Ends `turn`; a turn already over (taken away at its deadline) changes nothing.
    public func end(_ turn: ConversationTurn) {
        let next = shared.withLockedValue { shared in
            turnAfter(shared.machine.end(turn, nextDeadline: deadline()), in: &shared)
        }
        next.map(begin)
    }

    /// Whether `turn` is the one under way: a holder stops talking once it is not.
    public func holds(_ turn: ConversationTurn) -> Bool {
        shared.withLockedValue { $0.machine.current == turn }
    }

    private func expire(_ turn: ConversationTurn) {
        let (expired, next) = shared.withLockedValue { shared -> ((@Sendable () -> Void)?, (ConversationTurn, Holder)?) in
            let holder = shared.current
            let action = shared.machine.deadlinePassed(for: turn, now: .now, nextDeadline: deadline())
            guard action != .none else { return (nil, nil) }
            shared.counters.expired += 1
            return (holder?.expired, turnAfter(action, in: &shared))
        }
        expired?()
        next.map(begin)
    }

    /// The turn that `action` begins, and its holder, taken from the waiting ones.
    private func turnAfter(
        _ action: ConversationStateMachine<ContinuousClock.Instant>.EndAction, in shared: inout Shared
    ) -> (ConversationTurn, Holder)? {
        guard case .begin(let turn) = action, let holder = shared.starts.removeValue(forKey: turn.reason) else {
            shared.current = nil
            return nil
        }
        shared.current = holder
        shared.counters.turns[turn.reason, default: 0] += 1
        return (turn, holder)
    }

    private func begin(_ next: (turn: ConversationTurn, holder: Holder)) {
        scheduleDeadline(of: next.turn)
        eventLoop.execute { next.holder.begin(next.turn) }
    }

    private func deadline() -> ContinuousClock.Instant { .now.advanced(by: turnLimit) }

    private func scheduleDeadline(of turn: ConversationTurn) {
        // Rounded up to the millisecond: the loop's clock is not the deadline's, and the
        // timer must never fire before the deadline.
        eventLoop.scheduleTask(in: .milliseconds(Int64(turnLimit.pollTimeout))) { [weak self] in
            self?.expire(turn)
        }
    }
}
