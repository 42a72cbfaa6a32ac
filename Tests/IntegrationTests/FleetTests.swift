import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A mosquitto broker of the test's own, on a free loopback port, without persistence.
final class TestBroker {
    static let executable = "/usr/sbin/mosquitto"
    static var isUsable: Bool {
        FileManager.default.isExecutableFile(atPath: executable) && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
    }

    let folder: URL
    let port: Int
    private(set) var process: RunningProcess

    /// With `user`, only that user (and `password`) may connect; with `certificate`, only
    /// over TLS, with that certificate and key (PEM files).
    init(folder: URL, user: (name: String, password: String)? = nil, certificate: (path: String, key: String)? = nil) throws {
        self.folder = folder
        port = freePort()
        var configuration = "listener \(port) 127.0.0.1\npersistence false\n"
        if let certificate { configuration += "certfile \(certificate.path)\nkeyfile \(certificate.key)\n" }
        if getuid() == 0 { configuration += "user root\n" }
        if let user {
            let passwords = folder.appendingPathComponent("passwords").path
            _ = try run("/usr/bin/mosquitto_passwd", ["-b", "-c", passwords, user.name, user.password])
            configuration += "allow_anonymous false\npassword_file \(passwords)\n"
        } else {
            configuration += "allow_anonymous true\n"
        }
        try configuration.write(to: folder.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        process = try Self.start(folder: folder, port: port)
    }

    private static func start(folder: URL, port: Int) throws -> RunningProcess {
        let process = try RunningProcess(executable, ["-c", folder.appendingPathComponent("mosquitto.conf").path])
        for _ in 0..<200 where (try? LineClient(tcpPort: port)) == nil { usleep(25_000) }
        return process
    }

    func restart() throws {
        process.stop()
        process = try Self.start(folder: folder, port: port)
    }

    /// `mosquitto_sub` until `count` messages arrived or `seconds` passed: each line
    /// `RETAIN TOPIC PAYLOAD` (RETAIN 1 for a retained message).
    func subscribe(_ topic: String, count: Int, seconds: Int = 10, arguments: [String] = []) throws -> [(retained: Bool, topic: String, payload: String)] {
        let output = try run("/usr/bin/mosquitto_sub", [
            "-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-C", "\(count)", "-W", "\(seconds)", "-F", "%r %t %p",
        ] + arguments, timeout: Double(seconds + 5))
        return output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3 else { return nil }
            return (parts[0] == "1", String(parts[1]), String(parts[2]))
        }
    }

    deinit { process.stop() }
}

