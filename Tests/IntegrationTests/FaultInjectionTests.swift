import Foundation
import GPSFix
import GPSFixDevices
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Bad input, failing devices and hostile clients against the real daemon.
@Suite("Fault injection", .serialized)
struct FaultInjectionTests {
    /// The sentences of a fixture, each with its CR LF.
    static func sentences(of fixture: String) throws -> [[UInt8]] {
        try String(contentsOf: Binaries.fixtures.appendingPathComponent(fixture), encoding: .utf8)
            .split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$") }.map { Array(($0 + "\r\n").utf8) }
    }

    @Test("a stream with 10% damaged sentences: the daemon's counters account for every refused line")
    func corruptedStreamCounters() throws {
        let folder = try makeTemporaryFolder("corrupt")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = Array(try Data(contentsOf: Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log")))
        let corrupted = CorruptedLog(log: log, fraction: 0.1, seed: 2947)
        let path = folder.appendingPathComponent("corrupted.log").path
        try Data(corrupted.bytes).write(to: URL(fileURLWithPath: path))

        // What the framer makes of the intact lines alone, and of the damaged log.
        let intact = ReceiverStreamDecoder(for: CaptureLog(corrupted.intact))
        CaptureLog(corrupted.intact).payload.withUnsafeBytes { intact.feed($0) { _ in } }
        intact.finish { _ in }

        let daemon = try RunningProcess(Binaries.gpsfixd, [
            "file:\(path)", "--socket", folder.appendingPathComponent("s").path, "--log-level", "info",
        ])
        // The file is read at once; its counters are logged at shutdown.
        let deadline = Date().addingTimeInterval(10)
        while !daemon.errorText.contains("device activated"), Date() < deadline { usleep(50_000) }
        usleep(500_000)
        daemon.stop(SIGTERM)
        let output = daemon.errorText
        let line = try #require(output.split(separator: "\n").last { $0.contains("device counters:") }, "\(output.suffix(800))")
        let sentences = intact.framer.nmea.statistics.sentences
        let rejected = intact.framer.nmea.statistics.rejected + corrupted.expectedRefusals
        #expect(line.contains("sentences \(sentences), rejected \(rejected) ("), "\(line) \(corrupted.injuries)")
        #expect(line.contains("cycles \(intact.assembler.statistics.cycles)"), "\(line)")
        #expect(daemon.terminationStatus == 0)
    }
}

extension FaultInjectionTests {
    /// CPU seconds (user + system) a process has used.
    static func cpuSeconds(of pid: pid_t) -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func descriptorCount(of pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// The descriptor count of `pid` once it has held still for half a second (within 5 s).
    /// A device is reported online from the sentences autobaud heard, before its opening
    /// thread hands it to the event loop, whose reading holds a duplicate of it: counted at
    /// once, a busy machine's count can miss that duplicate.
    static func settledDescriptorCount(of pid: pid_t) -> Int {
        var count = descriptorCount(of: pid)
        var stillSince = Date()
        let deadline = Date().addingTimeInterval(5)
        while Date().timeIntervalSince(stillSince) < 0.5, Date() < deadline {
            usleep(50_000)
            let now = descriptorCount(of: pid)
            if now != count { (count, stillSince) = (now, Date()) }
        }
        return count
    }

    /// What each of a process's descriptors is open on (`socket:[…]`, `/dev/pts/3`, …), sorted.
    static func descriptorTargets(of pid: pid_t) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }.sorted()
    }

    @Test("100 unplug and replug cycles under the daemon: each told to watchers and recovered, no descriptor growth, idle while absent")
    func unplugCycles() async throws {
        let folder = try makeTemporaryFolder("plug")
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("gps0").path
        let socket = folder.appendingPathComponent("s").path
        let cycle = try Self.sentences(of: "glonass-fix.nmea").prefix(9).flatMap { $0 }
        let receiver = try PluggableTerminal(link: link)
        // A long silence timeout: only unplugging takes the device offline here.
        let daemon = try RunningProcess(Binaries.gpsfixd, [link, "--socket", socket, "--log-level", "error", "--silence-timeout", "600"])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        try await receiver.terminal!.write(cycle)
        #expect(watcher.readLines(until: { $0.contains(#""class":"DEVICE""#) && $0.contains(#""online":true"#) }) != nil)
        // Counted after the first cycle: what the daemon opens once for its life on its first
        // loss (the retry's timer, say) is not growth; a leak would grow with every cycle.
        var descriptorsBefore = 0
        var targetsBefore: [String] = []

        var recovered = 0, lost = 0
        for round in 0..<100 {
            receiver.unplug()  // the master closes, the daemon's read hangs up
            guard watcher.readLines(until: { $0.contains(#""class":"DEVICE""#) && $0.contains(#""online":false"#) }) != nil else { break }
            lost += 1
            if round == 50 {
                // Absent for a while: the daemon retries with backoff, it does not spin.
                let cpu = Self.cpuSeconds(of: daemon.pid)
                sleep(3)
                #expect(Self.cpuSeconds(of: daemon.pid) - cpu < 0.15, "CPU while the device is absent")
            }
            try receiver.plugIn()
            try await receiver.terminal!.write(cycle)
            guard watcher.readLines(until: { $0.contains(#""class":"DEVICE""#) && $0.contains(#""online":true"#) }) != nil else { break }
            recovered += 1
            if round == 0 {
                descriptorsBefore = Self.settledDescriptorCount(of: daemon.pid)
                targetsBefore = Self.descriptorTargets(of: daemon.pid)
            }
        }
        #expect(lost == 100 && recovered == 100, "lost \(lost), recovered \(recovered)")
        // A device lost last may still be closing on its thread: a leak would stay, a
        // closing descriptor goes within moments.
        let settled = Date().addingTimeInterval(3)
        while Self.descriptorCount(of: daemon.pid) > descriptorsBefore, Date() < settled { usleep(50_000) }
        #expect(
            Self.descriptorCount(of: daemon.pid) <= descriptorsBefore,
            "descriptors before: \(targetsBefore); after: \(Self.descriptorTargets(of: daemon.pid))")
        #expect(daemon.isRunning)
    }
}

extension FaultInjectionTests {
    @Test("1000 clients churning and a SIGPIPE: a steady watcher misses no cycle, memory stays bounded, the daemon lives")
    func clientChurn() throws {
        let daemon = try DaemonUnderTest(speed: 10)
        let watcher = try daemon.client()
        watcher.send(DaemonTests.watch)
        var times: [String] = []
        func collect(for seconds: Double) {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, let line = watcher.readLine(timeout: max(0.001, deadline.timeIntervalSinceNow)) {
                if let object = line.json, object["class"] as? String == "TPV", let time = object["time"] as? String { times.append(time) }
            }
        }
        collect(for: 1.5)
        let rssBefore = daemon.residentKilobytes

        var churned = 0
        while churned < 1000 {
            var batch: [LineClient] = []
            for index in 0..<50 {
                let client = try daemon.client()
                switch index % 5 {
                case 0: client.send(DaemonTests.watch)
                case 1: client.send(#"?WATCH={"enable":true,"nmea":true}"# + "\n")
                case 2: client.send("?WAT")  // half a command, then gone
                case 3: client.send(bytes: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
                default: client.send("?POLL;?DEVICES;\n")
                }
                batch.append(client)
            }
            collect(for: 0.05)
            batch.removeAll()  // all hang up at once, some mid-write from the daemon
            churned += 50
        }
        kill(daemon.daemon.pid, SIGPIPE)
        collect(for: 2)

        #expect(daemon.daemon.isRunning)
        #expect(daemon.residentKilobytes < rssBefore + 20_000 || Binaries.isSanitized, "RSS \(rssBefore) kB before")
        // Every cycle of the replayed log, in order, with none missing (the log loops).
        let decoded = try run(Binaries.gpsfix, ["decode", Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path])
        let cycles = decoded.split(whereSeparator: \.isNewline).compactMap { String($0).json }
            .filter { $0["class"] as? String == "TPV" }.compactMap { $0["time"] as? String }
        let position = Dictionary(cycles.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let positions = times.compactMap { position[$0] }
        #expect(positions.count == times.count && times.count > 20, "\(times.count) TPVs")
        let gaps = zip(positions, positions.dropFirst()).filter { ($0 + 1) % cycles.count != $1 }
        #expect(gaps.isEmpty, "missed cycles between \(gaps.prefix(5))")
    }
}

extension FaultInjectionTests {
    @Test("the first TPV goes out as the second cycle begins, and the daemon never writes to the receiver")
    func firstFixAndSilenceTowardsTheReceiver() async throws {
        let folder = try makeTemporaryFolder("first")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("s").path
        let terminal = try PseudoTerminal()
        let daemon = try RunningProcess(Binaries.gpsfixd, [terminal.path, "--socket", socket, "--log-level", "error"])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(DaemonTests.watch)
        #expect(watcher.readLines(until: { $0.contains(#""class":"WATCH""#) }) != nil)

        // glonass-fix.nmea starts with the end of the 08:14:11 cycle (GSA, GSA, RMC, ZDA);
        // the GGA of 08:14:12 comes next.
        let sentences = try Self.sentences(of: "glonass-fix.nmea")
        try await terminal.write(sentences[0..<4].flatMap { $0 })
        let early = watcher.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 1.5)
        #expect(early == nil || early?.last?.contains(#""mode":3"#) == false, "a fix before its cycle could be known complete")
        let written = Date()
        try await terminal.write(sentences[4])
        let lines = try #require(watcher.readLines(until: { $0.contains(#""class":"TPV""#) && $0.contains(#""mode":3"#) }, timeout: 5))
        // Not a speed: sent by the next cycle's first sentence, not by the silence timeout (3 s) after it.
        #expect(Date().timeIntervalSince(written) < 2.5, "the first fix took \(Date().timeIntervalSince(written)) s")
        #expect(lines.last?.contains(#""time":"2014-05-26T08:14:11.000Z""#) == true, "\(lines)")

        // Nothing came back up the line: the daemon reads, it does not probe.
        var poller = pollfd(fd: terminal.master, events: Int16(POLLIN), revents: 0)
        #expect(poll(&poller, 1, 200) == 0, "the daemon wrote to the receiver")
    }
}

extension FaultInjectionTests {
    @Test("the gpsd that gpsfixd reads is killed and restarted: gpsfixd tells its watchers, reconnects and resumes")
    func upstreamRestart() throws {
        let upstream = try UpstreamTests.UpstreamGPSD()
        let socket = upstream.folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            "gpsd://127.0.0.1:\(upstream.port)", "--socket", socket, "--log-level", "error", "--silence-timeout", "600",
        ])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(DaemonTests.watch)
        #expect(watcher.readLines(until: { $0.contains(#""class":"TPV""#) && $0.contains(#""mode":3"#) }, timeout: 20) != nil)

        try upstream.restartGPSD()
        #expect(watcher.readLines(until: { $0.contains(#""class":"DEVICE""#) && $0.contains(#""online":false"#) }, timeout: 10) != nil)
        #expect(watcher.readLines(until: { $0.contains(#""class":"DEVICE""#) && $0.contains(#""online":true"#) }, timeout: 20) != nil)
        #expect(watcher.readLines(until: { $0.contains(#""class":"TPV""#) && $0.contains(#""mode":3"#) }, timeout: 20) != nil)
        #expect(daemon.isRunning)
    }
}
