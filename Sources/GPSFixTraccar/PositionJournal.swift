#if canImport(Glibc)
import Glibc
#endif
import ProcessTable

/// The file behind Traccar's queue: an append-only journal that a restart (or a SIGKILL)
/// reads back.
///
/// One file of text lines: `P SEQ POSITION` for each position queued (its OsmAnd fields,
/// ``OsmAndPosition/fields(for:hdop:)``), `A SEQ` when every
/// position up to SEQ has left the queue (sent and answered 200, or dropped). The queue
/// itself lives in memory (``TraccarForwarder``); the journal follows it, written by one
/// task off the event loop (``TraccarForwarder/run()``), so no disk, slow or full, ever
/// holds up the hub.
///
/// - A write is all or nothing per line: a write that fails or is cut short (a full disk)
///   is cut back (`ftruncate`) to its last whole line, so the next write never lands glued
///   to half a line. What was not written stays queued in memory and is written later.
/// - An acknowledgement that could not be written is only late: the queue moves on, and
///   the next one written covers it (each says "every position up to SEQ"). Read back
///   after a crash, the positions it would have covered are sent again: each position is
///   sent at least once, twice only across a crash.
/// - ``rewrite(_:)`` writes the waiting positions alone into `PATH.new`, syncs it,
///   renames it over the journal and syncs the folder (the rename itself durable); when it
///   fails, the partial `PATH.new` is removed, so it holds no space a full disk needs.
///
/// Not thread-safe: used by one task at a time.
final class PositionJournal: @unchecked Sendable {
    /// A position waiting: its place in the order, and its OsmAnd fields (the query but `id`).
    ///
    /// In memory one costs its slot in the queue's array (24 bytes: the sequence and the
    /// string's two words, up to twice that while the array grows) and its fields' heap
    /// allocation: a native string's 32-byte header and its UTF-8 bytes, rounded up by
    /// malloc. A typical position (lat, lon, timestamp, speed, bearing, altitude,
    /// accuracy, hdop) is about 110 bytes; it was measured with its id, about 115. Measured with the server away (release build):
    /// 200 to 240 bytes of resident memory a position, by stretches of 28,000 positions
    /// between 25,000 and 110,000 queued, so about 23 MB for the default cap of 100,000.
    struct Entry: Equatable, Sendable {
        var sequence: Int
        var position: String
    }

    let path: String
    private var descriptor: Int32
    /// The length of the file's whole lines: where a failed write is cut back to.
    private var length: off_t
    /// Whether the file may end in something other than whole lines (a cut-back that
    /// failed): then only ``rewrite(_:)`` writes it again.
    private(set) var isDamaged = false
    /// The last position written (`P` lines are written in order).
    private(set) var writtenThrough: Int
    /// The last acknowledgement written.
    private(set) var acknowledgedThrough: Int
    /// `P` lines in the file.
    private(set) var positionLines: Int
    /// Lines found malformed when the journal was opened (a page zeroed by a power cut):
    /// skipped, the lines after them read.
    let malformedLines: Int
    /// Whether something was written since the last ``sync()``.
    private var dirty = false