@Suite("Fleets and monitoring: a real mosquitto broker, Prometheus' parser", .serialized, .enabled(if: installedOrInCI(TestBroker.isUsable), "needs mosquitto and mosquitto-clients"))
struct FleetTests {
    static func daemon(folder: URL, arguments: [String]) throws -> (RunningProcess, socket: String) {
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socket, "--log-level", "info"] + arguments)
        _ = LineClient.connect(unixPath: socket)
        return (daemon, socket)
    }

    @Test("TPVs with a position, SKY and the retained device state reach a subscriber; a later one gets the retained TPV at once; the last will says offline after SIGKILL")
    func publishes() throws {
        let folder = try makeTemporaryFolder("mqtt")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broker = try TestBroker(folder: folder)
        let (daemon, _) = try Self.daemon(folder: folder, arguments: ["--mqtt", "mqtt://127.0.0.1:\(broker.port)/fleet/test"])
        defer { daemon.stop() }

        let messages = try broker.subscribe("fleet/test/#", count: 8)
        let device = try #require(messages.first { $0.topic.hasSuffix("/device") }, "\(messages) \(daemon.errorText)")
        #expect(device.topic.hasPrefix("fleet/test/pts"))
        #expect(device.payload.json?["class"] as? String == "DEVICE")
        #expect(device.payload.json?["online"] as? Bool == true)
        let tpvs = messages.filter { $0.topic.hasSuffix("/tpv") }.compactMap(\.payload.json)
        #expect(tpvs.contains { $0["class"] as? String == "TPV" && $0["mode"] as? Int == 3 && $0["lat"] is Double })
        #expect(messages.contains { $0.topic.hasSuffix("/sky") && $0.payload.json?["class"] as? String == "SKY" && !$0.retained })

        // A subscriber that comes later gets the latest TPV and device state from the broker,
        // retained, at once. (The first subscriber's retain flags depend on whether it
        // subscribed before or after the daemon's first messages.)
        let late = try broker.subscribe("fleet/test/+/tpv", count: 1, seconds: 1)
        #expect(late.first?.retained == true)
        let lateDevice = try broker.subscribe("fleet/test/+/device", count: 1, seconds: 1)
        #expect(lateDevice.first?.retained == true)
        #expect(lateDevice.first?.payload.json?["online"] as? Bool == true)
        #expect(late.first?.payload.json?["lat"] is Double)

        daemon.stop(SIGKILL)
        var will: [String: Any]?
        for _ in 0..<20 where will?["online"] as? Bool != false {
            will = try broker.subscribe("fleet/test/+/device", count: 1, seconds: 1).first?.payload.json
        }
        #expect(will?["online"] as? Bool == false)
        #expect((will?["path"] as? String)?.hasPrefix("/dev/pts/") == true)
    }

    @Test("The broker stopped and started again: publishing resumes with the retained state, and a socket client misses no cycle meanwhile")
    func brokerRestart() throws {
        let folder = try makeTemporaryFolder("mqtt")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broker = try TestBroker(folder: folder)
        let (daemon, socket) = try Self.daemon(folder: folder, arguments: ["--mqtt", "mqtt://127.0.0.1:\(broker.port)"])
        defer { daemon.stop() }
        #expect(try broker.subscribe("gpsfix/#", count: 2).count == 2)

        let client = try LineClient(unixPath: socket)
        client.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        _ = client.readLines(until: { $0.contains(#""class":"TPV""#) })
        broker.process.stop()
        let stoppedAt = Date()
        // Six seconds without a broker; the daemon keeps serving its socket.
        let duringOutage = client.readLines(until: { _ in Date().timeIntervalSince(stoppedAt) > 6 }, timeout: 10) ?? []
        try broker.restart()
        let times = duringOutage.compactMap(\.json).filter { $0["class"] as? String == "TPV" }.compactMap { $0["time"] as? String }
            .compactMap(Self.seconds)
        #expect(times.count >= 5, "\(duringOutage.count) lines during the outage")
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 <= 1.001 }, "a cycle is missing: \(times)")

        // libmosquitto retries after 1, 2, 4, 8 s...: a fresh TPV arrives within its backoff.
        let resumed = try broker.subscribe("gpsfix/+/+/tpv", count: 2, seconds: 30)
        #expect(resumed.contains { !$0.retained }, "\(resumed) \(daemon.errorText)")
        #expect(daemon.errorText.contains("MQTT broker not connected"))
        #expect(daemon.errorText.components(separatedBy: "MQTT connected").count >= 3)
    }

    @Test("A broker that requires a user and password: the password from a file (its line ended as Windows ends it) is accepted, a wrong one is refused and said so")
    func credentials() throws {
        let folder = try makeTemporaryFolder("mqtt")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broker = try TestBroker(folder: folder, user: ("van7", "s3cret pass"))
        let passwordFile = folder.appendingPathComponent("password")
        try "s3cret pass\r\n".write(to: passwordFile, atomically: true, encoding: .utf8)
        let (daemon, _) = try Self.daemon(folder: folder, arguments: [
            "--mqtt", "mqtt://van7@127.0.0.1:\(broker.port)", "--mqtt-password-file", passwordFile.path,
        ])
        defer { daemon.stop() }
        let messages = try broker.subscribe("gpsfix/#", count: 2, arguments: ["-u", "van7", "-P", "s3cret pass"])
        #expect(messages.count == 2, "\(daemon.errorText)")
        #expect(!daemon.outputText.contains("s3cret") && !daemon.errorText.contains("s3cret"))

        let wrongFolder = try makeTemporaryFolder("mqtt")
        defer { try? FileManager.default.removeItem(at: wrongFolder) }
        let wrong = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", wrongFolder.appendingPathComponent("s.sock").path,
            "--mqtt", "mqtt://van7:guess@127.0.0.1:\(broker.port)/intruder",
        ])
        defer { wrong.stop() }
        for _ in 0..<100 where !wrong.errorText.contains("MQTT broker not connected") { usleep(50_000) }
        #expect(wrong.errorText.contains("not authorised") || wrong.errorText.contains("not authorized"), "\(wrong.errorText)")
        #expect(try broker.subscribe("intruder/#", count: 1, seconds: 2, arguments: ["-u", "van7", "-P", "s3cret pass"]).isEmpty)
    }

    @Test("mqtts:// with --mqtt-ca: publishes over TLS to a broker whose certificate that authority signed; without it, the certificate is refused")
    func tls() throws {
        let folder = try makeTemporaryFolder("mqtts")
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("broker.pem").path
        let key = folder.appendingPathComponent("broker.key").path
        _ = try run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        try #require(FileManager.default.fileExists(atPath: certificate), "openssl made no certificate")
        let broker = try TestBroker(folder: folder, certificate: (certificate, key))
        let (daemon, _) = try Self.daemon(folder: folder, arguments: [
            "--mqtt", "mqtts://127.0.0.1:\(broker.port)/secure", "--mqtt-ca", certificate,
        ])
        defer { daemon.stop() }
        let messages = try broker.subscribe("secure/#", count: 2, arguments: ["--cafile", certificate])
        #expect(messages.count == 2, "\(daemon.errorText)")
        #expect(messages.contains { $0.topic.hasSuffix("/device") })
        #expect(try broker.subscribe("secure/+/device", count: 1, seconds: 1, arguments: ["--cafile", certificate]).first?.retained == true)

        let untrusting = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", folder.appendingPathComponent("other.sock").path,
            "--mqtt", "mqtts://127.0.0.1:\(broker.port)/untrusted",
        ])
        defer { untrusting.stop() }
        for _ in 0..<100 where !untrusting.errorText.contains("MQTT broker not connected") { usleep(50_000) }
        #expect(untrusting.errorText.contains("MQTT broker not connected"), "\(untrusting.errorText)")
        #expect(try broker.subscribe("untrusted/#", count: 1, seconds: 2, arguments: ["--cafile", certificate]).isEmpty)
    }

    @Test("mqtts://: a broker whose certificate is refused for a while (renewed wrong, then right) is published to again: the network thread does not end")
    func tlsFailureRecovered() throws {
        let folder = try makeTemporaryFolder("mqtts")
        defer { try? FileManager.default.removeItem(at: folder) }
        func certificate(_ name: String) throws -> (path: String, key: String) {
            let made = (folder.appendingPathComponent("\(name).pem").path, folder.appendingPathComponent("\(name).key").path)
            _ = try run("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", made.1, "-out", made.0, "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
            return made
        }
        let trusted = try certificate("trusted"), other = try certificate("other"), served = try certificate("served")
        func serve(_ pair: (path: String, key: String)) throws {
            for (from, to) in [(pair.path, served.path), (pair.key, served.key)] {
                try? FileManager.default.removeItem(atPath: to)
                try FileManager.default.copyItem(atPath: from, toPath: to)
            }
        }
        try serve(trusted)
        let broker = try TestBroker(folder: folder, certificate: served)
        let (daemon, _) = try Self.daemon(folder: folder, arguments: ["--mqtt", "mqtts://127.0.0.1:\(broker.port)/secure", "--mqtt-ca", trusted.path])
        defer { daemon.stop() }
        #expect(try broker.subscribe("secure/#", count: 1, arguments: ["--cafile", trusted.path]).count == 1, "\(daemon.errorText)")

        try serve(other)
        try broker.restart()
        // Long enough for the connection to be tried again, and refused, more than once
        // (after 1 s, then 2 s): the outage itself is logged once, at the broker's restart.
        sleep(6)
        try serve(trusted)
        try broker.restart()
        let again = try broker.subscribe("secure/+/tpv", count: 1, seconds: 45, arguments: ["--cafile", trusted.path])
        #expect(again.count == 1, "\(daemon.errorText.suffix(2000))")
    }

    @Test("a broker whose name does not resolve yet, or that refuses TLS connections: retried, not switched off, and no core spun meanwhile")
    func unreachableAtStart() throws {
        let folder = try makeTemporaryFolder("mqtt")
        defer { try? FileManager.default.removeItem(at: folder) }
        let unresolved = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", folder.appendingPathComponent("a.sock").path, "--mqtt", "mqtt://broker.invalid",
        ])
        defer { unresolved.stop() }
        let refused = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", folder.appendingPathComponent("b.sock").path, "--mqtt", "mqtts://127.0.0.1:\(freePort())",
        ])
        defer { refused.stop() }
        try waitUntil("both outages logged", within: 20) {
            unresolved.errorText.contains("MQTT broker not connected") && refused.errorText.contains("MQTT broker not connected")
        }
        let before = FaultInjectionTests.cpuSeconds(of: refused.pid)
        sleep(5)
        #expect(FaultInjectionTests.cpuSeconds(of: refused.pid) - before < 2.5, "a core spun while the broker refused")
        for daemon in [unresolved, refused] {
            #expect(daemon.isRunning && !daemon.errorText.contains("MQTT publishing is off"), "\(daemon.errorText.suffix(1500))")
        }
    }

    @Test("/metrics parses with Python's prometheus_client, twice, and its sentence and cycle counters grow")
    func metrics() throws {
        let python = "/usr/bin/python3"
        let folder = try makeTemporaryFolder("metrics")
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = freePort()
        let (daemon, _) = try Self.daemon(folder: folder, arguments: ["--metrics", "127.0.0.1:\(port)"])
        defer { daemon.stop() }
        let script = """
            import sys, time, urllib.request
            from prometheus_client.parser import text_string_to_metric_families
            def scrape():
                with urllib.request.urlopen("http://127.0.0.1:\(port)/metrics", timeout=5) as response:
                    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4"), response.headers
                    text = response.read().decode()
                return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text) for s in f.samples}
            first = scrape()
            time.sleep(2.5)
            second = scrape()
            for name in ("gpsfix_sentences_total", "gpsfix_cycles_total", "gpsfix_fix_mode", "gpsfix_clients_connected"):
                for key in sorted(k for k in second if k[0] == name):
                    print(name, dict(key[1]).get("device", "-"), first.get(key, -1), second[key])
            """
        let output = try run(python, ["-c", script])
        let rows = output.split(separator: "\n").map { $0.split(separator: " ") }
        let values = Dictionary(rows.compactMap { row -> (String, (Double, Double))? in
            guard row.count == 4, let first = Double(row[2]), let second = Double(row[3]) else { return nil }
            return (String(row[0]), (first, second))
        }, uniquingKeysWith: { first, _ in first })
        let sentences = try #require(values["gpsfix_sentences_total"], "\(output) \(daemon.errorText)")
        let cycles = try #require(values["gpsfix_cycles_total"])
        #expect(sentences.1 > sentences.0 && sentences.0 > 0)
        #expect(cycles.1 >= cycles.0 + 2)
        #expect(values["gpsfix_fix_mode"]?.1 == 3)
        #expect(values["gpsfix_clients_connected"] != nil)
    }

    /// Seconds since midnight of an ISO 8601 time (`2026-11-23T11:19:14.000Z`).
    static func seconds(_ time: String) -> Double? {
        let clock = time.split(separator: "T").last?.dropLast().split(separator: ":") ?? []
        guard clock.count == 3, let hours = Double(clock[0]), let minutes = Double(clock[1]), let seconds = Double(clock[2]) else { return nil }
        return hours * 3600 + minutes * 60 + seconds
    }
}
