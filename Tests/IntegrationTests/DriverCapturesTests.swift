import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// gpsd's 13 regression captures of Trimble TSIP, SiRF, CASIC and Skytraq receivers, each
/// replayed in a loop into a pseudo-terminal of its own by `gpsfix replay`, all read by one
/// `gpsfixd`: gpsd's own clients see every device named by its driver, with its fixes and
/// its skies. Without `../shared/fixtures/gpsd-binary` the test is skipped.
///
/// cgps cannot watch the 13 at once: libgps (Debian's 3.22) keeps at most 4 devices
/// (`MAXUSERDEVS`), and a DEVICES list of 13 leaves it on "NO FIX" for good; gpsd itself
/// serves no more than 4 by default. So cgps watches one capture of each protocol, alone.
@Suite("Binary receiver drivers, served to gpsd's clients")
struct DriverCapturesTests {
    static let folder = ConformanceTests.shared.appendingPathComponent("fixtures/gpsd-binary")

    static var enabled: Bool { FileManager.default.fileExists(atPath: folder.path) }

    /// DEVICE's `driver` for a capture, by the receiver its name says (the README's table).
    static func driver(of capture: String) -> String? {
        if capture.hasPrefix("trimble-") { return "Trimble TSIP" }
        if capture.hasPrefix("bu303-") || ["sirf2.log", "ublox-sirf1.log"].contains(capture) { return "SiRF" }
        return ["quectel-l76k-binary.log": "CASIC", "skytraq-bin.log": "Skytraq"][capture]
    }

    /// What a capture owes a watcher, as gpsd's own output for it (`NAME.log.chk`) shows:
    /// a TPV with a 2D or 3D fix where gpsd reports one (bu303-nofix holds none), a SKY
    /// where gpsd reports one (gpsd reports none for trimble-smt-360).
    struct Expectation {
        var capture: String
        var link: String
        var driver: String
        var fix: Bool
        var sky: Bool
    }

