import Foundation
import Testing

@Suite("Conformance with gpsd")
struct ConformanceTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures/gpsd")

    static var logs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []).filter { $0.hasSuffix(".log") }.sorted()
    }

    /// Without the corpus the test is skipped, and says so; in CI it must be there.
    static var enabled: Bool { !logs.isEmpty || ProcessInfo.processInfo.environment["CI"] != nil }

    @Test("fixes and sky views agree with gpsd's reports on its regression captures",
          .enabled(if: enabled, "gpsd's corpus is not at ../shared/fixtures/gpsd"))
    func corpusAgrees() throws {
        let logs = Self.logs
        try #require(!logs.isEmpty, "gpsd's corpus is missing in CI: \(Self.corpus.path)")
        var total = Conformance.Result(log: "total")
        var report: [String] = []
        for log in logs {
            let result = try Conformance.check(log: Self.corpus.appendingPathComponent(log))
            total.fixEpochs += result.fixEpochs
            total.fixAgreeing += result.fixAgreeing
            total.skyEpochs += result.skyEpochs
            total.skyAgreeing += result.skyAgreeing
            let line = "\(log): fix \(result.fixAgreeing)/\(result.fixEpochs), sky \(result.skyAgreeing)/\(result.skyEpochs)"
                + (result.rolloverForgiven ? " (gpsd's 1024-week rollover forgiven)" : "")
            report.append(line + result.firstDisagreements.map { "\n    " + $0 }.joined())
        }
        let fixShare = Double(total.fixAgreeing) / Double(max(total.fixEpochs, 1))
        let skyShare = Double(total.skyAgreeing) / Double(max(total.skyEpochs, 1))
        report.append(String(format: "total: fix %d/%d (%.2f%%), sky %d/%d (%.2f%%)", total.fixAgreeing, total.fixEpochs,
            fixShare * 100, total.skyAgreeing, total.skyEpochs, skyShare * 100))
        let text = report.joined(separator: "\n")
        print(text)
        if let path = ProcessInfo.processInfo.environment["GPSFIX_CONFORMANCE_REPORT"] {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        #expect(fixShare >= 0.99, "fix epochs agreeing: \(fixShare)")
        #expect(skyShare >= 0.95, "sky epochs agreeing: \(skyShare)")
    }
}
