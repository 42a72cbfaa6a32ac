import Foundation
import Testing

@Suite("Conformance with gpsd")
struct ConformanceTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures/gpsd")

    @Test("fixes and sky views agree with gpsd's reports on its regression captures")
    func corpusAgrees() throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Self.corpus.path)) ?? []
        let logs = names.filter { $0.hasSuffix(".log") }.sorted()
        guard !logs.isEmpty else {
            try #require(ProcessInfo.processInfo.environment["CI"] == nil, "gpsd's corpus is missing in CI")
            print("skipped: gpsd's corpus is not at \(Self.corpus.path)")
            return
        }
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
