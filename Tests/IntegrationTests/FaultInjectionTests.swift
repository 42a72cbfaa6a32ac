import Foundation
import GPSFix
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Bad input, failing devices and hostile clients against the real daemon.
@Suite("Fault injection", .serialized)
struct FaultInjectionTests {
    static func temporaryFolder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("a stream with 10% damaged sentences: the daemon's counters account for every refused line")
    func corruptedStreamCounters() throws {
        let folder = try Self.temporaryFolder("corrupt")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = Array(try Data(contentsOf: Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log")))
        let corrupted = CorruptedLog(log: log, fraction: 0.1, seed: 2947)
        let path = folder.appendingPathComponent("corrupted.log").path
        FileManager.default.createFile(atPath: path, contents: Data(corrupted.bytes))

        // What the framer makes of the intact lines alone, and of the damaged log.
        let intact = NMEAStreamDecoder(for: CaptureLog(corrupted.intact))
        CaptureLog(corrupted.intact).payload.withUnsafeBytes { intact.feed($0) { _ in } }
        intact.finish { _ in }

        let daemon = try RunningProcess(Binaries.gpsfixd, [
            "file:\(path)", "--socket", folder.appendingPathComponent("s").path, "--log-level", "info",
        ])
        // The file is read at once; its counters are logged at shutdown.
        let deadline = Date().addingTimeInterval(10)
        while !daemon.errorText.contains("device activated"), Date() < deadline { usleep(50_000) }
        usleep(500_000)
        daemon.stop(SIGTERM)
        let output = daemon.errorText
        let line = try #require(output.split(separator: "\n").last { $0.contains("device counters:") }, "\(output.suffix(800))")
        let sentences = intact.framer.statistics.sentences
        let rejected = intact.framer.statistics.rejected + corrupted.expectedRefusals
        #expect(line.contains("sentences \(sentences), rejected \(rejected) ("), "\(line) \(corrupted.injuries)")
        #expect(line.contains("cycles \(intact.assembler.statistics.cycles)"), "\(line)")
        #expect(daemon.terminationStatus == 0)
    }
}
