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
/// nothing.
///
/// A save is remembered before it is made, and made only when it was remembered: a record
/// that cannot be written (no state directory, a full or read-only disk) refuses it
/// (``remember(device:receiver:table:)`` returns why), since a save not remembered would
/// be made again at every start of the daemon. A file that cannot be read (``readFailure``)
/// costs each of its tables one save more, after which it is written anew.
final class FlashRecord: Sendable {
    /// The file; `nil` when there is none to keep the record in (``unavailable`` says why).
    let path: String?
    /// Why no record can be kept: the state directory could not be made.
    let unavailable: String?
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

    /// The record kept in the file at `path`, as it was left there.
    init(path: String) {
        self.path = path
        unavailable = nil
        var entries: [Entry] = []
        var failure: String?
        switch SmallFile.bytes(at: path, limit: 1 << 16) {
        case .success(let bytes): entries = Self.entries(in: String(decoding: bytes, as: UTF8.self))
        case .failure(.system(ENOENT)): break
        case .failure(let reason): failure = "\(path) cannot be read (\(reason))"
        }
        self.entries = NIOLockedValueBox(entries)
        readFailure = failure
    }

    /// A record with nowhere to be kept, for the reason given: it refuses every save.
    init(unavailable reason: String) {
        path = nil
        unavailable = reason
        entries = NIOLockedValueBox([])
        readFailure = nil
    }

    /// Whether `table` was saved to the flash of `receiver`, on `device`.
    func holds(device: String, receiver: String, table: String) -> Bool {
        let entry = Entry(device: device, receiver: Self.digest(receiver), table: Self.digest(table))
        return entries.withLockedValue { $0.contains(entry) }
    }

    /// Remembers that `table` is saved to the flash of `receiver`, on `device`, before the
    /// save is made; why not, when the file could not be written (nothing is remembered,
    /// and the save must not be made). Keepers of several receivers share the record: the
    /// file is written under its lock, so two saves at once leave both lines.
    func remember(device: String, receiver: String, table: String) -> String? {
        let entry = Entry(device: device, receiver: Self.digest(receiver), table: Self.digest(table))
        return change { Self.use(entry, in: &$0) }
    }

    /// Forgets what was saved to the flash of `receiver`, on `device`: a save remembered and
    /// then not made (the conversation failed before its first write to flash) is made at
    /// the next conversation. Why not, when the file could not be written.
    func forget(device: String, receiver: String) -> String? {
        let receiver = Self.digest(receiver)
        return change { $0.removeAll { $0.device == device && $0.receiver == receiver } }
    }

    /// Changes the entries by `body` and writes them to the file; when it cannot be
    /// written, the entries are left as they were, and the failure returned.
    private func change(_ body: (inout [Entry]) -> Void) -> String? {
        guard let path else { return unavailable }
        return entries.withLockedValue { entries -> String? in
            var changed = entries
            body(&changed)
            let text = changed.map { "\($0.device) \(hex($0.receiver)) \(hex($0.table))\n" }.joined()
            if let failure = Self.write(text, to: path) { return failure }
            entries = changed
            return nil
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
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o640)
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
