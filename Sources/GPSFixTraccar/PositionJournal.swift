#if canImport(Glibc)
import Glibc
#endif

/// The positions waiting for the server, on disk before they are sent: an append-only
/// journal that a restart (or a SIGKILL) reads back.
///
/// One file of text lines: `P SEQ QUERY` for each position queued, `A SEQ` when every
/// position up to SEQ has left the queue (sent and answered 200, or dropped). A position
/// is written, with `write(2)`, before ``append(_:)`` returns, so the daemon's own death
/// loses none (the kernel has it); ``sync()`` makes it durable against a power cut, and
/// the forwarder calls it at most once a second: a cut loses at most the last second.
/// An acknowledgement lost that way means a position sent twice, never one lost.
///
/// Opening reads the journal back, keeps the positions not acknowledged, and writes them
/// into a new journal that replaces the old one (a rename), as does ``compact()`` once
/// enough acknowledged lines have piled up. Used under its owner's lock.
final class PositionJournal: @unchecked Sendable {
    /// A position waiting: its place in the order, and its OsmAnd query.
    struct Entry: Equatable {
        var sequence: Int
        var query: String
    }

    let path: String
    private var descriptor: Int32
    private(set) var pending: [Entry] = []
    /// Where ``pending`` starts: entries before it left the queue.
    private var head = 0
    private var nextSequence = 1
    private var dirty = false
    /// Lines of positions gone since the file was last written anew.
    private var settledLines = 0

    /// Opens (or creates) the journal at `path`.
    init(path: String) throws(JournalError) {
        self.path = path
        descriptor = -1
        let entries = try Self.read(path)
        pending = entries
        nextSequence = (entries.last?.sequence ?? 0) + 1
        try rewrite(pending)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// How many positions wait.
    var count: Int { pending.count - head }

    /// The oldest position waiting.
    var oldest: Entry? { head < pending.count ? pending[head] : nil }

    /// Queues a position; returns its entry.
    @discardableResult
    func append(_ query: String) throws(JournalError) -> Entry {
        let entry = Entry(sequence: nextSequence, query: query)
        nextSequence += 1
        try write("P \(entry.sequence) \(query)\n")
        pending.append(entry)
        return entry
    }

    /// The oldest position left the queue (sent, or dropped).
    func removeOldest() throws(JournalError) {
        guard let oldest else { return }
        try write("A \(oldest.sequence)\n")
        head += 1
        settledLines += 1
        if head > 4096, head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }

    /// Makes what was written durable (`fdatasync`), if anything was.
    func sync() {
        guard dirty else { return }
        dirty = false
        fdatasync(descriptor)
    }

    /// Writes the journal anew with the waiting positions alone, once many have gone.
    func compactIfWorthIt() throws(JournalError) {
        guard settledLines > 10_000 else { return }
        try rewrite(Array(pending[head...]))
        pending.removeFirst(head)
        head = 0
    }

    private func rewrite(_ entries: [Entry]) throws(JournalError) {
        let temporary = path + ".new"
        let fresh = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard fresh >= 0 else { throw .system(path: temporary, call: "open", errno: errno) }
        let text = entries.map { "P \($0.sequence) \($0.query)\n" }.joined()
        guard Self.writeAll(fresh, Array(text.utf8)), fdatasync(fresh) == 0, rename(temporary, path) == 0 else {
            let error = errno
            close(fresh)
            throw .system(path: path, call: "write", errno: error)
        }
        if descriptor >= 0 { close(descriptor) }
        close(fresh)
        descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw .system(path: path, call: "open", errno: errno) }
        settledLines = 0
    }

    private func write(_ line: String) throws(JournalError) {
        guard Self.writeAll(descriptor, Array(line.utf8)) else { throw .system(path: path, call: "write", errno: errno) }
        dirty = true
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// The positions of the journal at `path` not acknowledged, in order; none when it
    /// does not exist. A last line cut short (a write interrupted by a crash) is passed over.
    private static func read(_ path: String) throws(JournalError) -> [Entry] {
        guard let file = fopen(path, "r") else {
            if errno == ENOENT { return [] }
            throw .system(path: path, call: "open", errno: errno)
        }
        defer { fclose(file) }
        var entries: [Entry] = []
        var acknowledged = 0
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(cString: line)
            guard text.hasSuffix("\n") else { break }
            let fields = text.dropLast().split(separator: " ", maxSplits: 2)
            guard fields.count >= 2, let sequence = Int(fields[1]) else { continue }
            if fields[0] == "P", fields.count == 3 {
                entries.append(Entry(sequence: sequence, query: String(fields[2])))
            } else if fields[0] == "A" {
                acknowledged = max(acknowledged, sequence)
            }
        }
        return entries.filter { $0.sequence > acknowledged }
    }
}

/// The journal could not be read or written.
public enum JournalError: Error, CustomStringConvertible {
    case system(path: String, call: String, errno: Int32)

    public var description: String {
        switch self {
        case .system(let path, let call, let errno): "\(call) on \(path) failed: \(String(cString: strerror(errno)))"
        }
    }
}
