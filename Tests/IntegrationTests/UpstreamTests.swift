import Foundation
import GPSFix
import GPSFixDevices
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Upstream gpsd and recording", .serialized)
struct UpstreamTests {
    static let log = Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path

    /// The fixes of the capture read directly, by time.
    static func fixesFromFile() async -> [GPSTime: Fix] {
        var fixes: [GPSTime: Fix] = [:]
        for await update in NMEALocationProvider(source: FileSource(path: log)).updateStream() {
            if case .fix(let fix) = update, let time = fix.time { fixes[time] = fix }
        }
        return fixes
    }

    /// A replayed fixture read by a real gpsd in the foreground, on a free port.
    final class UpstreamGPSD {
        let folder: URL
        let link: String
        let port = freePort()
        let replay: RunningProcess
        private(set) var gpsd: RunningProcess

        init() throws {
            folder = try makeTemporaryFolder("gpsd")
            let link = folder.appendingPathComponent("gps0").path
            self.link = link
            replay = try RunningProcess(Binaries.gpsfix, ["replay", UpstreamTests.log, "--link", link, "--speed", "4", "--loop"])
            try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
            gpsd = try Self.startGPSD(port: port, folder: folder, device: link)
        }

        /// gpsd with its own control socket too: the default, /run/gpsd.sock, is one per machine.
        static func startGPSD(port: Int, folder: URL, device: String) throws -> RunningProcess {
            try RunningProcess("/usr/sbin/gpsd", ["-N", "-n", "-S", "\(port)", "-F", folder.appendingPathComponent("gpsd.sock").path, device])
        }

        /// Kills gpsd (SIGKILL: no goodbye to its clients) and starts a new one on the same port.
        func restartGPSD() throws {
            gpsd.stop(SIGKILL)
            gpsd = try Self.startGPSD(port: port, folder: folder, device: link)
        }