    /// Opens (or creates) the journal at `path`; returns it with the positions it holds
    /// that were not acknowledged, in order. A last line cut short (a crash in a write)
    /// is cut off. Nothing is rewritten: a full disk does not keep the daemon from starting.
    static func open(path: String) throws(JournalError) -> (journal: PositionJournal, waiting: [Entry]) {
        let contents = try read(path)
        let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o640)
        guard descriptor >= 0 else { throw .system(path: path, call: "open", errno: errno) }
        let journal = PositionJournal(
            path: path, descriptor: descriptor, length: contents.wholeLength,
            writtenThrough: contents.lastSequence, acknowledgedThrough: contents.acknowledged,
            positionLines: contents.positionLines, malformedLines: contents.malformedLines)
        if ftruncate(descriptor, contents.wholeLength) != 0 { journal.isDamaged = true }
        return (journal, contents.entries.filter { $0.sequence > contents.acknowledged })
    }

    private init(
        path: String, descriptor: Int32, length: off_t, writtenThrough: Int, acknowledgedThrough: Int, positionLines: Int,
        malformedLines: Int
    ) {
        self.path = path
        self.descriptor = descriptor
        self.length = length
        self.writtenThrough = writtenThrough
        self.acknowledgedThrough = acknowledgedThrough
        self.positionLines = positionLines
        self.malformedLines = malformedLines
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Appends the acknowledgement up to `acknowledged` (when it is new), then `entries`
    /// (the positions queued since the last write, in order). A write cut short keeps the
    /// whole lines it wrote, cuts off the rest, and throws: ``writtenThrough`` and
    /// ``acknowledgedThrough`` say how far it got.
    func append(_ entries: some Collection<Entry>, acknowledged: Int) throws(JournalError) {
        guard !isDamaged else { throw .system(path: path, call: "write", errno: EIO) }
        var bytes: [UInt8] = []
        // Where each line ends, and what it says.
        var lines: [(end: Int, position: Int?, acknowledged: Int?)] = []
        if acknowledged > acknowledgedThrough {
            bytes += "A \(acknowledged)\n".utf8
            lines.append((bytes.count, nil, acknowledged))
        }
        for entry in entries where entry.sequence > writtenThrough {
            bytes += "P \(entry.sequence) \(entry.position)\n".utf8
            lines.append((bytes.count, entry.sequence, nil))
        }
        guard !bytes.isEmpty else { return }
        let (written, error) = SmallFile.writeAll(bytes, to: descriptor)
        dirty = true
        for line in lines where line.end <= written {
            if let position = line.position {
                writtenThrough = position
                positionLines += 1
            }
            if let acknowledged = line.acknowledged { acknowledgedThrough = acknowledged }
        }
        let whole = lines.last { $0.end <= written }?.end ?? 0
        length += off_t(whole)
        guard written < bytes.count else { return }
        if written > whole, ftruncate(descriptor, length) != 0 { isDamaged = true }
        throw .system(path: path, call: "write", errno: error)
    }

    /// Makes what was written durable (`fdatasync`), if anything was. A failed sync leaves
    /// the journal damaged: the kernel has dropped the pages it could not write, so a later
    /// sync would succeed without them, and only ``rewrite(_:)`` puts them on disk again.
    func sync() throws(JournalError) {
        guard dirty else { return }
        dirty = false
        guard fdatasync(descriptor) == 0 else {
            let error = errno
            isDamaged = true
            throw .system(path: path, call: "fdatasync", errno: error)
        }
    }

    /// Writes the journal anew with `entries`, the positions waiting, alone. On failure
    /// the journal is as it was and the partial new file is gone.
    func rewrite(_ entries: some Collection<Entry>) throws(JournalError) {
        let temporary = path + ".new"
        // O_APPEND, as the journal it becomes: a write cut back must not leave the offset past the end.
        let fresh = Glibc.open(temporary, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o640)
        guard fresh >= 0 else { throw .system(path: temporary, call: "open", errno: errno) }
        var bytes: [UInt8] = []
        for entry in entries { bytes += "P \(entry.sequence) \(entry.position)\n".utf8 }
        let (written, writeError) = SmallFile.writeAll(bytes, to: fresh)
        var failure: JournalError?
        if written < bytes.count {
            failure = .system(path: temporary, call: "write", errno: writeError)
        } else if fdatasync(fresh) != 0 {
            failure = .system(path: temporary, call: "fdatasync", errno: errno)
        } else if rename(temporary, path) != 0 {
            failure = .system(path: path, call: "rename", errno: errno)
        }
        if let failure {
            close(fresh)
            unlink(temporary)
            throw failure
        }
        close(descriptor)
        descriptor = fresh
        length = off_t(bytes.count)
        isDamaged = false
        positionLines = entries.count
        if let last = entries.reversed().first { writtenThrough = max(writtenThrough, last.sequence) }
        acknowledgedThrough = (entries.first?.sequence ?? writtenThrough + 1) - 1
        // The rename is durable once the folder is.
        SmallFile.syncFolder(of: path)
    }

    /// Empties the journal in place, when none of its positions waits any more: unlike
    /// ``rewrite(_:)`` this needs no space, so a full disk is freed by it.
    func clear() throws(JournalError) {
        guard ftruncate(descriptor, 0) == 0 else { throw .system(path: path, call: "ftruncate", errno: errno) }
        length = 0
        dirty = true
        isDamaged = false
        positionLines = 0
        acknowledgedThrough = writtenThrough
    }

    /// The sequences a journal names: a position a millisecond for 285,000 years.
    static let sequences = 1...(1 << 53)

    /// What a journal holds: its positions (all, acknowledged or not), the last
    /// acknowledgement, the last sequence named, the length of its whole lines and how many
    /// of them are malformed.
    typealias Contents = (
        entries: [Entry], acknowledged: Int, lastSequence: Int, positionLines: Int, wholeLength: off_t, malformedLines: Int
    )

    /// What the journal at `path` holds; nothing when it does not exist. Only a regular
    /// file is read: a FIFO there would be waited on for a writer, at every start.
    private static func read(_ path: String) throws(JournalError) -> Contents {
        let descriptor: Int32
        switch SmallFile.openRegularFile(at: path) {
        case .success(let opened): descriptor = opened
        case .failure(.system(ENOENT)): return ([], 0, 0, 0, 0, 0)
        case .failure(.system(let code)): throw .system(path: path, call: "open", errno: code)
        case .failure: throw .notRegularFile(path: path)
        }
        guard let file = fdopen(descriptor, "r") else {
            let code = errno
            Glibc.close(descriptor)
            throw .system(path: path, call: "fdopen", errno: code)
        }
        defer { fclose(file) }
        return try read(file, path: path)
    }

    /// The longest line a journal holds: a position's query is some hundred bytes. A
    /// longer one is read as malformed, in bounded memory, to its end.
    static let maximumLineLength = 4096

    /// What `file` holds, read to its end. A last line cut short ends the reading; a read
    /// that fails (a bad block) throws, so that the journal is neither cut back to what was
    /// read before it nor taken for all there is.
    static func read(_ file: UnsafeMutablePointer<FILE>, path: String) throws(JournalError) -> Contents {
        var entries: [Entry] = []
        var acknowledged = 0
        var lastSequence = 0
        var positionLines = 0
        var wholeLength: off_t = 0
        var malformedLines = 0
        var line: [UInt8] = []
        line.reserveCapacity(Self.maximumLineLength)
        while true {
            // A NUL (a page zeroed by a power cut) is part of a malformed line, not its end;
            // past the longest line, the bytes are counted, not kept.
            line.removeAll(keepingCapacity: true)
            var count = 0
            var ended = false
            while true {
                let next = getc_unlocked(file)
                guard next != EOF else { break }
                count += 1
                if next == 10 {
                    ended = true
                    break
                }
                if line.count < Self.maximumLineLength { line.append(UInt8(next)) }
            }
            if ferror(file) != 0 { throw .system(path: path, call: "read", errno: errno) }
            // A last line cut short ends the reading.
            guard ended else { break }
            wholeLength += off_t(count)
            let text = count - 1 > Self.maximumLineLength || line.contains(0) ? "" : String(decoding: line, as: UTF8.self)
            let fields = text.split(separator: " ", maxSplits: 2)
            // A sequence out of range is corruption, read as a malformed line: counting on
            // from it would overflow.
            guard fields.count >= 2, let sequence = Int(fields[1]), Self.sequences.contains(sequence),
                fields[0] == "A" || (fields[0] == "P" && fields.count == 3)
            else {
                malformedLines += 1
                continue
            }
            lastSequence = max(lastSequence, sequence)
            if fields[0] == "P" {
                entries.append(Entry(sequence: sequence, position: String(fields[2])))
                positionLines += 1
            } else if fields[0] == "A" {
                acknowledged = max(acknowledged, sequence)
            }
        }
        return (entries, acknowledged, lastSequence, positionLines, wholeLength, malformedLines)
    }
}

/// The journal could not be read or written.
public enum JournalError: Error, CustomStringConvertible {
    case system(path: String, call: String, errno: Int32)
    /// A FIFO, a device or a socket where the journal is kept: never waited on.
    case notRegularFile(path: String)

    public var description: String {
        switch self {
        case .system(let path, let call, let errno): "\(call) on \(path) failed: \(String(cString: strerror(errno)))"
        case .notRegularFile(let path): "\(path) is not a regular file"
        }
    }
}
