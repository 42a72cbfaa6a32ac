import Foundation
import TestSupport
import Testing

/// `gpsfix doctor` against the real daemon on its demo receiver, and against none.
@Suite("gpsfix doctor, live")
struct DoctorLiveTests {
    static func findings(_ output: String) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]) ?? []
    }

    @Test("on the demo daemon: it answers, the receiver sends a 3D fix, the clock agrees; JSON for scripts")
    func demo() throws {
        let folder = try makeTemporaryFolder("doctor")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let tcpPort = freePort(), silentPort = freePort()
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", socket, "--tcp", "127.0.0.1:\(tcpPort)", "--time-from-pty", "--no-shm", "--chrony-socket-dir", folder.path,
        ])
        defer { daemon.stop() }
        _ = LineClient.connect(unixPath: socket)
        // The time service pairs from the fourth fix on.
        usleep(4_000_000)
        // The configuration names gpsd's TCP port, which the daemon serves, and an HTTP
        // address nothing listens on.
        let configuration = folder.appendingPathComponent("gpsfixd.conf").path
        try "tcp = \"127.0.0.1:\(tcpPort)\"\nhttp = \"127.0.0.1:\(silentPort)\"\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let findings = Self.findings(try run(Binaries.gpsfix, ["doctor", "--socket", socket, "--config", configuration, "--json", "--seconds", "3"]))
        func find(_ check: String) -> [String: Any]? { findings.first { ($0["check"] as? String) == check } }
        #expect((find("daemon")?["status"] as? String) == "ok")
        #expect((find("daemon")?["detail"] as? String)?.hasPrefix("gpsfix-") == true)
        let receiver = try #require(findings.first { ($0["check"] as? String)?.hasPrefix("receiver /dev/pts/") == true })
        #expect(receiver["status"] as? String == "ok")
        #expect((receiver["detail"] as? String)?.contains("3D fix") == true, "\(receiver)")
        #expect(findings.contains { ($0["check"] as? String)?.hasPrefix("device /dev/pts/") == true && $0["status"] as? String == "ok" })
        #expect((find("receiver time")?["status"] as? String) == "ok", "\(findings)")
        #expect((find("gpsd TCP")?["status"] as? String) == "ok")
        #expect((find("HTTP")?["status"] as? String) == "fail" && (find("HTTP")?["detail"] as? String)?.contains("\(silentPort)") == true)
        // What doctor asks the daemon: ?STATUS; answers the API's status document.
        let client = try LineClient(unixPath: socket)
        client.send("?STATUS;\n")
        let status = try #require(client.readLines(until: { $0.contains(#""class":"STATUS""#) })?.last?.json)
        let devices = try #require(status["devices"] as? [[String: Any]])
        #expect(devices.count == 1 && (devices.first?["online"] as? Bool) == true && (devices.first?["sentences"] as? Int ?? 0) > 0)
        #expect((status["services"] as? [String: Any])?["timeService"] is String)
    }

    @Test("without a daemon, whose configuration file is not TOML: both failures, how to mend them, and status 1")
    func noDaemon() throws {
        let folder = try makeTemporaryFolder("doctor")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = folder.appendingPathComponent("gpsfixd.conf").path
        try "devices = [\"/dev/ttyUSB0\"]\ntcp = 127.0.0.1\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let process = try RunningProcess(
            Binaries.gpsfix, ["doctor", "--socket", folder.appendingPathComponent("none.sock").path, "--config", configuration, "--seconds", "1"])
        #expect(process.wait(timeout: 20) == 1)
        #expect(process.outputText.contains("fail  daemon"))
        #expect(process.outputText.contains("fix: systemctl start gpsfixd.socket gpsfixd.service"))
        #expect(process.outputText.contains("fail  configuration") && process.outputText.contains("\(configuration):2:"), "\(process.outputText)")
    }
}
