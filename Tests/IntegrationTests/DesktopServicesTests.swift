import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus system bus of the test's own, on a socket in its folder, open to every name:
/// geoclue and avahi-daemon register on it as on the machine's, and nothing of the
/// machine's is touched.
final class PrivateSystemBus {
    let folder: URL
    private let process: RunningProcess
    var address: String { "unix:path=\(folder.appendingPathComponent("bus.sock").path)" }
    var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    static var isUsable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") }

    init(folder: URL) throws {
        self.folder = folder
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
              "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(folder.appendingPathComponent("bus.sock").path)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
              </policy>
            </busconfig>
            """
        let path = folder.appendingPathComponent("bus.conf").path
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        process = try RunningProcess("/usr/bin/dbus-daemon", ["--config-file=\(path)", "--nofork"])
        let socket = folder.appendingPathComponent("bus.sock").path
        try waitUntil("the private bus") { FileManager.default.fileExists(atPath: socket) }
    }

    deinit { process.stop() }
}

@Suite(
    "NMEA 0183 out read by the desktop's services: geoclue, avahi", .serialized,
    .enabled(if: installedOrInCI(PrivateSystemBus.isUsable && FileManager.default.isExecutableFile(atPath: "/usr/libexec/geoclue")),
             "needs dbus, geoclue-2.0, avahi-daemon and avahi-utils"))
struct DesktopServicesTests {
    @Test("geoclue reading gpsfixd's --nmea-socket gives an app the demo's position")
    func geoclue() throws {
        let folder = try makeTemporaryFolder("geoclue")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bus = try PrivateSystemBus(folder: folder)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path, nmea = folder.appendingPathComponent("nmea.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socket, "--nmea-socket", nmea])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        let geoclue = try RunningProcess("/usr/libexec/geoclue", ["-t", "0", "-u", nmea], environment: bus.environment)
        defer { geoclue.stop() }
        let script = Binaries.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Tools/geoclue_where.py").path
        let app = try RunningProcess("/usr/bin/python3", [script, "30"], environment: bus.environment)
        let status = app.wait(timeout: 40)
        if status == nil { app.stop(SIGKILL) }
        let answer = app.outputText.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(status == 0 && answer.count == 2, "\(app.outputText) \(app.errorText.suffix(300)) \(geoclue.outputText.suffix(300))")
        // The position is one the daemon served meanwhile.
        var positions: [(Double, Double)] = []
        while let line = watcher.readLine(timeout: 0.2) {
            if let json = line.json, let latitude = json["lat"] as? Double, let longitude = json["lon"] as? Double {
                positions.append((latitude, longitude))
            }
        }
        guard answer.count == 2 else { return }
        #expect(positions.contains { abs($0.0 - answer[0]) < 1e-5 && abs($0.1 - answer[1]) < 1e-5 }, "\(answer) among \(positions.count)")
    }

    @Test("NMEA 0183 out reachable from other hosts is announced to avahi as _nmea-0183._tcp on its port, again after avahi-daemon restarts")
    func avahi() throws {
        let folder = try makeTemporaryFolder("avahi")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bus = try PrivateSystemBus(folder: folder)
        // Loopback only: the test's announcements stay on this machine.
        let configuration = folder.appendingPathComponent("avahi.conf").path
        try "[server]\nallow-interfaces=lo\nuse-ipv6=no\n[publish]\npublish-hinfo=no\npublish-workstation=no\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        func startAvahi() throws -> RunningProcess {
            let avahi = try RunningProcess(
                "/usr/sbin/avahi-daemon", ["--no-drop-root", "--no-chroot", "--no-rlimits", "-f", configuration], environment: bus.environment)
            usleep(1_000_000)
            #expect(avahi.wait(timeout: 0.1) == nil, "avahi-daemon ended: \(avahi.errorText.suffix(300))")
            return avahi
        }
        var avahi = try startAvahi()
        defer { avahi.stop() }
        let port = freePort()
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        // A password in the environment, as the service's EnvironmentFile would give it.
        let daemon = try RunningProcess(
            Binaries.gpsfixd, ["--demo", "--socket", socket, "--nmea-tcp", "0.0.0.0:\(port)", "--allow-remote"],
            environment: bus.environment.merging(["GPSFIX_MQTT_PASSWORD": "hunter2-in-env"]) { $1 })
        _ = LineClient.connect(unixPath: socket)
        func expectAnnounced(_ when: String) throws {
            let browse = try RunningProcess("/usr/bin/avahi-browse", ["-rtp", "_nmea-0183._tcp"], environment: bus.environment)
            if browse.wait(timeout: 15) == nil { browse.stop() }
            let resolved = browse.outputText.split(separator: "\n").filter { $0.hasPrefix("=") }
            #expect(resolved.contains { $0.hasSuffix(";\(port);") && $0.contains("GPSFix") }, "\(when): \(browse.outputText) \(browse.errorText) \(avahi.errorText.suffix(500)) \(avahi.outputText.suffix(500))")
        }
        try expectAnnounced("at start")
        // avahi-daemon restarted (an upgrade, a network change): the announcement comes back.
        avahi.stop()
        avahi = try startAvahi()
        try expectAnnounced("after avahi-daemon restarted")
        // The publisher, the daemon's child, has the bus but none of the daemon's secrets.
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(daemon.pid)/task/\(task)/children", encoding: .utf8)) ?? "").split(separator: " ")
        }
        let environments = children.compactMap { try? String(contentsOfFile: "/proc/\($0)/environ", encoding: .utf8) }
        #expect(!environments.isEmpty && environments.allSatisfy { $0.contains("DBUS_SYSTEM_BUS_ADDRESS=") })
        #expect(!environments.contains { $0.contains("hunter2") || $0.contains("GPSFIX_") })
        // Stopping the daemon withdraws the announcement, at once.
        daemon.stop()
        #expect(daemon.wait(timeout: 5) != nil)
        let after = try RunningProcess("/usr/bin/avahi-browse", ["-rtp", "_nmea-0183._tcp"], environment: bus.environment)
        if after.wait(timeout: 15) == nil { after.stop() }
        // Gone, or seen going (avahi's cache may show it a last time, then its removal).
        let lastWord = after.outputText.split(separator: "\n").last { $0.contains("GPSFix") }
        #expect(lastWord == nil || lastWord?.hasPrefix("-") == true, "\(after.outputText)")
    }
}
