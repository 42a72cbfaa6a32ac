import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The status page, the HTTP API and the event stream, read by a real browser, a JSON
/// Schema validator and raw sockets.
@Suite("gpsfixd's status page and HTTP API", .serialized)
struct WebTests {
    static let tools = Binaries.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Tools")
    static var browserIsUsable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") }

    /// The body of `GET path`, and the response's head lines.
    static func get(_ path: String, port: Int, method: String = "GET") throws -> (head: [String], body: String) {
        let client = try LineClient(tcpPort: port)
        client.send("\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        var head: [String] = []
        while let line = client.readLine(timeout: 10), !line.isEmpty { head.append(line) }
        var body: [String] = []
        while let line = client.readLine(timeout: 2) { body.append(line) }
        return (head, body.joined(separator: "\n"))
    }

    @Test("a real browser shows one sky mark per satellite of the SKY, the latest position, and follows the demo as it moves",
          .enabled(if: installedOrInCI(browserIsUsable), "needs chromium, chromium-driver and python3-selenium"))
    func browser() throws {
        let folder = try makeTemporaryFolder("web")
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = freePort(), socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socket, "--http", "127.0.0.1:\(port)"])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        // The screenshot lands beside the build, for people to look at.
        let screenshot = Binaries.folder.appendingPathComponent("status-page.png").path
        let page = try RunningProcess("/usr/bin/python3", [Self.tools.appendingPathComponent("page_check.py").path, "http://127.0.0.1:\(port)/", screenshot])
        let status = page.wait(timeout: 60)
        if status == nil { page.stop() }
        let seen = try #require(page.outputText.json, "\(page.outputText) \(page.errorText.suffix(400))")
        print("status page screenshot: \(screenshot)")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        #expect(seen["live"] as? Bool == true)

        // Every satellite of the SKY with a position has its mark, and no other.
        let marks = Set(seen["marks"] as? [Int] ?? [])
        let sky = try #require(try Self.get("/api/v1/sky", port: port).body.json)
        let satellites = ((sky["skies"] as? [[String: Any]])?.first?["satellites"] as? [[String: Any]]) ?? []
        let placed = Set(satellites.filter { !($0["el"] is NSNull) && !($0["az"] is NSNull) }.compactMap { $0["PRN"] as? Int })
        #expect(!marks.isEmpty && marks == placed, "marks \(marks.sorted()), SKY \(placed.sorted())")

