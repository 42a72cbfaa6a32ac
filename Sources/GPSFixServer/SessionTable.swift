import Logging
import NIOCore

/// Every open connection of every listener, on the hub's event loop: it admits a new one
/// within the caps of ``SessionLimits``, closes idle ones, and counts what it closed.
///
/// Idle connections are found by one timer, set for the earliest moment a connection that
/// watches nothing can have been idle for its timeout. Once every connection watches, the
/// timer that finds them so sets no other, and a daemon serving its watchers wakes for
/// nothing else.
///
/// The network listeners and the local sockets are capped apart (``ListenerSide``), so
/// that a full network side never refuses a local client. At a cap, the connection idle
/// the longest (watching nothing, asking nothing; one that never asked anything before one
/// that did; a watcher sent nothing and asking nothing for its idle timeout, such as a
/// poller whose WATCH streams nothing) is closed to make room, on the same listener when the listener is full,
/// anywhere on the same side when the side is:
/// an attacker holding idle connections never locks out the next real client. Only when
/// none is idle is the newest refused.
final class SessionTable {
    /// What the table closed, since the server started.
    struct Counts: Sendable, Equatable {
        /// Closed to make room for a new connection.
        var evicted = 0
        /// Refused at a cap with no idle connection to close.
        var refused = 0
        /// Closed after their idle timeout.
        var idleClosed = 0
        /// Cut off for staying over their cap past the stall timeout.
        var cutOff = 0
    }

    let limits: SessionLimits
    private let eventLoop: any EventLoop
    private let logger: Logger
    private var sessions: [ObjectIdentifier: BoundedSession] = [:]
    private var counted: ConnectionCount<ObjectIdentifier>
    private var sweep: Scheduled<Void>?
    /// When the sweep for idle connections is due; `nil` while none can be idle (every
    /// connection watches).
    private(set) var plannedSweep: NIODeadline?
    private var loggedCap: Set<ListenerSide> = []
    private var cutOffLog = LogLimit()
    /// The loop is shutting down: no sweep is planned any more.
    private var stopped = false
    private(set) var counts = Counts()

    init(limits: SessionLimits, eventLoop: any EventLoop, logger: Logger) {
        self.limits = limits
        self.eventLoop = eventLoop
        self.logger = logger
        counted = ConnectionCount(limits: limits)
    }

    /// Open connections, on every listener.
    var count: Int { sessions.count }

    /// `side`'s open connections and its caps.
    func connections(on side: ListenerSide) -> ServerSnapshot.ConnectionSide {
        let cap = limits.cap(of: side)
        return ServerSnapshot.ConnectionSide(connections: counted.count(on: side), cap: cap.connections, perListener: cap.perListener)
    }

    /// Takes `session` in, closing an idle one to make room when a cap is reached;
    /// `false` when it must be refused.
    func admit(_ session: BoundedSession) -> Bool {
        eventLoop.assertInEventLoop()
        let room = counted.room(on: session.listener, of: session.side)
        if room != .free {
            let now = NIODeadline.now()
            let candidates = sessions.values.filter { other in
                other.mayMakeRoom(at: now) && other.side == session.side && (room == .fullSide || other.listener == session.listener)
            }
            // A connection that never asked anything goes before one that did (a client
            // polling now and then), the one idle the longest first.
            guard let idlest = candidates.min(by: { ($0.hasAsked ? 1 : 0, $0.lastActivity) < ($1.hasAsked ? 1 : 0, $1.lastActivity) })
            else {
                counts.refused += 1
                noteCap("a connection refused: every connection is in use, none idle", on: session.side)
                return false
            }
            counts.evicted += 1
            noteCap("the connection idle the longest closed to make room", on: session.side)
            remove(idlest)
            idlest.close()
        }
        sessions[ObjectIdentifier(session)] = session
        counted.add(on: session.listener, of: session.side)
        planIdleCheck(for: session)
        return true
    }

    /// `session` watches nothing (it came in, or stopped watching): the sweep is due no
    /// later than its idle deadline.
    func planIdleCheck(for session: BoundedSession) {
        eventLoop.assertInEventLoop()
        planSweep(at: session.idleDeadline)
    }

    /// `session` has closed.
    func remove(_ session: BoundedSession) {
        eventLoop.assertInEventLoop()
        guard sessions.removeValue(forKey: ObjectIdentifier(session)) != nil else { return }
        counted.remove(on: session.listener, of: session.side)
    }

    /// Counts a client cut off for staying over its cap past the stall timeout, and logs
    /// it once a minute at most (``LogLimit``): clients that never read, reconnecting,
    /// must not flood the log.
    func noteCutOff(peer: String, unread: Int) {
        eventLoop.assertInEventLoop()
        counts.cutOff += 1
        guard let notLogged = cutOffLog.admit(at: eventLoop.now) else { return }
        logger.warning(
            "client cut off: what it did not read stayed over the cap for \(limits.stallTimeout); others within a minute are counted, not logged",
            metadata: notLogged.merging(["peer": "\(peer)", "unread": "\(unread) bytes"]) { $1 })
    }

    /// Logs the first time each side's cap is reached; later ones are counted (the metrics).
    private func noteCap(_ what: String, on side: ListenerSide) {
        guard loggedCap.insert(side).inserted else { return }
        let cap = limits.cap(of: side), sideName = side == .local ? "local sockets" : "network listeners"
        logger.warning(
            "connection cap of the \(sideName) reached: \(what); further ones are counted, not logged",
            metadata: ["per listener": "\(cap.perListener)", "in all": "\(cap.connections)"])
    }

    /// Sets the sweep for `deadline`, unless one is due before it. A connection's deadline
    /// only moves later (each activity pushes it), so a sweep is never late; one that
    /// comes early finds the connection active and plans the next.
    private func planSweep(at deadline: NIODeadline) {
        guard !stopped else { return }
        if let planned = plannedSweep, planned <= deadline { return }
        sweep?.cancel()
        plannedSweep = deadline
        sweep = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in self?.closeIdle() }
    }

    /// Closes the connections idle past their timeout, and plans the sweep for the
    /// earliest deadline of those that watch nothing.
    private func closeIdle() {
        sweep = nil
        plannedSweep = nil
        let now = NIODeadline.now()
        var next: NIODeadline?
        for session in sessions.values where !session.isWatching {
            if session.isIdle(at: now) {
                counts.idleClosed += 1
                remove(session)
                session.close()
            } else {
                next = min(next ?? session.idleDeadline, session.idleDeadline)
            }
        }
        if let next { planSweep(at: next) }
    }

    /// Stops the sweep for good (the loop is shutting down).
    func stop() {
        stopped = true
        sweep?.cancel()
        sweep = nil
        plannedSweep = nil
    }
}