    @Test("gpsfixd on 13 replayed pseudo-terminals: gpspipe -w sees each DEVICE's driver in binary mode (native 1), its fixed TPVs and SKYs",
          .enabled(if: enabled, "gpsd's binary captures are not in ../shared"))
    func capturesServedToGPSDClients() throws {
        let work = try makeTemporaryFolder("drivers")
        defer { try? FileManager.default.removeItem(at: work) }
        let captures = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".log") }.sorted()
        try #require(captures.count == 13, "\(captures)")
        let expectations = try captures.enumerated().map { index, capture in
            let check = try String(contentsOf: Self.folder.appendingPathComponent(capture + ".chk"), encoding: .utf8)
            let reports = check.split(whereSeparator: \.isNewline).compactMap { String($0).json }
            return Expectation(
                capture: capture, link: work.appendingPathComponent("gps\(index)").path,
                driver: try #require(Self.driver(of: capture), "no driver known for \(capture)"),
                fix: reports.contains { $0["class"] as? String == "TPV" && ($0["mode"] as? Int ?? 0) >= 2 },
                sky: reports.contains { $0["class"] as? String == "SKY" })
        }

        // Each capture in a loop, a whole pass every 4 seconds: short ones (bu303-*: 7 to
        // 11 epochs) come again for a watcher that connects after their first pass.
        var replays: [RunningProcess] = []
        defer { replays.forEach { $0.stop() } }
        for expectation in expectations {
            replays.append(try RunningProcess(Binaries.gpsfix, [
                "replay", Self.folder.appendingPathComponent(expectation.capture).path, "--link", expectation.link,
                "--loop", "--speed", "0.25",
            ]))
        }
        try waitUntil("the replays' links") { expectations.allSatisfy { FileManager.default.fileExists(atPath: $0.link) } }
        let port = freePort()
        let daemon = try RunningProcess(
            Binaries.gpsfixd, expectations.map(\.link) + [
                "--socket", work.appendingPathComponent("gpsfixd.sock").path, "--tcp", "127.0.0.1:\(port)", "--log-level", "warning",
            ])
        defer { daemon.stop() }
        try #require(LineClient.connect(tcpPort: port) != nil, "gpsfixd does not listen: \(daemon.errorText.suffix(2000))")

        // One gpspipe -w, read until every device has shown all it owes, or 90 seconds.
        let pipe = try RunningProcess("/usr/bin/gpspipe", ["-w", "127.0.0.1:\(port)"])
        defer { pipe.stop() }
        var drivers: [String: String] = [:]
        // gpsd's `native`: 1 while a driver reads the receiver in its binary protocol.
        var native: [String: Int] = [:]
        var fixed: Set<String> = []
        var skies: Set<String> = []
        var tpvs: Set<String> = []
        func satisfied() -> Bool {
            expectations.allSatisfy {
                drivers[$0.link] == $0.driver && tpvs.contains($0.link) && (!$0.fix || fixed.contains($0.link))
                    && (!$0.sky || skies.contains($0.link))
            }
        }
        var read = 0
        let deadline = Date().addingTimeInterval(90)
        repeat {
            usleep(500_000)
            // Whole lines not read yet (the last may be cut short: it waits for the next round).
            // gpsd's lines end in "\r\n", one Character in Swift: split on isNewline.
            let lines = pipe.outputText.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).dropLast()
            defer { read = max(read, lines.count) }
            for report in lines.dropFirst(read).compactMap({ String($0).json }) {
                let devices = (report["devices"] as? [[String: Any]]) ?? [report]
                for device in devices where device["class"] as? String == "DEVICE" {
                    if let path = device["path"] as? String, let driver = device["driver"] as? String {
                        drivers[path] = driver
                        native[path] = device["native"] as? Int
                    }
                }
                guard let path = report["device"] as? String else { continue }
                switch report["class"] as? String {
                case "TPV":
                    tpvs.insert(path)
                    if (report["mode"] as? Int ?? 0) >= 2 { fixed.insert(path) }
                case "SKY": skies.insert(path)
                default: break
                }
            }
        } while !satisfied() && Date() < deadline && daemon.isRunning && pipe.isRunning

        for expectation in expectations {
            let link = expectation.link
            print("\(expectation.capture): driver \(drivers[link] ?? "none"), TPV \(tpvs.contains(link)), fix \(fixed.contains(link)), SKY \(skies.contains(link))")
        }
        #expect(daemon.isRunning, "gpsfixd ended: \(daemon.errorText.suffix(2000))")
        #expect(pipe.isRunning, "gpspipe ended: \(pipe.errorText.suffix(500)); gpsfixd said \(daemon.errorText.suffix(2000))")
        for expectation in expectations {
            let link = expectation.link
            #expect(drivers[link] == expectation.driver, "\(expectation.capture): DEVICE driver \(drivers[link] ?? "none") in \(pipe.outputText.prefix(300))")
            #expect(native[link] == 1, "\(expectation.capture): DEVICE native \(native[link].map(String.init) ?? "none"), not binary")
            #expect(tpvs.contains(link), "\(expectation.capture): no TPV")
            if expectation.fix { #expect(fixed.contains(link), "\(expectation.capture): no TPV with a 2D or 3D fix") }
            if expectation.sky { #expect(skies.contains(link), "\(expectation.capture): no SKY") }
        }
    }

    @Test("cgps, in a terminal under tmux, shows the fix and the sky of one receiver of each protocol",
          .enabled(if: enabled, "gpsd's binary captures are not in ../shared"),
          arguments: ["trimble-lassen_iq-3dfix.log", "sirf2.log", "quectel-l76k-binary.log", "skytraq-bin.log"])
    func cgps(_ capture: String) throws {
        let daemon = try DaemonUnderTest(fixture: Self.folder.appendingPathComponent(capture).path, speed: 2)
        // The sky: satellites seen, or the DOPs (Skytraq's second SKY of an epoch, as gpsd's,
        // has DOPs and no satellites, so cgps shows none seen most of the time).
        func showsSky(_ screen: String) -> Bool {
            screen.firstRange(of: #/Seen +[1-9]/#) != nil || screen.firstRange(of: #/HDOP, CEP\): +[0-9]/#) != nil
        }
        let screen = try terminalScreen(of: "cgps 127.0.0.1:\(daemon.tcpPort)", in: daemon.folder, timeout: 30) {
            $0.contains("D FIX") && showsSky($0)
        }
        #expect(screen.contains("3D FIX") || screen.contains("2D FIX"), "\(capture): \(screen)")
        #expect(showsSky(screen), "\(capture): \(screen)")
    }
}