        // The position shown is a TPV's, and it changed as the demo moved.
        var positions: [(Double, Double)] = []
        while let line = watcher.readLine(timeout: 0.3) {
            if let json = line.json, let lat = json["lat"] as? Double, let lon = json["lon"] as? Double { positions.append((lat, lon)) }
        }
        let latitude = try #require(seen["lat"] as? Double), longitude = try #require(seen["lon"] as? Double)
        #expect(positions.contains { abs($0.0 - latitude) < 1e-9 && abs($0.1 - longitude) < 1e-9 })
        let later = try #require(seen["later"] as? [String: Any])
        #expect(later["lat"] as? Double != latitude || later["lon"] as? Double != longitude, "the page did not follow the demo")
    }

    @Test("every API document matches the published JSON Schema, every field present; read-only; CORS only when asked; /metrics on the same server")
    func api() throws {
        let folder = try makeTemporaryFolder("api")
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = freePort(), socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socket, "--http", "127.0.0.1:\(port)"])
        defer { daemon.stop() }
        _ = LineClient.connect(unixPath: socket)
        usleep(1_500_000)
        let schema = try Self.get("/api/v1/schema", port: port).body
        try schema.write(toFile: folder.appendingPathComponent("schema.json").path, atomically: true, encoding: .utf8)
        for (document, definition) in [("devices", "devices"), ("fix", "fix"), ("sky", "sky"), ("status", "status")] {
            let (head, body) = try Self.get("/api/v1/\(document)", port: port)
            #expect(head.first == "HTTP/1.1 200 OK")
            #expect(!head.contains { $0.lowercased().hasPrefix("access-control-allow-origin") })
            let path = folder.appendingPathComponent("\(document).json").path
            try body.write(toFile: path, atomically: true, encoding: .utf8)
            let check = try RunningProcess("/usr/bin/python3", ["-c", """
                import json, sys, jsonschema
                schema = json.load(open(sys.argv[1]))
                document = json.load(open(sys.argv[2]))
                jsonschema.validate(document, {**schema, "$ref": "#/$defs/" + sys.argv[3]})
                print("valid")
                """, folder.appendingPathComponent("schema.json").path, path, definition])
            #expect(check.wait(timeout: 20) == 0 && check.outputText.contains("valid"), "\(document): \(check.errorText.suffix(400))")
        }
        let fix = try #require(try Self.get("/api/v1/fix", port: port).body.json?["fixes"] as? [[String: Any]])
        #expect(fix.first?["eph"] is NSNull, "a value the receiver does not give is null, not left out")
        #expect(try Self.get("/api/v1/fix", port: port, method: "POST").head.first == "HTTP/1.1 405 Method Not Allowed")
        #expect(try Self.get("/nothing", port: port).head.first == "HTTP/1.1 404 Not Found")
        let metrics = try Self.get("/metrics", port: port)
        #expect(metrics.head.first == "HTTP/1.1 200 OK" && metrics.body.contains("gpsfix_clients_connected"))
        let page = try Self.get("/", port: port)
        // One file under 100 KB that fetches nothing from elsewhere (works without internet).
        #expect(page.body.utf8.count < 100_000)
        for external in [#"src="http"#, #"href="http"#, "url(http", "@import", "fonts.g"] { #expect(!page.body.contains(external), "\(external)") }
    }

    @Test("with --http-cors the API and the events may be read from that origin")
    func cors() throws {
        let folder = try makeTemporaryFolder("cors")
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = freePort(), socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(
            Binaries.gpsfixd, ["--demo", "--socket", socket, "--http", "127.0.0.1:\(port)", "--http-cors", "https://dash.example"])
        defer { daemon.stop() }
        _ = LineClient.connect(unixPath: socket)
        try waitUntil("the HTTP server") { (try? LineClient(tcpPort: port)) != nil }
        #expect(try Self.get("/api/v1/fix", port: port).head.contains("Access-Control-Allow-Origin: https://dash.example"))
    }

    @Test("/events carries tpv, sky, status and device events; a stalled event reader delays no socket client")
    func events() throws {
        let port = freePort()
        let daemon = try DaemonUnderTest(fixture: "gpsd/haicom-305N.log", speed: 10, extra: ["--http", "127.0.0.1:\(port)"])
        try waitUntil("the HTTP server") { (try? LineClient(tcpPort: port)) != nil }
        // The socket watcher watches before the stream is read, so it is sent every TPV the
        // stream is (on a busy machine, a WATCH sent after the stream opened missed one).
        let watcher = try daemon.client()
        watcher.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        #expect(watcher.readLines(until: { $0.contains(#""class":"WATCH""#) }) != nil)
        let stalled = try LineClient(tcpPort: port)
        stalled.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")  // and never reads
        let reader = try LineClient(tcpPort: port)
        reader.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(reader.readLine() == "HTTP/1.1 200 OK")
        var names: [String: Int] = [:]
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, (names["tpv"] ?? 0) < 20 || (names["status"] ?? 0) < 2, let line = reader.readLine(timeout: 5) {
            if line.hasPrefix("event: ") { names[String(line.dropFirst(7)), default: 0] += 1 }
            if line.hasPrefix("data: ") { #expect(line.dropFirst(6).hasPrefix(#"{"class":"#)) }
        }
        #expect((names["tpv"] ?? 0) >= 20 && (names["sky"] ?? 0) >= 1 && (names["status"] ?? 0) >= 2, "\(names)")
        // The device goes away: a device event on the stream.
        daemon.replay.stop()
        let device = reader.readLines(until: { $0 == "event: device" }, timeout: 15)
        #expect(device != nil)
        // The socket watcher was served throughout, beside the stalled stream (a sanitised
        // daemon, many times slower, takes its WATCH later and its TPVs more slowly).
        var tpvs = 0
        while let line = watcher.readLine(timeout: Binaries.isSanitized ? 2 : 0.5) { if line.contains(#""class":"TPV""#) { tpvs += 1 } }
        #expect(tpvs >= (Binaries.isSanitized ? 15 : 20))
        _ = stalled
    }
}
