import Foundation
import TestSupport
import Testing

/// A base station's two halves on the receiver's side: `gpsfix ubx set --survey-in ...
/// --rtcm msm7` through the daemon's control socket, then the survey's progress in
/// `/metrics` and the status document, and the receiver's RTCM 3 frames read by the daemon.
@Suite("A base station's receiver through the daemon", .serialized)
struct BaseStationTests {
    @Test("survey-in and MSM7 set through the daemon: progress in /metrics and /api/v1/status, RTCM frames read")
    func surveyAndRTCM() throws {
        let folder = try makeTemporaryFolder("base")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.generation9)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("control.sock").path
        let http = freePort(), metrics = freePort()
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            receiver.path, "--speed", "\(receiver.speed)", "--socket", socket, "--control-socket", control,
            "--http", "127.0.0.1:\(http)", "--metrics", "127.0.0.1:\(metrics)",
        ])
        var stopped = false
        defer { if !stopped { daemon.stop() } }
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        let raw = try #require(LineClient.connect(unixPath: socket))
        raw.send(#"?WATCH={"enable":true,"raw":2};"# + "\n")

        let set = try UBXConfigurationToolTests.ubx([
            "set", receiver.path, "--control-socket", control, "--survey-in", "60,5", "--rtcm", "msm7",
        ])
        #expect(set.status == 0, "\(set.output) \(set.errors)")
        let shown = try UBXConfigurationToolTests.ubx(["show", receiver.path, "--control-socket", control, "--json"])
        let report = try #require(shown.output.json, "\(shown.errors)")
        let rtcm = (report["rtcm"] as? [[String: Any]])?.compactMap { $0["message"] as? Int }
        #expect(rtcm == [1005, 1077, 1087, 1097, 1127, 1230], "\(report)")
        #expect((report["survey"] as? [String: Any])?["active"] as? Bool == true, "\(report)")

        try waitUntil("the survey in /metrics", within: 10) {
            let text = (try? WebTests.get("/metrics", port: metrics).body) ?? ""
            func value(_ name: String) -> Double? { Self.sample(name, device: receiver.path, in: text) }
            return value("gpsfix_survey_active") == 1 && value("gpsfix_survey_valid") == 0 && (value("gpsfix_survey_observations") ?? 0) > 0
                && (value("gpsfix_survey_duration_seconds") ?? 0) > 0 && (value("gpsfix_survey_accuracy_metres") ?? 0) > 5
        }
        let status = try #require(try WebTests.get("/api/v1/status", port: http).body.json)
        let entry = try #require((status["devices"] as? [[String: Any]])?.first)
        let survey = try #require(entry["survey"] as? [String: Any], "\(entry)")
        #expect(survey["active"] as? Bool == true && survey["valid"] as? Bool == false, "\(survey)")
        #expect((survey["observations"] as? Int ?? 0) > 0 && (survey["accuracy"] as? Double ?? 0) > 5, "\(survey)")
        #expect(entry["baseReady"] as? Bool == false, "\(entry)")

        // The frames the daemon read, as its raw watcher gets them, over 12 solutions: the
        // observations each second, and not the station's position (1005, asked every 10),
        // which a receiver sends only once its survey is done.
        var stream: [UInt8] = []
        let deadline = Date().addingTimeInterval(12)
        while Date() < deadline {
            if let bytes = raw.readBytes(count: 64, timeout: 1) { stream += bytes }
        }
        let numbers = Set(RTCMWire.messageNumbers(in: stream))
        #expect(numbers.isSuperset(of: [1077, 1087, 1097]) && !numbers.contains(1005), "\(numbers)")

        // The device's counters, logged as the daemon stops, count the RTCM 3 frames it read
        // (1077, 1087 and 1097 each second).
        daemon.stop()
        stopped = true
        let counted = daemon.errorText.split(separator: "\n").first { $0.contains("device counters:") } ?? ""
        let frames = counted.firstRange(of: "RTCM 3 frames ").map { Int(counted[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        #expect(frames >= 3, "\(counted)")
    }

    @Test("the status page says 'base ready' once the survey is valid", .enabled(if: installedOrInCI(WebTests.browserIsUsable), "needs chromium, chromium-driver and python3-selenium"))
    func baseReadyOnThePage() throws {
        let folder = try makeTemporaryFolder("base")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.generation9)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("control.sock").path
        let http = freePort()
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            receiver.path, "--speed", "\(receiver.speed)", "--socket", socket, "--control-socket", control, "--http", "127.0.0.1:\(http)",
        ])
        defer { daemon.stop() }
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        // A survey of 1 s to 15 m: the simulated mean is within it after 3 s.
        let set = try UBXConfigurationToolTests.ubx(["set", receiver.path, "--control-socket", control, "--survey-in", "1,15"])
        #expect(set.status == 0, "\(set.output) \(set.errors)")
        try waitUntil("the base ready in the status", within: 15) {
            let status = (try? WebTests.get("/api/v1/status", port: http).body.json) ?? [:]
            return (status["devices"] as? [[String: Any]])?.first?["baseReady"] as? Bool == true
        }
        let screenshot = folder.appendingPathComponent("base.png").path
        let page = try RunningProcess(
            "/usr/bin/python3", [WebTests.tools.appendingPathComponent("page_check.py").path, "http://127.0.0.1:\(http)/", screenshot, "base ready"])
        if page.wait(timeout: 60) == nil { page.stop() }
        #expect(page.outputText.json?["text"] as? Bool == true, "\(page.outputText) \(page.errorText.suffix(400))")
    }

    /// The value of gauge `name` for `device` in a Prometheus exposition.
    static func sample(_ name: String, device: String, in text: String) -> Double? {
        let prefix = "\(name){device=\"\(device)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }
}
