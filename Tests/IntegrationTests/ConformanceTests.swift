import Foundation
import Testing

/// Agreement with gpsd's own reports on its regression captures, counted exactly as the
/// project is judged: `../shared/tools/gpsd_compare.py` over `gpsfix decode` of every
/// capture in `../shared/fixtures/gpsd/` (NMEA 0183) and `../shared/fixtures/gpsd-ubx/`
/// (u-blox UBX), speed, track and climb included wherever gpsd reports them. Without
/// those folders the test is skipped and says so; in CI they must be there.
@Suite("Conformance with gpsd")
struct ConformanceTests {
    static let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared")
    static let tool = shared.appendingPathComponent("tools/gpsd_compare.py")

    /// A corpus and the figures reached on it: a change that agrees with gpsd on fewer
    /// epochs fails. `docs/conformance.md` says what stands between them and 100%.
    struct Corpus: Sendable, CustomTestStringConvertible {
        var folder: String
        var fixFloor: Double
        var skyFloor: Double
        var testDescription: String { folder }
    }

    static let corpora = [
        Corpus(folder: "fixtures/gpsd", fixFloor: 99.0, skyFloor: 97.0),
        Corpus(folder: "fixtures/gpsd-ubx", fixFloor: 97.0, skyFloor: 93.0),
    ]

    static var enabled: Bool {
        FileManager.default.fileExists(atPath: tool.path) || ProcessInfo.processInfo.environment["CI"] != nil
    }

    @Test("fix and sky epochs agree with gpsd's reports on its regression captures, as gpsd_compare.py counts them",
          .enabled(if: enabled, "gpsd's corpus and tools are not in ../shared"), arguments: corpora)
    func corpusAgrees(corpus: Corpus) throws {
        try #require(FileManager.default.fileExists(atPath: Self.tool.path), "missing in CI: \(Self.tool.path)")
        let command = "\(Binaries.gpsfix) decode {log}"
        let output = try run(
            "/usr/bin/python3", [Self.tool.path, "run", "--cmd", command, "--logs", Self.shared.appendingPathComponent(corpus.folder).path, "-j", "2", "--json"],
            timeout: 600)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output.prefix(300))")
        let totals = try #require(report["totals"] as? [String: Any])
        let fix = try #require(totals["percent"] as? Double)
        let sky = try #require(totals["sky_percent"] as? Double)
        print(String(format: "conformance (%@): fix epochs %.2f%% (%@ of %@), sky epochs %.2f%% (%@ of %@)", corpus.folder, fix,
                     "\(totals["epochs_matched"] ?? "?")", "\(totals["epochs_total"] ?? "?")", sky,
                     "\(totals["sky_matched"] ?? "?")", "\(totals["sky_total"] ?? "?")"))
        #expect(totals["logs_failed_to_run"] as? Int == 0)
        #expect(fix >= corpus.fixFloor, "fix epochs agreeing: \(fix)%")
        #expect(sky >= corpus.skyFloor, "sky epochs agreeing: \(sky)%")
    }
}
