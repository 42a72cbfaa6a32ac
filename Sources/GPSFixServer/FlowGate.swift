import NIOConcurrencyHelpers
import Synchronization

/// Holds back the reading of sources that can wait (a pseudo-terminal's writer, a file,
/// a gpsd upstream) while a watcher's outbound buffer is full, so that a flood is read
/// no faster than the slowest reading watcher takes its reports.
///
/// The hub closes it on the event loop when a session starts lagging and opens it when
/// none lags; readers check it after handing over each batch and, when it is closed,
/// sleep on a condition until it opens. A closed gate costs an open one nothing but an
/// atomic load per batch.
final class FlowGate: Sendable {
    /// `true` while open.
    private let state = ConditionLock<Bool>(value: true)
    private let closed = Atomic<Bool>(false)
    /// How often a waiting reader checks whether it should stop waiting.
    static let recheckSeconds = 0.1

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    func close() {
        state.lock()
        closed.store(true, ordering: .releasing)
        state.unlock(withValue: false)
    }

    func open() {
        state.lock()
        closed.store(false, ordering: .releasing)
        state.unlock(withValue: true)
    }

    /// Blocks the calling thread (never the event loop's) until the gate opens or
    /// `abandon` says to stop waiting (the reader is being cancelled).
    func waitUntilOpen(abandon: () -> Bool) {
        while !abandon() {
            if state.lock(whenValue: true, timeoutSeconds: Self.recheckSeconds) {
                state.unlock()
                return
            }
        }
    }
}
