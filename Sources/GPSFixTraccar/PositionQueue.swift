/// The positions waiting for Traccar, in memory, oldest first: what is sent, and what the
/// journal follows on disk (``PositionJournal``, written by ``JournalWriter``).
///
/// Bounded by ``capacity``: past it the oldest are dropped, counted. Each position costs
/// about 230 bytes here (measured; see ``PositionJournal/Entry``): 23 MB at the default 100,000.
struct PositionQueue {
    typealias Entry = PositionJournal.Entry

    let capacity: Int
    /// The positions, waiting from ``head`` on; those before it are gone.
    private var entries: [Entry]
    private var head = 0
    private var nextSequence: Int
    /// Every position up to this sequence has left the queue (sent, or dropped).
    private(set) var acknowledged: Int
    /// Positions dropped as the queue was full.
    private(set) var dropped = 0

    /// The queue as a journal left it: `waiting` in order, every sequence up to
    /// `acknowledged` gone, and `lastSequence` the last one the journal named.
    init(capacity: Int, waiting: [Entry], acknowledged: Int, lastSequence: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        entries = waiting
        self.acknowledged = acknowledged
        nextSequence = max(lastSequence, waiting.last?.sequence ?? 0) + 1
        dropOverflow()
    }

    /// How many positions wait.
    var count: Int { entries.count - head }

    /// The oldest position waiting.
    var oldest: Entry? { head < entries.count ? entries[head] : nil }

    /// Queues a position, dropping the oldest past the capacity; returns how many were dropped.
    @discardableResult
    mutating func append(_ position: String) -> Int {
        entries.append(Entry(sequence: nextSequence, position: position))
        nextSequence += 1
        let before = dropped
        dropOverflow()
        return dropped - before
    }

    /// The position `sequence` left the queue (it was sent), if it is still the oldest.
    mutating func remove(_ sequence: Int) {
        guard oldest?.sequence == sequence else { return }
        removeOldest()
    }

    /// The positions waiting whose sequence is past `sequence`, at most `limit` of them.
    func waiting(after sequence: Int, limit: Int = .max) -> ArraySlice<Entry> {
        let start = firstIndex(after: sequence)
        return entries[start..<start + min(limit, entries.count - start)]
    }

    /// Every position waiting.
    var all: ArraySlice<Entry> { entries[head...] }

    /// How many positions waiting have a sequence up to `sequence`.
    func countWaiting(through sequence: Int) -> Int { firstIndex(after: sequence) - head }

    /// The index of the first position waiting past `sequence` (sequences only increase).
    private func firstIndex(after sequence: Int) -> Int {
        var (low, high) = (head, entries.count)
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func dropOverflow() {
        while count > capacity {
            removeOldest()
            dropped += 1
        }
    }

    private mutating func removeOldest() {
        acknowledged = entries[head].sequence
        // Its fields are freed now; only its slot waits for the front to be given back.
        entries[head].position = ""
        head += 1
        // The array's front is given back now and then, not at each position.
        if head > 4096, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
