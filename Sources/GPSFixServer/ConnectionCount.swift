/// How many connections each side of the listeners (network, local) and each listener
/// holds, against the caps of ``SessionLimits``: whether one more fits, and if not, where
/// room must be made. Pure counting, no connections: ``SessionTable`` holds those and
/// decides whom to close.
struct ConnectionCount<Listener: Hashable> {
    /// Where a new connection stands.
    enum Room: Equatable {
        /// It fits.
        case free
        /// Its listener is full: a connection of the same listener must go for it.
        case fullListener
        /// Its side is full (its listener is not): a connection of the same side must go
        /// for it, on any of the side's listeners. The other side is never touched.
        case fullSide
    }

    let limits: SessionLimits
    private var onSide: [ListenerSide: Int] = [:]
    private var onListener: [Listener: Int] = [:]

    init(limits: SessionLimits) {
        self.limits = limits
    }

    /// Connections open on `side`'s listeners.
    func count(on side: ListenerSide) -> Int { onSide[side, default: 0] }

    /// Whether a new connection on `listener`, of `side`, fits.
    func room(on listener: Listener, of side: ListenerSide) -> Room {
        let cap = limits.cap(of: side)
        if onListener[listener, default: 0] >= cap.perListener { return .fullListener }
        if onSide[side, default: 0] >= cap.connections { return .fullSide }
        return .free
    }

    /// Counts a connection in.
    mutating func add(on listener: Listener, of side: ListenerSide) {
        onSide[side, default: 0] += 1
        onListener[listener, default: 0] += 1
    }

    /// Counts a connection out.
    mutating func remove(on listener: Listener, of side: ListenerSide) {
        onSide[side, default: 1] -= 1
        onListener[listener, default: 1] -= 1
        if onListener[listener] == 0 { onListener[listener] = nil }
    }
}
