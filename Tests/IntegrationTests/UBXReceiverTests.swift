import Foundation
import Testing

/// A u-blox receiver speaking UBX, replayed through a pseudo-terminal at its own pace,
/// served to gpsd's real clients: the receiver's own error estimates and its versions
/// reach them as from gpsd, and NMEA 0183 is written for those that want sentences.
@Suite("A u-blox receiver in UBX, to gpsd's clients")
struct UBXReceiverTests {
    /// A LEA-M8F timing receiver: NAV-PVT and NAV-SAT each second, MON-VER answered once.
    static let capture = "gpsd-ubx/ublox-lea-m8f.log"

    @Test("gpspipe -w sees TPVs with the receiver's eph and epv, and DEVICE names the u-blox driver and its versions")
    func gpspipe() throws {
        let daemon = try DaemonUnderTest(fixture: Self.capture, speed: 4)
        var reports: [[String: Any]] = []
        // MON-VER comes part-way through the capture: a later connection's DEVICES has it.
        for _ in 0..<3 {
            let output = try run("/usr/bin/gpspipe", ["-w", "-n", "12", "127.0.0.1:\(daemon.tcpPort)"], timeout: 30)
            reports = output.split(whereSeparator: \.isNewline).compactMap { String($0).json }
            let identified = reports.contains { report in
                let devices = (report["devices"] as? [[String: Any]]) ?? [report]
                return devices.contains { ($0["subtype"] as? String)?.hasPrefix("SW ") == true }
            }
            if identified { break }
        }
        let devices = reports.flatMap { ($0["devices"] as? [[String: Any]]) ?? ($0["class"] as? String == "DEVICE" ? [$0] : []) }
        let device = try #require(devices.last { $0["subtype"] != nil })
        #expect(device["driver"] as? String == "u-blox")
        #expect((device["subtype1"] as? String)?.contains("PROTVER") == true, "\(device)")
        let tpv = try #require(reports.last { $0["class"] as? String == "TPV" && $0["mode"] as? Int == 3 })
        #expect((tpv["eph"] as? Double).map { $0 > 0 && $0 < 100 } == true, "\(tpv)")
        #expect((tpv["epv"] as? Double).map { $0 > 0 && $0 < 100 } == true, "\(tpv)")
        #expect(tpv["leapseconds"] as? Int == 18)
        // As gpsd reports it, from the capture's NAV-PVT: a surveyed-in timing fix near Adelaide.
        #expect(tpv["status"] as? Int == 7)
        #expect(abs((tpv["lat"] as? Double ?? 0) - -34.9082196) < 1e-6)
    }

    @Test("the Python gps module reads the fix and the receiver's error estimates")
    func pythonClient() throws {
        let daemon = try DaemonUnderTest(fixture: Self.capture, speed: 4)
        let script = """
            import gps
            session = gps.gps(host="127.0.0.1", port=\(daemon.tcpPort))
            session.stream(gps.WATCH_ENABLE | gps.WATCH_JSON)
            for report in session:
                if report["class"] == "TPV" and report.get("mode", 0) == 3 and "eph" in report:
                    print("%.7f %.7f %.3f %.3f" % (report.lat, report.lon, report.eph, report.epv))
                    break
            """
        let output = try run("/usr/bin/python3", ["-c", script], timeout: 30)
        let numbers = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        try #require(numbers.count == 4, "\(output)")
        #expect(abs(numbers[0] - -34.9082196) < 1e-6 && abs(numbers[1] - 138.5961479) < 1e-6)
        #expect(numbers[2] > 0 && numbers[3] > 0)
    }

    @Test("cgps, run in a terminal under tmux, shows the 3D fix")
    func cgps() throws {
        let daemon = try DaemonUnderTest(fixture: Self.capture, speed: 4)
        let screen = try terminalScreen(of: "cgps 127.0.0.1:\(daemon.tcpPort)", in: daemon.folder) { $0.contains("3D") }
        #expect(screen.contains("3D"), "\(screen)")
        #expect(screen.contains("34.90"), "\(screen)")
    }

    @Test("a watcher of sentences (gpspipe -r) gets GGA, RMC, GSA and GSV written from the UBX fixes")
    func sentencesForNMEAWatchers() throws {
        let daemon = try DaemonUnderTest(fixture: Self.capture, speed: 4)
        let output = try run("/usr/bin/gpspipe", ["-r", "-n", "40", "127.0.0.1:\(daemon.tcpPort)"], timeout: 30)
        let sentences = output.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$") }
        for kind in ["GGA", "RMC", "ZDA", "GSA", "GSV"] {
            #expect(sentences.contains { $0.dropFirst(3).hasPrefix(kind) }, "no \(kind) in \(output.prefix(400))")
        }
        // Every one checksummed as NMEA 0183 requires.
        for sentence in sentences {
            let body = sentence.dropFirst().prefix { $0 != "*" }
            let declared = sentence.split(separator: "*").last.flatMap { UInt8($0.prefix(2), radix: 16) }
            #expect(declared == body.utf8.reduce(0, ^), "\(sentence)")
        }
        let gga = try #require(sentences.first { $0.dropFirst(3).hasPrefix("GGA") })
        #expect(gga.contains("3454.49"), "\(gga)")  // 34.9082196 S
    }
}
