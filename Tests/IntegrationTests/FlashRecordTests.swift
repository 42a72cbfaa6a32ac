#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

@testable import gpsfixd

/// The record of which table was saved to which receiver's flash: what it forgets, when
/// it is full, and what it keeps across a restart.
@Suite("The flash record")
struct FlashRecordTests {
    @Test("full, it forgets the pair of device and receiver saved longest ago, not the first in alphabetical order")
    func forgetsLeastRecentlySaved() throws {
        let folder = try makeTemporaryFolder("flash-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("receiver-flash").path
        let record = FlashRecord(path: path)
        // Saved in reverse alphabetical order: the first saved is the last in the alphabet.
        let devices = (0..<FlashRecord.entryLimit).map { "/dev/ttyUSB\(99 - $0)" }
        for device in devices {
            #expect(record.remember(device: device, receiver: "ZED-F9P", table: "rate=1") == nil)
        }
        #expect(record.remember(device: "/dev/ttyACM0", receiver: "NEO-M8T", table: "rate=1") == nil)

        let restarted = FlashRecord(path: path)
        #expect(restarted.holds(device: "/dev/ttyACM0", receiver: "NEO-M8T", table: "rate=1"))
        #expect(!restarted.holds(device: devices[0], receiver: "ZED-F9P", table: "rate=1"), "the one saved longest ago kept")
        for device in devices.dropFirst() {
            #expect(restarted.holds(device: device, receiver: "ZED-F9P", table: "rate=1"), "\(device)")
        }
    }

    @Test("a record that is not a regular file (a FIFO) is a read failure at once, not a start that waits for a writer")
    func notARegularFile() throws {
        let folder = try makeTemporaryFolder("flash-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("receiver-flash").path
        try makeRescuedFIFO(at: path)
        let started = ContinuousClock.now
        let record = FlashRecord(path: path)
        #expect(ContinuousClock.now - started < .seconds(2), "the read waited for a writer")
        #expect(record.readFailure?.contains("not a regular file") == true, "\(record.readFailure ?? "read")")
    }

    @Test("a device path with spaces is kept across a restart")
    func pathWithSpaces() throws {
        let folder = try makeTemporaryFolder("flash-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("receiver-flash").path
        let device = "/run/my gps/u-blox  receiver"
        #expect(FlashRecord(path: path).remember(device: device, receiver: "ZED-F9P", table: "rate=1") == nil)
        #expect(FlashRecord(path: path).holds(device: device, receiver: "ZED-F9P", table: "rate=1"))
    }

    @Test("two receivers on one path are remembered apart; a changed table is not held")
    func receiversOnOnePath() throws {
        let folder = try makeTemporaryFolder("flash-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let record = FlashRecord(path: folder.appendingPathComponent("receiver-flash").path)
        #expect(record.remember(device: "/dev/ttyACM0", receiver: "NEO-M8T", table: "rate=1") == nil)
        #expect(record.remember(device: "/dev/ttyACM0", receiver: "ZED-F9T", table: "rate=1") == nil)
        #expect(record.holds(device: "/dev/ttyACM0", receiver: "NEO-M8T", table: "rate=1"))
        #expect(record.holds(device: "/dev/ttyACM0", receiver: "ZED-F9T", table: "rate=1"))
        #expect(!record.holds(device: "/dev/ttyACM0", receiver: "ZED-F9T", table: "rate=2"))
        #expect(!record.holds(device: "/dev/ttyACM1", receiver: "ZED-F9T", table: "rate=1"))
    }

    @Test("a save the file cannot keep is not remembered, and says why; nor is one with no state directory")
    func unwritableRemembersNothing() throws {
        let folder = try makeTemporaryFolder("flash-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("gone/receiver-flash").path
        let record = FlashRecord(path: path)
        let failure = try #require(record.remember(device: "/dev/ttyACM0", receiver: "ZED-F9P", table: "rate=1"))
        #expect(failure.contains("No such file or directory"), "\(failure)")
        #expect(!record.holds(device: "/dev/ttyACM0", receiver: "ZED-F9P", table: "rate=1"))
        let nowhere = FlashRecord(unavailable: "/var/lib/gpsfixd: Read-only file system")
        #expect(nowhere.remember(device: "/dev/ttyACM0", receiver: "ZED-F9P", table: "rate=1") == "/var/lib/gpsfixd: Read-only file system")
        #expect(!nowhere.holds(device: "/dev/ttyACM0", receiver: "ZED-F9P", table: "rate=1"))
    }

    @Test("a save forgotten (never made after all) is forgotten in the file too; the receiver's other device is kept")
    func forgetsASave() throws {
        let folder = try makeTemporaryFolder("flash-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("receiver-flash").path
        let record = FlashRecord(path: path)
        #expect(record.remember(device: "/dev/ttyACM0", receiver: "ZED-F9P", table: "rate=1") == nil)
        #expect(record.remember(device: "/dev/ttyACM1", receiver: "ZED-F9P", table: "rate=1") == nil)
        #expect(record.forget(device: "/dev/ttyACM0", receiver: "ZED-F9P") == nil)
        let restarted = FlashRecord(path: path)
        #expect(!restarted.holds(device: "/dev/ttyACM0", receiver: "ZED-F9P", table: "rate=1"))
        #expect(restarted.holds(device: "/dev/ttyACM1", receiver: "ZED-F9P", table: "rate=1"))
    }

    @Test("a record that cannot be read (not one that is absent) is said, for the log: its tables go to flash once more")
    func unreadableSaid() throws {
        let folder = try makeTemporaryFolder("flash-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(FlashRecord(path: folder.appendingPathComponent("receiver-flash").path).readFailure == nil, "absent: nothing to say")
        // A folder where the file should be: read(2) answers EISDIR, as a bad block answers EIO.
        let path = folder.appendingPathComponent("in-the-way").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let failure = try #require(FlashRecord(path: path).readFailure)
        #expect(failure.hasPrefix("\(path) cannot be read ("), "\(failure)")
    }
}
