import Foundation
import TestSupport
import Testing

@testable import GPSFixTraccar

#if canImport(Glibc)
import Glibc
#endif

@Suite("Traccar's queue and its journal")
struct PositionJournalTests {
    /// A journal file of the test's own, with `text` in it.
    static func journal(_ text: String) throws -> (path: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-journal-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("traccar.journal").path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return (path, folder)
    }

    @Test("read back: the positions past the last acknowledgement, a last line cut short cut off, and appending goes on after whole lines")
    func readBack() throws {
        let (path, folder) = try Self.journal("P 1 a=1\nP 2 a=2\nA 1\nP 3 a=3\nP 4 a=")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (journal, waiting) = try PositionJournal.open(path: path)
        #expect(waiting.map(\.sequence) == [2, 3])
        #expect(journal.writtenThrough == 3 && journal.acknowledgedThrough == 1)
        try journal.append([.init(sequence: 4, position: "a=4")], acknowledged: 2)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "P 1 a=1\nP 2 a=2\nA 1\nP 3 a=3\nA 2\nP 4 a=4\n")
    }

    @Test("a corrupt journal's sequences out of range are read as malformed lines: the daemon starts, sequences go on")
    func sequencesOutOfRange() throws {
        let (path, folder) = try Self.journal("P 1 a=1\nA 9223372036854775807\nP 9223372036854775807 a=2\nP -5 a=3\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (journal, waiting) = try PositionJournal.open(path: path)
        #expect(waiting.map(\.sequence) == [1])
        #expect(journal.writtenThrough == 1 && journal.acknowledgedThrough == 0)
        var queue = PositionQueue(capacity: 10, waiting: waiting, acknowledged: journal.acknowledgedThrough, lastSequence: journal.writtenThrough)
        queue.append("a=4")
        #expect(queue.waiting(after: 1).map(\.sequence) == [2])
    }

    @Test("a line zeroed by a power cut (NUL bytes) is one malformed line, counted: the lines after it are read, and the file is not cut there")
    func zeroedLine() throws {
        let text = "P 1 a=1\nP 2 a=\0\0\nP 3 a=3\nA 1\nP 4 a=4\nbroken\n"
        let (path, folder) = try Self.journal(text)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (journal, waiting) = try PositionJournal.open(path: path)
        #expect(waiting.map(\.sequence) == [3, 4])
        #expect(journal.malformedLines == 2)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }

    @Test("a line longer than any position (a file of zeros, a journal overwritten) is one malformed line, read in bounded memory: the lines after it are read")
    func overlongLine() throws {
        let text = "P 1 a=1\n" + String(repeating: "x", count: 1 << 20) + "\nP 2 a=2\n"
        let (path, folder) = try Self.journal(text)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (journal, waiting) = try PositionJournal.open(path: path)
        #expect(waiting.map(\.sequence) == [1, 2])
        #expect(journal.malformedLines == 1)
    }

    @Test("a journal that is not a regular file (a FIFO) is refused at once, not waited on for a writer")
    func notARegularFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-journal-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("traccar.journal").path
        try makeRescuedFIFO(at: path)
        let started = ContinuousClock.now
        #expect(throws: JournalError.self) { try PositionJournal.open(path: path) }
        #expect(ContinuousClock.now - started < .seconds(2), "the open waited for a writer")
    }

    @Test("a read that fails part-way (a bad block) is an error, not the end of the journal: nothing after it is taken for lost")
    func readFailure() throws {
        // A file that gives two lines, then fails with EIO: a pseudo-terminal's master once
        // its slave has written them and closed, as a bad block of an SD card fails a read.
        var master: Int32 = -1, slave: Int32 = -1
        try #require(openpty(&master, &slave, nil, nil, nil) == 0)
        var raw = termios()
        tcgetattr(slave, &raw)
        cfmakeraw(&raw)
        tcsetattr(slave, TCSANOW, &raw)
        let lines = Array("P 1 a=1\nP 2 a=2\n".utf8)
        #expect(write(slave, lines, lines.count) == lines.count)
        close(slave)
        let file = try #require(fdopen(master, "r"))
        defer { fclose(file) }
        #expect(throws: JournalError.self) { try PositionJournal.read(file, path: "traccar.journal") }
    }

    @Test("an acknowledgement never written: read back, the position is sent again (at least once), nothing lost")
    func acknowledgementLost() throws {
        let (path, folder) = try Self.journal("P 1 a=1\nP 2 a=2\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, waiting) = try PositionJournal.open(path: path)
        let queue = PositionQueue(capacity: 10, waiting: waiting, acknowledged: 0, lastSequence: 2)
        #expect(queue.oldest?.sequence == 1 && queue.count == 2)
    }

    @Test("a rewrite keeps the waiting positions alone; clearing empties the file in place; sequences go on")
    func rewriteAndClear() throws {
        let (path, folder) = try Self.journal("P 1 a=1\nP 2 a=2\nA 1\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (journal, waiting) = try PositionJournal.open(path: path)
        try journal.rewrite(waiting)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "P 2 a=2\n")
        #expect(!FileManager.default.fileExists(atPath: path + ".new"))
        try journal.append([.init(sequence: 3, position: "a=3")], acknowledged: 2)
        try journal.clear()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "")
        var queue = PositionQueue(capacity: 10, waiting: [], acknowledged: 2, lastSequence: journal.writtenThrough)
        queue.append("a=4")
        #expect(queue.oldest?.sequence == 4)
    }

    @Test("the queue: past its capacity the oldest are dropped, counted; a position sent leaves it only if still the oldest")
    func queue() {
        var queue = PositionQueue(capacity: 3, waiting: [], acknowledged: 0, lastSequence: 0)
        for index in 1...5 { queue.append("a=\(index)") }
        #expect(queue.count == 3 && queue.dropped == 2 && queue.acknowledged == 2)
        #expect(queue.oldest?.sequence == 3)
        queue.remove(4)
        #expect(queue.oldest?.sequence == 3)
        queue.remove(3)
        #expect(queue.oldest?.sequence == 4 && queue.acknowledged == 3)
        #expect(queue.waiting(after: 4).map(\.sequence) == [5])
        #expect(queue.countWaiting(through: 4) == 1)
    }
}
