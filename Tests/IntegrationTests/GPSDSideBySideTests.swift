import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Request framing and WATCH's defaults, each sent to gpsfixd and to the real gpsd 3.22
/// reading the same capture, and answered alike.
@Suite("gpsfixd beside gpsd: request framing and WATCH", .serialized)
struct GPSDSideBySideTests {
    /// What a client saw: the answers to its requests, in order (WATCH with the fields that
    /// decide the stream), then what the stream brought within a while.
    struct Transcript: Equatable, CustomStringConvertible {
        var answers: [String] = []
        var streamsReports = false
        var streamsSentences = false
        var description: String { "\(answers) reports: \(streamsReports) sentences: \(streamsSentences)" }
    }

    /// One step of a client: bytes sent as one write, and how many answers they bring.
    struct Step {
        var send: String
        var answers: Int
    }

    /// Sends `steps` on a fresh connection to `port`, collecting each step's answers
    /// (reports in between are the stream's), then watches the stream for `seconds`.
    static func transcript(port: Int, _ steps: [Step], streamFor seconds: Double = 2) throws -> Transcript {
        let client = try #require(LineClient.connect(tcpPort: port))
        #expect(client.readLine(timeout: 10)?.json?["class"] as? String == "VERSION")
        var transcript = Transcript()
        func note(_ line: String) -> Bool {
            if line.hasPrefix("$") || line.hasPrefix("!") {
                transcript.streamsSentences = true
                return false
            }
            let json = line.json ?? [:]
            switch json["class"] as? String ?? "?" {
            case "TPV", "SKY", "GST", "ATT":
                transcript.streamsReports = true
                return false
            case "DEVICE":
                return false  // gpsd tells JSON watchers of its device's activation at its own time
            case "WATCH":
                let fields = ["enable", "json", "nmea"].map { "\($0)=\(json[$0] as? Bool ?? false)" } + ["raw=\(json["raw"] as? Int ?? 0)"]
                transcript.answers.append("WATCH " + fields.joined(separator: ","))
            case let name:
                transcript.answers.append(name)
            }
            return true
        }
        for step in steps {
            client.send(step.send)
            var answered = 0
            let deadline = Date().addingTimeInterval(10)
            while answered < step.answers, Date() < deadline, let line = client.readLine(timeout: deadline.timeIntervalSinceNow) {
                if note(line) { answered += 1 }
            }
        }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, let line = client.readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            _ = note(line)
        }
        return transcript
    }

    /// The cases, each a client's steps.
    static let cases: [(String, [Step])] = [
        ("WATCH with json and no terminator at the end of the write", [Step(send: #"?WATCH={"enable":true,"json":true}"#, answers: 2)]),
        ("POLL without a newline", [Step(send: "?POLL;", answers: 1)]),
        ("WATCH and POLL on one line without a newline", [Step(send: #"?WATCH={"enable":true};?POLL;"#, answers: 3)]),
        ("WATCH enabling without json, then POLL", [
            Step(send: #"?WATCH={"enable":true}"# + "\n", answers: 2), Step(send: "?POLL;\n", answers: 1),
        ]),
        ("WATCH with enable alone, then json", [
            Step(send: #"?WATCH={"enable":true}"# + "\n", answers: 2), Step(send: #"?WATCH={"json":true}"# + "\n", answers: 2),
        ]),
        ("WATCH disabling", [Step(send: #"?WATCH={"enable":false}"# + "\n", answers: 2)]),
        ("WATCH with nmea alone", [Step(send: #"?WATCH={"nmea":true}"# + "\n", answers: 2)]),
        ("WATCH with json, then one that names neither", [
            Step(send: #"?WATCH={"enable":true,"json":true};"# + "\n", answers: 2), Step(send: #"?WATCH={"enable":true};"# + "\n", answers: 2),
        ]),
    ]

    @Test("each request and WATCH is answered as gpsd 3.22 answers it, and streams what gpsd streams",
          .enabled(if: installedOrInCI(FileManager.default.isExecutableFile(atPath: "/usr/sbin/gpsd")), "gpsd is not installed"))
    func answersAsGPSD() throws {
        let ours = try DaemonUnderTest()
        let folder = try makeTemporaryFolder("gpsd-side")
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("gps0").path
        let replay = try RunningProcess(Binaries.gpsfix, [
            "replay", Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path, "--link", link, "--speed", "4", "--loop",
        ])
        defer { replay.stop() }
        try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
        let port = freePort()
        let gpsd = try RunningProcess(
            "/usr/sbin/gpsd", ["-N", "-n", "-S", "\(port)", "-F", folder.appendingPathComponent("gpsd.sock").path, link])
        defer { gpsd.stop() }
        // Both have a fix before the cases begin, so a POLL means the same to both.
        for daemonPort in [ours.tcpPort, port] {
            let watcher = try #require(LineClient.connect(tcpPort: daemonPort))
            watcher.send(#"?WATCH={"enable":true,"json":true};"# + "\n")
            #expect(watcher.readLines(until: { $0.contains(#""class":"TPV""#) && $0.contains(#""mode":3"#) }, timeout: 30) != nil)
        }
        for (name, steps) in Self.cases {
            let theirs = try Self.transcript(port: port, steps)
            let mine = try Self.transcript(port: ours.tcpPort, steps)
            #expect(mine == theirs, "\(name): gpsfixd \(mine), gpsd \(theirs)")
        }
    }
}