        deinit {
            gpsd.stop()
            replay.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// The capture replayed at ten times its pace into a pseudo-terminal behind a link, in a
    /// folder of its own with room for a recording; stopped and removed with it.
    final class ReplayToRecord {
        let folder: URL
        let link: String
        let output: String
        private let replay: RunningProcess

        init() throws {
            folder = try makeTemporaryFolder("rec")
            link = folder.appendingPathComponent("gps0").path
            output = folder.appendingPathComponent("recorded.nmea").path
            replay = try RunningProcess(Binaries.gpsfix, ["replay", UpstreamTests.log, "--link", link, "--speed", "10", "--loop"])
            let link = self.link
            try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
        }

        deinit {
            replay.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Collects updates until `enough` says so or `seconds` pass.
    static func collect(
        from provider: NMEALocationProvider, seconds: Double, until enough: @escaping @Sendable ([LocationUpdate]) -> Bool
    ) async -> [LocationUpdate] {
        let collecting = Task {
            var updates: [LocationUpdate] = []
            for await update in provider.updateStream() {
                updates.append(update)
                if enough(updates) { break }
            }
            return updates
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(seconds))
            collecting.cancel()
        }
        defer { timeout.cancel() }
        return await collecting.value
    }

    static func timedFixes(_ updates: [LocationUpdate]) -> [Fix] {
        updates.compactMap { if case .fix(let fix) = $0, fix.mode == .threeDimensional, fix.time != nil { fix } else { nil } }
    }

    @Test("GPSDSource reads a real gpsd's raw NMEA and yields the same fixes as the pty read directly, on a connection with keepalive")
    func realGPSD() async throws {
        let upstream = try UpstreamGPSD()
        let provider = NMEALocationProvider(source: GPSDSource(host: "127.0.0.1", port: upstream.port), maximumBackoff: .milliseconds(200))
        // Read while the connection is up: keepalive's timer (2) finds a gpsd host gone
        // without a word (powered off, a NAT entry lost), where no write fails.
        let timers = Locked<[Int]>([]), port = upstream.port
        let received = Self.timedFixes(
            await Self.collect(from: provider, seconds: 40) { updates in
                guard Self.timedFixes(updates).count >= 5 else { return false }
                timers.withLock { $0 = TCPTable.timersOfEstablished(remotePort: port) }
                return true
            })
        let reference = await Self.fixesFromFile()
        #expect(received.count >= 5)
        #expect(timers.withLock { $0 } == [2], "the timers of the connection to gpsd")
        for fix in received {
            let expected = try #require(reference[fix.time!])
            #expect(fix.latitude == expected.latitude && fix.longitude == expected.longitude && fix.altitudeMSL == expected.altitudeMSL)
        }
    }

    @Test("gpsd killed and restarted: GPSDSource reports the loss, reconnects and resumes")
    func gpsdRestart() async throws {
        let upstream = try UpstreamGPSD()
        let provider = NMEALocationProvider(source: GPSDSource(host: "127.0.0.1", port: upstream.port), maximumBackoff: .milliseconds(200))
        let reading = Locked(false), restarted = Locked(false)
        let restart = Task.detached {
            // Restart once fixes are flowing, while the provider is reading.
            let deadline = ContinuousClock.now + .seconds(30)
            while !reading.withLock({ $0 }) {
                guard ContinuousClock.now < deadline else { throw TimedOut(description: "no fixes from the upstream gpsd in 30 s") }
                try await Task.sleep(for: .milliseconds(50))
            }
            try upstream.restartGPSD()
            restarted.withLock { $0 = true }
        }
        let updates = await Self.collect(from: provider, seconds: 40) { updates in
            if Self.timedFixes(updates).count >= 2 { reading.withLock { $0 = true } }
            guard restarted.withLock({ $0 }), let lost = updates.lastIndex(where: Self.isLoss) else { return false }
            return Self.timedFixes(Array(updates[lost...])).count >= 3
        }
        restart.cancel()
        let events = updates.compactMap { if case .device(let event) = $0 { event.kind } else { nil } }
        let lost = try #require(updates.lastIndex(where: Self.isLoss), "\(events)")
        #expect(Self.timedFixes(Array(updates[..<lost])).count >= 2, "fixes before the restart")
        #expect(Self.timedFixes(Array(updates[lost...])).count >= 3, "fixes after the restart")
        #expect(events.last { $0 != .activated } == .recovered, "\(events)")
    }

    @Test("gpsd://HOST:PORT without a device, on a gpsd with two: refused, naming both, instead of one track of two receivers")
    func twoUpstreamDevicesAreRefused() async throws {
        let folder = try makeTemporaryFolder("gpsd2")
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try PseudoTerminal(), second = try PseudoTerminal()
        let port = freePort()
        let gpsd = try RunningProcess(
            "/usr/sbin/gpsd", ["-N", "-n", "-S", "\(port)", "-F", folder.appendingPathComponent("gpsd.sock").path, first.path, second.path])
        defer { gpsd.stop() }
        try waitUntil("gpsd listening") { (try? LineClient(tcpPort: port)) != nil }
        // gpsd lists a device once it has read from it.
        let sending = Task {
            for index in 0..<600 {
                try await first.write(SyntheticReceiver.cycle(index))
                try await second.write(SyntheticReceiver.cycle(index))
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { sending.cancel() }
        try await Task.sleep(for: .seconds(2))
        let (text, updates) = await Self.lossReason(fromGPSDAt: port, within: 20)
        #expect(text.contains("2 devices") && text.contains(first.path) && text.contains(second.path), "\(text)")
        #expect(!updates.contains { if case .fix = $0 { true } else { false } })
    }

    @Test("gpsd://HOST:PORT where no gpsd listens: the loss says libgps could not connect, in libgps's words, not an unknown error")
    func noGPSDListening() async throws {
        let port = freePort()
        let (text, _) = await Self.lossReason(fromGPSDAt: port, within: 10)
        #expect(text.contains("gpsd://127.0.0.1:\(port) cannot be reached") && text.contains("connect"), "\(text)")
        #expect(!text.contains("Unknown error"), "\(text)")
    }

    /// Reads gpsd://127.0.0.1:`port` until the device is lost, or for `seconds`: the first
    /// loss's reason ("no loss reported" without one), and every update.
    static func lossReason(fromGPSDAt port: Int, within seconds: Double) async -> (String, [LocationUpdate]) {
        let provider = NMEALocationProvider(source: GPSDSource(host: "127.0.0.1", port: port), maximumBackoff: .milliseconds(200))
        let updates = await collect(from: provider, seconds: seconds) { $0.contains(where: isLoss) }
        let reason = updates.lazy.compactMap { update -> String? in
            if case .device(let event) = update, case .lost(let reason) = event.kind { reason } else { nil }
        }.first
        return (reason ?? "no loss reported", updates)
    }

    static func isLoss(_ update: LocationUpdate) -> Bool {
        if case .device(let event) = update, case .lost = event.kind { true } else { false }
    }

    @Test("gpsfix record writes a header and the bytes, which decode back to fixes")
    func record() throws {
        let replay = try ReplayToRecord()
        defer { withExtendedLifetime(replay) {} }
        let (link, output) = (replay.link, replay.output)
        _ = try run(Binaries.gpsfix, ["record", link, "--output", output, "--duration", "3", "--speed", "38400"], timeout: 15)
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(text.hasPrefix("# Name: recorded by gpsfix record\n# Device: \(link)\n# Speed: 38400\n# Date: "))
        let decoded = try run(Binaries.gpsfix, ["decode", output], timeout: 15)
        #expect(decoded.split(whereSeparator: \.isNewline).filter { $0.contains(#""class":"TPV""#) }.count >= 5)
    }

    @Test("gpsfix record interrupted ends as its duration would: status 0, the log whole and flushed")
    func recordInterrupted() throws {
        let replay = try ReplayToRecord()
        defer { withExtendedLifetime(replay) {} }
        let (link, output) = (replay.link, replay.output)
        let record = try RunningProcess(Binaries.gpsfix, ["record", link, "--output", output, "--speed", "38400"])
        defer { record.stop() }
        try waitUntil("a recorded TPV's worth", within: 20) {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("$GPRMC")
        }
        record.stop(SIGINT)
        #expect(record.terminationStatus == 0, "\(record.errorText)")
        let decoded = try run(Binaries.gpsfix, ["decode", output], timeout: 15)
        #expect(decoded.contains(#""class":"TPV""#))
    }

    @Test("gpsfix doctor against gpsd itself, whose reports keep coming and who answers ?STATUS; with ERROR, ends after its window")
    func doctorAgainstGPSD() throws {
        let upstream = try UpstreamGPSD()
        // gpsd reads the replay and sends its reports before the doctor comes.
        var watcher: LineClient?
        try waitUntil("gpsd's port") {
            watcher = try? LineClient(tcpPort: upstream.port)
            return watcher != nil
        }
        watcher?.send(#"?WATCH={"enable":true,"json":true};"# + "\n")
        try #require(watcher?.readLines(until: { $0.contains(#""class":"TPV""#) }) != nil, "no TPV from gpsd")
        let doctor = try RunningProcess(Binaries.gpsfix, [
            "doctor", "--tcp", "127.0.0.1:\(upstream.port)", "--seconds", "1", "--config", "/nonexistent", "--json",
        ])
        defer { doctor.stop() }
        #expect(doctor.wait(timeout: 30) != nil, "gpsfix doctor still running")
        // It heard gpsd: its VERSION, and its device (judged without GPSFix's STATUS).
        let findings = (try? JSONSerialization.jsonObject(with: Data(doctor.outputText.utf8)) as? [[String: Any]]) ?? []
        let daemon = findings.first { $0["check"] as? String == "daemon" }
        #expect(daemon?["status"] as? String == "ok" && (daemon?["detail"] as? String)?.hasPrefix("3.") == true, "\(findings)")
        #expect(findings.contains { $0["check"] as? String == "receiver \(upstream.link)" }, "\(findings)")
    }

    @Test("gpsfix record whose writes fail stops at the first, saying why, without waiting out --duration")
    func recordToAFullDisk() throws {
        let replay = try ReplayToRecord()
        defer { withExtendedLifetime(replay) {} }
        let link = replay.link
        let record = try RunningProcess(Binaries.gpsfix, ["record", link, "--output", "/dev/full", "--duration", "600"])
        defer { record.stop() }
        // Ten minutes asked for: the recording ends at its first failed write instead.
        let status = record.wait(timeout: 60)
        #expect(status != nil && status != 0, "gpsfix record still recording, or succeeded")
        #expect(record.errorText.contains("cannot write"), "\(record.errorText)")
    }
}
