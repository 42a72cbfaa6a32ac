import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// chronyd as the tests run it: `-x` (the system clock is never touched), in the
/// foreground, as root, with a configuration and command socket of the test's own.
final class TestChronyd {
    static let executable = "/usr/sbin/chronyd"
    static var isUsable: Bool { FileManager.default.isExecutableFile(atPath: executable) && getuid() == 0 }

    let folder: URL
    private(set) var process: RunningProcess

    init(folder: URL) throws {
        self.folder = folder
        let configuration = """
            refclock SOCK \(folder.path)/chrony.clk.gps0.sock refid SOCK poll 0
            refclock SHM 0 refid SHM0 poll 0
            bindcmdaddress \(folder.path)/chronyc.sock
            cmdport 0
            pidfile \(folder.path)/chronyd.pid
            """
        try configuration.write(to: folder.appendingPathComponent("chrony.conf"), atomically: true, encoding: .utf8)
        process = try Self.start(in: folder)
    }

    private static func start(in folder: URL) throws -> RunningProcess {
        try RunningProcess(executable, ["-x", "-d", "-u", "root", "-f", folder.appendingPathComponent("chrony.conf").path])
    }

    func restart() throws {
        process.stop()
        process = try Self.start(in: folder)
    }

    /// chronyc's `sources` in its CSV form: name → (reach, last offset in seconds).
    func sources() throws -> [String: (reach: Int, offset: Double)] {
        let text = try run("/usr/bin/chronyc", ["-h", folder.appendingPathComponent("chronyc.sock").path, "-n", "-c", "sources"])
        var sources: [String: (Int, Double)] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 10, let reach = Int(fields[5], radix: 8), let offset = Double(fields[8]) else { continue }
            sources[fields[2]] = (reach, offset)
        }
        return sources
    }

    /// Waits up to `seconds` for both refclocks to have been reached since chronyd started.
    func bothReached(within seconds: Double) throws -> [String: (reach: Int, offset: Double)] {
        let deadline = Date().addingTimeInterval(seconds)
        var latest: [String: (reach: Int, offset: Double)] = [:]
        while Date() < deadline {
            latest = try sources()
            if (latest["SOCK"]?.reach ?? 0) > 0, (latest["SHM0"]?.reach ?? 0) > 0 { break }
            usleep(500_000)
        }
        return latest
    }

    deinit { process.stop() }
}

@Suite("Time service, against the real chronyd and ntpshmmon", .serialized, .enabled(if: TestChronyd.isUsable, "needs root and chronyd (Debian chrony)"))
struct TimeServiceTests {
    @Test("chronyd reaches gpsfixd's SOCK and SHM refclocks with offsets well under 0.5 s, and again after a restart; ntpshmmon and a pps watcher see the samples")
    func chronyd() throws {
        let folder = try makeTemporaryFolder("chrony")
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o700)
        let chronyd = try TestChronyd(folder: folder)
        let link = folder.appendingPathComponent("gps0").path
        let replay = try RunningProcess(Binaries.gpsfix, [
            "replay", Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path, "--retime", "--loop", "--link", link,
        ])
        defer { replay.stop() }
        try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            link, "--socket", socket, "--chrony-socket-dir", folder.path, "--time-from-pty", "--log-level", "info",
            "--status-interval", "2",
        ])
        defer { daemon.stop() }

        let sources = try chronyd.bothReached(within: 20)
        let sock = try #require(sources["SOCK"], "chronyc sources: \(sources); gpsfixd: \(daemon.errorText)")
        let shm = try #require(sources["SHM0"])
        #expect(sock.reach > 0 && shm.reach > 0, "\(sources)")
        #expect(abs(sock.offset) < 0.1 && abs(shm.offset) < 0.1, "offsets: SOCK \(sock.offset) s, SHM0 \(shm.offset) s")

        // ntpd's reader of the same segment.
        let monitor = try run("/usr/bin/ntpshmmon", ["-n", "4", "-t", "10"], timeout: 15)
        let samples = monitor.split(separator: "\n").filter { $0.hasPrefix("sample NTP0") }
        #expect(samples.count >= 3, "ntpshmmon: \(monitor)")
        for sample in samples {
            let fields = sample.split(separator: " ", omittingEmptySubsequences: true)
            // sample NTP0 Seen@ Clock Real L Prc: the receiver's whole second, the clock within half of one.
            if fields.count >= 7, let clock = Double(fields[3]), let real = Double(fields[4]) {
                #expect(real == real.rounded() && abs(real - clock) < 0.5 && fields[6] == "-1", "\(sample)")
            }
        }

        // A watcher that asked for pps gets gpsd's TOFF.
        let client = try #require(LineClient.connect(unixPath: socket))
        client.send(#"?WATCH={"enable":true,"json":true,"pps":true};"# + "\n")
        let toff = client.readLines(until: { $0.contains(#""class":"TOFF""#) }, timeout: 5)?.last?.json
        #expect(toff?["device"] as? String == link && toff?["precision"] as? Int == -1 && toff?["shm"] as? String == "NTP0")
        if let real = toff?["real_sec"] as? Int, let clock = toff?["clock_sec"] as? Int { #expect(abs(real - clock) <= 1) }

        // chronyd restarted under the running daemon: both refclocks are reached again.
        try chronyd.restart()
        let again = try chronyd.bothReached(within: 20)
        #expect((again["SOCK"]?.reach ?? 0) > 0 && (again["SHM0"]?.reach ?? 0) > 0, "after the restart: \(again)")
        #expect(daemon.isRunning)
        #expect(daemon.errorText.contains("time service: receiver times"), "the counters are logged")
    }
}
