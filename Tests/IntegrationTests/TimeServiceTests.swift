import Foundation
import ReceiverFraming
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

@Suite("Time service, against the real chronyd and ntpshmmon", .serialized, .enabled(if: installedOrInCI(TestChronyd.isUsable), "needs root and chronyd (Debian chrony)"))
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
        // A daemon that ended is the failure to report, with its status and all it said: a
        // trap's message comes before its backtrace, which alone runs to thousands of characters.
        try #require(
            daemon.isRunning,
            "gpsfixd ended with status \(daemon.terminationStatus.map(String.init) ?? "?"): \(daemon.errorText)")
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

/// A u-blox receiver behind a pseudo-terminal that the test writes epochs into: NAV-PVT,
/// NAV-TIMELS and NAV-EOE, one epoch per call, from 2026-12-31 23:00:00 UTC on.
private final class LeapSecondReceiver {
    let path: String
    private var master: Int32 = -1
    private var follower: Int32 = -1
    private(set) var epochs = 0

    init() throws {
        try #require(openpty(&master, &follower, nil, nil, nil) == 0, "openpty: errno \(errno)")
        path = String(cString: ttyname(follower))
        var attributes = termios()
        tcgetattr(follower, &attributes)
        cfmakeraw(&attributes)
        tcsetattr(follower, TCSANOW, &attributes)
    }

    deinit {
        close(master)
        close(follower)
    }

    /// The UTC second since 1970 of the next epoch.
    var nextSecond: Int { 1_798_758_000 + epochs }  // 2026-12-31T23:00:00Z on

    /// Writes the next epoch; `announcing` makes its NAV-TIMELS announce the second
    /// inserted at the day's end, else it knows of no change.
    func writeEpoch(announcing: Bool) {
        let secondOfDay = 23 * 3600 + epochs
        let iTOW = UInt32((4 * 86_400 + secondOfDay + 18) * 1000)
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        var pvt = [UInt8](repeating: 0, count: 92)
        pvt.replaceSubrange(0..<4, with: le(iTOW))
        pvt.replaceSubrange(4..<6, with: le(UInt16(2026)))
        (pvt[6], pvt[7], pvt[8], pvt[9], pvt[10]) = (12, 31, 23, UInt8(epochs / 60), UInt8(epochs % 60))
        (pvt[11], pvt[20], pvt[21]) = (0x07, 3, 0x01)  // valid and resolved; 3D; gnssFixOK
        var timeLS = [UInt8](repeating: 0, count: 24)
        timeLS.replaceSubrange(0..<4, with: le(iTOW))
        (timeLS[8], timeLS[9]) = (2, 18)  // from GPS: 18
        timeLS[11] = announcing ? 1 : 0
        timeLS.replaceSubrange(12..<16, with: le(Int32(announcing ? 86_400 - secondOfDay : -1_000_000)))
        timeLS[23] = 0x03
        let bytes = UBXFrame.encode(messageClass: 0x01, id: 0x07, payload: pvt)
            + UBXFrame.encode(messageClass: 0x01, id: 0x26, payload: timeLS)
            + UBXFrame.encode(messageClass: 0x01, id: 0x61, payload: le(iTOW))
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        epochs += 1
    }
}

/// A datagram socket where chronyd would listen for a device's receiver time, read by
/// the test itself: chronyd takes a leap second only at the end of June or December.
extension SockSampleSocket {
    /// The samples waiting (up to the socket's timeout for the first): the receiver's
    /// second each is of (the clock plus the offset, rounded) and its leap field.
    func samples() -> [(second: Int, leap: Int32)] {
        var read: [(Int, Int32)] = []
        while let (size, sample) = receive(waiting: read.isEmpty), size == 40 {
            read.append((Int((Double(sample.seconds) + Double(sample.microseconds) / 1e6 + sample.offset).rounded()), sample.leap))
        }
        return read
    }
}

@Suite("Leap seconds, from a simulated receiver through gpsfixd to chrony's SOCK protocol")
struct LeapSecondServiceTests {
    @Test("a receiver announcing a leap second at the end of its UTC day: SOCK samples carry leap 1 (insert) from the announcement on, 0 before it")
    func announcedInsertion() throws {
        let folder = try makeTemporaryFolder("leap")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try LeapSecondReceiver()
        let base = receiver.path.split(separator: "/").last.map(String.init) ?? receiver.path
        let reader = try SockSampleSocket(path: folder.path + "/chrony.clk.\(base).sock", timeout: .milliseconds(200))
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            receiver.path, "--socket", folder.path + "/gpsfixd.sock", "--chrony-socket-dir", folder.path, "--time-from-pty",
            "--no-shm", "--log-level", "info",
        ])
        defer { daemon.stop() }

        // An epoch every 50 ms (the daemon samples receiver seconds, not wall-clock ones):
        // unannounced until the daemon has sent two samples, then announced, until three
        // samples of announced epochs have come; 400 epochs at most.
        var samples: [(second: Int, leap: Int32)] = []
        var announcedFrom: Int?
        while receiver.epochs < 400 {
            if announcedFrom == nil, samples.count >= 2 { announcedFrom = receiver.nextSecond }
            receiver.writeEpoch(announcing: announcedFrom != nil)
            samples += reader.samples()
            if let first = announcedFrom, samples.filter({ $0.second >= first }).count >= 3 { break }
            usleep(50_000)
        }
        let first = try #require(announcedFrom, "no samples: \(daemon.errorText)")
        let before = samples.filter { $0.second < first }, after = samples.filter { $0.second >= first }
        #expect(before.count >= 2 && after.count >= 3, "\(samples); gpsfixd: \(daemon.errorText)")
        #expect(before.allSatisfy { $0.leap == 0 }, "\(samples)")
        #expect(after.allSatisfy { $0.leap == 1 }, "\(samples)")
        #expect(daemon.isRunning)
    }
}
