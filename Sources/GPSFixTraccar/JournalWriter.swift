import Logging
import NIOConcurrencyHelpers

/// Keeps the ``PositionJournal`` up with the queue in memory: one ``write(final:)`` at a
/// time, on a thread that may block (SwiftNIO's thread pool), never the event loop's.
///
/// Each write appends what changed since the last (the latest acknowledgement, the new
/// positions); once a second it syncs the file (`fdatasync`). When the disk refuses (full,
/// or failing), the positions stay in memory, the failure is logged once, and the write is
/// tried again once a second, the journal rewritten with the waiting positions alone as
/// soon as that frees lines of positions gone; its recovery is logged once too. The
/// journal is also rewritten when 10,000 lines of positions gone have piled up.
final class JournalWriter: @unchecked Sendable {
    /// Lines of positions gone past which the journal is rewritten, disk trouble or not.
    static let compactionThreshold = 10_000
    /// Positions written at most in one `write(2)`.
    static let batch = 4096

    private let journal: PositionJournal
    private let queue: NIOLockedValueBox<PositionQueue>
    private let logger: Logger
    /// The disk's refusal, while it lasts.
    private var failure: JournalError?
    private var lastSync = ContinuousClock.now
    private var lastAttempt = ContinuousClock.now

    init(journal: PositionJournal, queue: NIOLockedValueBox<PositionQueue>, logger: Logger) {
        self.journal = journal
        self.queue = queue
        self.logger = logger
    }

    /// What a ``write(final:)`` did.
    enum Outcome: Equatable {
        /// The journal is up to the queue (synced or not yet).
        case written
        /// The disk refused: the positions stay in memory.
        case refused
        /// Nothing tried: the disk refused less than a second ago.
        case waiting
    }

    /// Brings the journal up to the queue, and syncs it when a second has passed since the
    /// last sync (always when `final`). Blocks on the disk: call it off the event loop.
    @discardableResult
    func write(final: Bool = false) -> Outcome {
        let now = ContinuousClock.now
        let secondPassed = now - lastSync >= .seconds(1)
        // While the disk refuses, about once a second is enough (the forwarder rings once a second).
        if failure != nil, !final, now - lastAttempt < .milliseconds(900) { return .waiting }
        lastAttempt = now
        var error = appendAll()
        // Lines of positions gone: what a rewrite gives back.
        let live = queue.withLockedValue { $0.countWaiting(through: journal.writtenThrough) }
        let settled = journal.positionLines - live
        if journal.isDamaged || settled > Self.compactionThreshold || (error != nil && settled > 0) {
            do {
                // With no position of its own waiting, the journal is emptied in place:
                // that needs no space, where a rewrite needs room for its new file.
                if live == 0 {
                    try journal.clear()
                } else {
                    try journal.rewrite(queue.withLockedValue { Array($0.all) })
                }
                // What came meanwhile.
                error = appendAll()
            } catch let refusal {
                error = error ?? refusal
            }
        }
        if secondPassed || final {
            lastSync = now
            do { try journal.sync() } catch let refusal { error = error ?? refusal }
        }
        switch (failure, error) {
        case (nil, let error?):
            let capacity = queue.withLockedValue { $0.capacity }
            logger.error(
                "Traccar: the journal cannot be written (\(error)); positions are kept in memory, up to \(capacity), and written when it can be")
        case (_?, nil):
            logger.info("Traccar: the journal is written again")
        default:
            break
        }
        failure = error
        return error == nil ? .written : .refused
    }

    /// Appends the latest acknowledgement and the positions not written yet, a batch at a
    /// time; the refusal that stopped it, if one did.
    private func appendAll() -> JournalError? {
        while true {
            let written = journal.writtenThrough
            // Copied under the lock: a slice kept would make the next append copy the whole queue.
            let (fresh, acknowledged) = queue.withLockedValue { (Array($0.waiting(after: written, limit: Self.batch)), $0.acknowledged) }
            do {
                try journal.append(fresh, acknowledged: acknowledged)
            } catch {
                return error
            }
            if fresh.count < Self.batch { return nil }
        }
    }
}
