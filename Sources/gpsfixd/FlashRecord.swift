#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers
import ProcessTable

/// Which `[receiver]` table was last written to which receiver's flash, kept in the state
/// directory so that a restart of the daemon does not write it again: u-blox flash wears
/// after about 10,000 writes, and a keeper that saved at every opening would reach that in
/// a few years of a flaky cable.
///
/// One line per device and receiver: the device's path, a digest of the receiver's
/// identity (MON-VER and the chip's ID, ``ReceiverKeeper/identity(_:)``) and a digest of
/// the table (its settings and port, as ``ReceiverSettings/canonicalText`` gives them).
/// Keyed by both, so that receivers taking turns on one path (a spare plugged in where the
/// usual one was, `/dev/ttyACM0` going to whichever enumerates first) are each saved once,
/// not at every swap. The lines run from the least recently saved to the most, and the
/// least recently saved is forgotten first (opening a receiver whose table is saved writes
/// nothing, to its flash or here). The digests are FNV-1a: they tell a change, they guard
/// nothing. When the file cannot be read or written the record lives in memory, for this
/// run only, and the failure is said once (``readFailure``, and what
/// ``remember(device:receiver:table:)`` returns).
final class FlashRecord: Sendable {
    /// The file; `nil` keeps the record in memory.
    let path: String?
    /// The most pairs of device and receiver remembered: of a file with more lines, the
    /// last this many are kept.
    static let entryLimit = 64
    /// Least recently saved first.
    private let entries: NIOLockedValueBox<[Entry]>
    /// Why the file there could not be read (not its absence): every saved table is then
    /// written to flash once more, and the caller says so.
    let readFailure: String?

    struct Entry: Equatable {
        var device: String
        var receiver: UInt64
        var table: UInt64
    }

    init(path: String?) {
        self.path = path
        var entries: [Entry] = []
        var failure: String?
        if let path {
            switch SmallFile.bytes(at: path, limit: 1 << 16) {
            case .success(let bytes): entries = Self.entries(in: String(decoding: bytes, as: UTF8.self))
            case .failure(.system(ENOENT)): break
            case .failure(let reason): failure = "\(path) cannot be read (\(reason))"
            }
        }
        self.entries = NIOLockedValueBox(entries)
        readFailure = failure
    }

    /// Whether `table` was saved to the flash of `receiver`, on `device`.
    func holds(device: String, receiver: String, table: String) -> Bool {
        let entry = Entry(device: device, receiver: Self.digest(receiver), table: Self.digest(table))
        return entries.withLockedValue { $0.contains(entry) }
    }

    /// Remembers that `table` was saved to the flash of `receiver`, on `device`; the error
    /// when the file could not be written (the record is kept in memory all the same).
    /// Keepers of several receivers share the record: the file is written under its lock,
    /// so two saves at once leave both lines.
    func remember(device: String, receiver: String, table: String) -> String? {
        let entry = Entry(device: device, receiver: Self.digest(receiver), table: Self.digest(table))
        return entries.withLockedValue { entries -> String? in
            Self.use(entry, in: &entries)
            guard let path else { return nil }
            return Self.write(entries.map { "\($0.device) \(hex($0.receiver)) \(hex($0.table))\n" }.joined(), to: path)
        }
    }

    /// Puts `entry` last in `entries`, in place of the one for its device and receiver,
    /// and forgets the least recently saved beyond ``entryLimit``.
    private static func use(_ entry: Entry, in entries: inout [Entry]) {
        entries.removeAll { $0.device == entry.device && $0.receiver == entry.receiver }
        entries.append(entry)
        if entries.count > entryLimit { entries.removeFirst(entries.count - entryLimit) }
    }

    /// FNV-1a, 64 bits, of `text`'s UTF-8.
    static func digest(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    private static func entries(in text: String) -> [Entry] {
        var entries: [Entry] = []
        for line in text.split(separator: "\n") {
            // The digests are the last two fields: a path may hold spaces.
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count >= 3, let receiver = UInt64(fields[fields.count - 2], radix: 16),
                let table = UInt64(fields[fields.count - 1], radix: 16)
            else { continue }
            let device = fields.dropLast(2).joined(separator: " ")
            use(Entry(device: device, receiver: receiver, table: table), in: &entries)
        }
        return entries
    }

    /// Writes `text` to a temporary file beside `path` and renames it over `path`, so a
    /// crash leaves the old record or the new one, never half of one; the folder is synced
    /// after, so that a power cut does not undo the rename (and the table is not written to
    /// flash once more).
    private static func write(_ text: String, to path: String) -> String? {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { return "\(temporary): \(String(cString: strerror(errno)))" }
        var failure = SmallFile.writeAll(Array(text.utf8), to: descriptor).errno
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            return "\(path): \(String(cString: strerror(failure)))"
        }
        SmallFile.syncFolder(of: path)
        return nil
    }
}

private func hex(_ value: UInt64) -> String { String(value, radix: 16) }
