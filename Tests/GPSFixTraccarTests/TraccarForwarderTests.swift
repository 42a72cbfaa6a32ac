import Foundation
import GPSFix
import GPSFixServer
import Logging
import OutputFormats
import Testing

@testable import GPSFixTraccar

/// A server that is never there.
private struct Away: PositionUploader {
    struct Refused: Error {}
    func upload(_ query: String) async throws -> Int { throw Refused() }
}

/// A server that takes every position.
private struct Taking: PositionUploader {
    func upload(_ query: String) async throws -> Int { 200 }
}

/// A server that takes every position, and keeps the queries it was sent.
private final class Recording: PositionUploader, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [String] = []
    var queries: [String] { lock.withLock { received } }
    func upload(_ query: String) async throws -> Int {
        lock.withLock { received.append(query) }
        return 200
    }
}

@Suite("Traccar's forwarder and the event loop")
struct TraccarForwarderTests {
    static let device = "/dev/gps0"

    static func report(second: Int) -> PublishedReport {
        var fix = Fix()
        fix.mode = .threeDimensional
        fix.latitude = 52.37
        fix.longitude = 4.89
        fix.time = GPSTime(millisecondsSince1970: 1_700_000_000_000 + second * 1000)
        return PublishedReport(device: device, content: .tpv(fix), json: [])
    }

    @Test("a TPV is queued in memory alone, on the caller's thread (the event loop); run() writes it to the journal")
    func receiveTouchesNoDisk() async throws {
        let (path, folder) = try PositionJournalTests.journal("")
        defer { try? FileManager.default.removeItem(at: folder) }
        let forwarder = TraccarForwarder(
            configuration: .init(url: "http://127.0.0.1:9/", deviceID: "boat7", device: Self.device, journalPath: path),
            uploader: Away(), logger: Logger(label: "test"))
        forwarder.receive(Self.report(second: 0))
        #expect(forwarder.counters.queued == 1)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "", "nothing written by receive")

        let running = Task { await forwarder.run() }
        defer { running.cancel() }
        let deadline = ContinuousClock.now + .seconds(10)
        var journal = ""
        while !journal.hasPrefix("P 1 "), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            journal = try String(contentsOfFile: path, encoding: .utf8)
        }
        // The position's fields: its id is the one configured when it is sent.
        #expect(journal.hasPrefix("P 1 lat=52.3700000&lon=4.8900000&timestamp=1700000000000"), "\(journal)")
        running.cancel()
        await running.value
    }

    @Test("a journal that cannot be opened keeps Traccar in memory alone, said in the counters and the status line; positions still go")
    func journalUnopenable() async throws {
        let (file, folder) = try PositionJournalTests.journal("")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A folder that is a file: open(2) answers ENOTDIR, as a journal the service user
        // may not open answers EACCES.
        let forwarder = TraccarForwarder(
            configuration: .init(url: "http://127.0.0.1:9/", deviceID: "boat7", device: Self.device, journalPath: file + "/traccar.journal"),
            uploader: Taking(), logger: Logger(label: "test"))
        #expect(!forwarder.counters.journalWritten)
        #expect(forwarder.status.hasSuffix(", journal not written"), "\(forwarder.status)")
        forwarder.receive(Self.report(second: 0))
        let running = Task { await forwarder.run() }
        let deadline = ContinuousClock.now + .seconds(10)
        while forwarder.counters.sent == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        running.cancel()
        await running.value
        #expect(forwarder.counters.sent == 1 && forwarder.counters.queued == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "", "the file in the journal's way untouched")
    }
    @Test("a position's timestamp is whole milliseconds, as Traccar's OsmAnd decoder reads it (it drops the connection at a fraction)")
    func timestampInMilliseconds() throws {
        var fix = Fix()
        fix.mode = .twoDimensional
        fix.latitude = 52.37
        fix.longitude = 4.89
        fix.time = GPSTime(millisecondsSince1970: 1_700_000_000_250)
        let fields = try #require(OsmAndPosition.fields(for: fix, hdop: nil))
        #expect(fields == "lat=52.3700000&lon=4.8900000&timestamp=1700000000250")
        #expect(OsmAndPosition.query(id: "boat 7", fields: fields) == "id=boat%207&" + fields)
    }

    @Test("positions queued under an earlier --traccar-id, or kept by GPSFix 0.2.0 (its id and a timestamp with decimals), go under the current id, in milliseconds")
    func journaledPositionsTakeTheCurrentID() async throws {
        let (path, folder) = try PositionJournalTests.journal(
            "P 1 id=boat-7&lat=52.3700000&lon=4.8900000&timestamp=1700000000.250&speed=0.000\nP 2 lat=52.3700000&lon=4.8900000&timestamp=1700000001250\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = Recording()
        let forwarder = TraccarForwarder(
            configuration: .init(url: "http://127.0.0.1:9/", deviceID: "boat7", device: Self.device, journalPath: path),
            uploader: server, logger: Logger(label: "test"))
        let running = Task { await forwarder.run() }
        let deadline = ContinuousClock.now + .seconds(10)
        while server.queries.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        running.cancel()
        await running.value
        #expect(server.queries == [
            "id=boat7&lat=52.3700000&lon=4.8900000&timestamp=1700000000250&speed=0.000",
            "id=boat7&lat=52.3700000&lon=4.8900000&timestamp=1700000001250",
        ])
    }
}
