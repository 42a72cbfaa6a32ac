import Foundation
import GPSFixDevices
import TestSupport
import Testing

/// The caster inside the daemon, with real NTRIP clients: RTKLIB's str2str, rovers of the
/// tests' own (`Tests/Tools/ntrip_rovers.py`, NTRIP 1.0 and 2.0), and the frames of a real
/// RTCM 3 stream written into the receiver's pseudo-terminal.
@Suite("An RTK base station's caster", .serialized)
struct CasterTests {
    /// The payload of `fixtures/rtcm/rtcm3.2.log`: 192 real frames, the experimental 63 among them.
    static let stream = (try? RecordedRTCM.payload(of: "rtcm3.2.log")) ?? []

    /// A users file of one rover, its password hashed by htpasswd -B at `cost` (2^cost
    /// rounds): always under CI, elsewhere when it is installed (a plain password otherwise).
    static func users(in folder: URL, cost: Int = 5) throws -> String {
        let path = folder.appendingPathComponent("users").path
        let htpasswd = "/usr/bin/htpasswd"
        let line = installedOrInCI(FileManager.default.isExecutableFile(atPath: htpasswd))
            ? try run(htpasswd, ["-nbB", "-C", "\(cost)", "rover", "base-s3cret"]).trimmingCharacters(in: .whitespacesAndNewlines)
            : "rover:base-s3cret"
        try line.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func metric(_ name: String, port: Int) -> Double? {
        let text = (try? WebTests.get("/metrics", port: port).body) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// A daemon reading a pseudo-terminal, its caster on a free port with one rover's
    /// account, and its metrics.
    final class Base {
        let folder: URL
        let terminal: PseudoTerminal
        let daemon: RunningProcess
        let caster = freePort(), metrics = freePort()
        /// The valid frames written so far, in order: what every rover must get.
        private(set) var frames: [UInt8] = []
        private(set) var frameCount = 0

        /// `stallTimeout`: how long a rover may stay over its cap before it is cut off;
        /// `hashCost`: the bcrypt cost of the rover's password.
        init(stallTimeout: Int = 5, hashCost: Int = 5) throws {
            folder = try makeTemporaryFolder("caster")
            terminal = try PseudoTerminal()
            daemon = try RunningProcess(Binaries.gpsfixd, [
                terminal.path, "--speed", "115200", "--socket", folder.appendingPathComponent("gpsfixd.sock").path,
                "--caster", "127.0.0.1:\(caster)", "--caster-mountpoint", "ROOF", "--caster-users", try CasterTests.users(in: folder, cost: hashCost),
                "--stall-timeout", "\(stallTimeout)", "--metrics", "127.0.0.1:\(metrics)",
            ])
            try waitUntil("the caster's metrics") { self.metric("gpsfix_caster_streams") == 0 }
        }

        deinit {
            daemon.stop()
            try? FileManager.default.removeItem(at: folder)
        }

        func metric(_ name: String) -> Double? { CasterTests.metric(name, port: metrics) }

        /// Writes a round of the stream into the receiver's port as a port brings it, 1 kB at a time.
        func writeRound() async throws {
            for start in stride(from: 0, to: CasterTests.stream.count, by: 1024) {
                try await terminal.write(Array(CasterTests.stream[start..<min(start + 1024, CasterTests.stream.count)]))
                try await Task.sleep(for: .milliseconds(5))
            }
            let written = RTCMWire.frames(in: CasterTests.stream)
            frames += written.joined()
            frameCount += written.count
        }

        /// Waits until the daemon has read every frame written.
        func waitForFrames() throws {
            try waitUntil("the daemon read \(frameCount) frames", within: 30) {
                metric("gpsfix_caster_base_frames_total") == Double(frameCount)
            }
        }

        /// Rovers of `ntrip_rovers.py` with the right account; `extra` passes `--slow`.
        func rovers(_ count: Int, _ extra: [String] = []) throws -> (RunningProcess, sent: String, done: String) {
            let sent = folder.appendingPathComponent("sent.bin").path, done = folder.appendingPathComponent("done").path
            let rovers = try RunningProcess("/usr/bin/python3", [
                NTRIPTests.tools.appendingPathComponent("ntrip_rovers.py").path, "\(caster)", "ROOF", "rover:base-s3cret", "\(count)",
                sent, done,
            ] + extra)
            return (rovers, sent, done)
        }

        /// Tells `rovers` the stream is over, and reads their report.
        func report(of rovers: RunningProcess, sent: String, done: String) throws -> [String: Any] {
            try Data(frames).write(to: URL(fileURLWithPath: sent))
            #expect(FileManager.default.createFile(atPath: done, contents: nil), "\(done) could not be made")
            #expect(rovers.wait(timeout: 30) == 0, "\(rovers.errorText.suffix(600))")
            return try #require(rovers.outputText.split(separator: "\n").last.flatMap { String($0).json }, "\(rovers.outputText)")
        }
    }

    @Test("""
        str2str and 100 rovers (NTRIP 1.0 and 2.0) get every frame the receiver sent, byte for byte and in order, \
        the experimental 63 among them; the daemon grows by less than 16 MB; a wrong password gets 401
        """)
    func rovers() async throws {
        let base = try Base()
        let received = base.folder.appendingPathComponent("str2str.bin").path
        let str2str = try RunningProcess("/usr/bin/str2str", [
            "-in", "ntrip://rover:base-s3cret@127.0.0.1:\(base.caster)/ROOF", "-out", "file://\(received)",
        ])
        defer { str2str.stop() }
        let (rovers, sent, done) = try base.rovers(100)
        defer { rovers.stop() }
        try waitUntil("101 streams", within: 30) {
            rovers.outputText.hasPrefix("READY") && base.metric("gpsfix_caster_streams") == 101
        }
        let residentBefore = HostileClientTests.residentKilobytes(base.daemon.pid)
        for _ in 0..<10 { try await base.writeRound() }
        try base.waitForFrames()
        let residentAfter = HostileClientTests.residentKilobytes(base.daemon.pid)

        let report = try base.report(of: rovers, sent: sent, done: done)
        let results = try #require(report["rovers"] as? [[String: Any]])
        #expect(results.count == 100)
        #expect(
            results.filter { $0["complete"] as? Bool == true }.count == 100,
            "\(report["sent"] ?? 0) bytes sent: \(results.filter { $0["complete"] as? Bool != true }.prefix(3))")
        #expect(Set(results.compactMap { $0["head"] as? String }) == ["ICY 200 OK", "HTTP/1.1 200 OK"])
        #expect(report["wrong"] as? String == "HTTP/1.1 401 Unauthorized")
        try waitUntil("str2str's file complete", within: 10) {
            (try? FileManager.default.attributesOfItem(atPath: received)[.size] as? Int) == base.frames.count
        }
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: received))) == base.frames)
        #expect(base.metric("gpsfix_caster_frames_dropped_total") == 0)
        #expect(base.metric("gpsfix_caster_unauthorized_total") == 1)
        #expect(residentAfter - residentBefore < 16_000 || Binaries.isSanitized, "\(residentBefore) kB before, \(residentAfter) kB after")
    }

    @Test("a fleet sharing one hashed account, asking at once (after a restart), is let in whole: one hash check, no 503")
    func fleetAsksAtOnce() async throws {
        // A cost of 2^10 rounds: the check takes tens of milliseconds, so every request
        // arrives while it runs.
        let base = try Base(hashCost: 10)
        let token = Data("rover:base-s3cret".utf8).base64EncodedString()
        let fleet = try (0..<6).map { _ in try LineClient(tcpPort: base.caster) }
        for rover in fleet {
            rover.send("GET /ROOF HTTP/1.1\r\nHost: 127.0.0.1\r\nNtrip-Version: Ntrip/2.0\r\nUser-Agent: NTRIP fleet\r\n"
                + "Authorization: Basic \(token)\r\n\r\n")
        }
        var heads: [String?] = []
        for rover in fleet { heads.append(await rover.line()) }
        #expect(heads == Array(repeating: "HTTP/1.1 200 OK", count: fleet.count))
        #expect(base.metric("gpsfix_caster_busy_total") == 0)
    }

    @Test("a rover that stops reading is cut off and counted, and the rover beside it loses no frame")
    func rover() async throws {
        let base = try Base(stallTimeout: 1)
        let (rovers, sent, done) = try base.rovers(1, ["--slow"])
        defer { rovers.stop() }
        try waitUntil("2 streams", within: 30) { rovers.outputText.hasPrefix("READY") && base.metric("gpsfix_caster_streams") == 2 }
        // Until the non-reader's socket and its share of the daemon's are full: its 4 KiB,
        // the caster's 8 KiB send buffer (not loopback's megabytes, minutes of a base's
        // corrections, stale on arrival), the session's 32 KiB. Rounds are 30 KiB: 20 at most.
        for _ in 0..<20 where base.metric("gpsfix_clients_cut_off_total") == 0 { try await base.writeRound() }
        try base.waitForFrames()
        #expect(base.metric("gpsfix_caster_streams") == 1)
        let report = try base.report(of: rovers, sent: sent, done: done)
        #expect(report["slowCutOff"] as? Bool == true)
        #expect((report["rovers"] as? [[String: Any]])?.first?["complete"] as? Bool == true, "\(report["rovers"] ?? [])")
        #expect((base.metric("gpsfix_caster_frames_dropped_total") ?? 0) > 0)
    }

    @Test(
        "gpsfix ubx set --survey-in --rtcm msm7 on a generation 9 and a generation 8 base: str2str takes 1005 and MSM7 from the caster",
        arguments: [SimulatedUBXReceiver.Generation.generation9, .m8])
    func surveyedBase(_ generation: SimulatedUBXReceiver.Generation) throws {
        let folder = try makeTemporaryFolder("caster")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(generation)
        let control = folder.appendingPathComponent("control.sock").path
        let (caster, metrics) = (freePort(), freePort())
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            receiver.path, "--speed", "\(receiver.speed)", "--socket", folder.appendingPathComponent("gpsfixd.sock").path,
            "--control-socket", control, "--caster", "127.0.0.1:\(caster)", "--metrics", "127.0.0.1:\(metrics)",
        ])
        defer { daemon.stop() }
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        let received = folder.appendingPathComponent("str2str.bin").path
        let str2str = try RunningProcess("/usr/bin/str2str", ["-in", "ntrip://127.0.0.1:\(caster)/GPSFIX", "-out", "file://\(received)"])
        defer { str2str.stop() }
        try waitUntil("str2str streaming") { Self.metric("gpsfix_caster_streams", port: metrics) == 1 }

        let set = try UBXConfigurationToolTests.ubx([
            "set", receiver.path, "--control-socket", control, "--survey-in", "5,10", "--rtcm", "msm7",
        ])
        #expect(set.status == 0, "\(set.output) \(set.errors)")
        // The MSM7s at once; 1005, every 10 solutions, only once the survey is done (its
        // mean within 10 m after some 5 solutions).
        try waitUntil("1005 and MSM7 served", within: 40) {
            let stream = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: received)))) ?? []
            return Set(RTCMWire.messageNumbers(in: stream)).isSuperset(of: [1005, 1077, 1087, 1097])
        }
        let stream = try [UInt8](Data(contentsOf: URL(fileURLWithPath: received)))
        // Whole frames, back to back from the first byte (the last may be on its way):
        // nothing but what the receiver sent.
        let whole = Array(RTCMWire.frames(in: stream).joined())
        #expect(Array(stream.prefix(whole.count)) == whole)
        #expect(stream.count - whole.count < 1029)
    }

    @Test("--caster-relay: str2str, a rover of the daemon's caster, gets what --ntrip fetches from another caster, in order")
    func relay() throws {
        let folder = try makeTemporaryFolder("relay")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (basePort, upstream, caster) = (freePort(), freePort(), freePort())
        let remote = try NTRIPTests.str2str(basePort: basePort, casterPort: upstream, folder: folder)
        defer { remote.stop() }
        let sent = folder.appendingPathComponent("sent.bin").path
        let base = try RunningProcess("/usr/bin/python3", [
            NTRIPTests.tools.appendingPathComponent("rtcm_base.py").path, "\(basePort)", NTRIPTests.capture, sent,
            folder.appendingPathComponent("back.txt").path,
        ])
        defer { base.stop() }
        let (replay, link, _) = try NTRIPTests.receiver(folder)
        defer { replay.stop() }
        let (daemon, _) = try NTRIPTests.daemon(
            folder, device: link, ntrip: "ntrip://user:\(NTRIPTests.password)@127.0.0.1:\(upstream)/MOUNT",
            extra: ["--caster", "127.0.0.1:\(caster)", "--caster-relay", "FLEET"])
        defer { daemon.stop() }
        let relayed = folder.appendingPathComponent("relayed.bin").path
        let rover = try RunningProcess("/usr/bin/str2str", ["-in", "ntrip://127.0.0.1:\(caster)/FLEET", "-out", "file://\(relayed)"])
        defer { rover.stop() }
        try waitUntil("40 frames relayed", within: 30) { Corrections.frames(inFile: relayed).frames.count >= 40 }
        let got = Corrections.frames(inFile: relayed)
        #expect(got.statistics.badCRC == 0 && got.statistics.bytesSkipped == 0)
        #expect(Corrections.runs(of: got.frames, in: Corrections.frames(inFile: sent).frames) == 1)
    }

    @Test("requests that are not a stream's: an endless head (400), a source pushing (405), an unknown mountpoint (404 in 2.0, the table in 1.0)")
    func refusals() throws {
        let base = try Base()
        func answer(_ request: [UInt8]) throws -> String? {
            let client = try LineClient(tcpPort: base.caster)
            client.send(bytes: request)
            return client.readLine(timeout: 10)
        }
        #expect(try answer([UInt8](repeating: UInt8(ascii: "A"), count: 6000)) == "HTTP/1.0 400 Bad Request")
        #expect(try answer(Array("SOURCE secret /ROOF\r\nSource-Agent: NTRIP x\r\n\r\n".utf8)) == "HTTP/1.0 405 Method Not Allowed")
        #expect(try answer(Array("GET /roof HTTP/1.1\r\nNtrip-Version: Ntrip/2.0\r\n\r\n".utf8)) == "HTTP/1.1 404 Not Found")
        #expect(try answer(Array("GET /NOPE HTTP/1.0\r\n\r\n".utf8)) == "SOURCETABLE 200 OK")
        #expect(try answer(Array("GET /ROOF HTTP/1.0\r\n\r\n".utf8))?.hasPrefix("HTTP/1.0 401") == true)
        #expect(base.metric("gpsfix_caster_streams") == 0)
        #expect(base.metric("gpsfix_caster_source_tables_total") == 1)
    }

    @Test("the source table, as str2str reads it: the stream's messages, constellations and the station's position")
    func sourceTable() async throws {
        let folder = try makeTemporaryFolder("caster")
        defer { try? FileManager.default.removeItem(at: folder) }
        let terminal = try PseudoTerminal()
        let (caster, metrics) = (freePort(), freePort())
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            terminal.path, "--speed", "115200", "--socket", folder.appendingPathComponent("gpsfixd.sock").path,
            "--caster", "127.0.0.1:\(caster)", "--metrics", "127.0.0.1:\(metrics)",
        ])
        defer { daemon.stop() }
        try waitUntil("the caster's metrics") { Self.metric("gpsfix_caster_streams", port: metrics) == 0 }
        // A station's position (1005, 52° N 4.37° E) and a second of the network's stream.
        try await terminal.write(RTCMWire.stationPosition(x: 39_235_513_863, y: 2_998_343_789, z: 50_028_427_460))
        try await terminal.write(Self.stream)
        try waitUntil("the frames read", within: 10) { Self.metric("gpsfix_caster_base_frames_total", port: metrics) == 193 }

        let table = folder.appendingPathComponent("table.txt").path
        let str2str = try RunningProcess("/usr/bin/str2str", ["-in", "ntrip://127.0.0.1:\(caster)/", "-out", "file://\(table)"])
        defer { str2str.stop() }
        try waitUntil("str2str's table", within: 10) {
            ((try? String(contentsOfFile: table, encoding: .utf8)) ?? "").contains("ENDSOURCETABLE")
        }
        let lines = try String(contentsOfFile: table, encoding: .utf8).split(separator: "\r\n").map(String.init)
        let fields = try #require(lines.first { $0.hasPrefix("STR;") }).split(separator: ";", omittingEmptySubsequences: false)
        #expect(fields[1] == "GPSFIX")
        let numbers = Set(fields[4].split(separator: ",").compactMap { Int($0.prefix { $0.isNumber }) })
        #expect(numbers.isSuperset(of: [63, 1005, 1019, 1077, 1087, 1097, 1107]), "\(fields)")
        #expect(fields[6] == "GPS+GLO+GAL+SBAS")
        #expect(fields[9] == "52.00" && fields[10] == "4.37", "\(fields)")
        #expect(fields[15] == "N")
        #expect(lines.contains { $0.hasPrefix("CAS;127.0.0.1;\(caster);") })

        // A second NTRIP client library, pygnssutils (PyPI, in a venv of the tests'), reads the same.
        let python = try #require(Self.pygnssutils(), "pygnssutils could not be installed from PyPI")
        for version in ["1.0", "2.0"] {
            let read = try run(python, [NTRIPTests.tools.appendingPathComponent("pygnssutils_sourcetable.py").path, "127.0.0.1", "\(caster)", version])
            let rows = try #require(read.json?["rows"] as? [[String]], "NTRIP \(version): \(read)")
            #expect(rows.first?.prefix(4) == ["GPSFIX", "GPSFIX", "RTCM 3.3", String(fields[4])], "NTRIP \(version): \(rows)")
        }
    }

    /// The Python of a venv holding pygnssutils 1.3.1, made once a machine (a lock keeps two
    /// test runs from making it at once); `nil` when it cannot be made.
    static func pygnssutils() -> String? {
        let venv = "/tmp/gpsfix-venvs/pygnssutils-1.3.1"
        let script = """
            mkdir -p /tmp/gpsfix-venvs && (
              flock 9
              [ -e "$V/.ready" ] || {
                rm -rf "$V" && /usr/bin/python3 -m venv "$V" &&
                timeout 150 "$V/bin/pip" install --quiet --disable-pip-version-check pygnssutils==1.3.1 &&
                "$V/bin/python" -c 'import pygnssutils' && touch "$V/.ready"
              }
            ) 9>"$V.lock"
            """
        let install = try? RunningProcess("/bin/sh", ["-c", script], environment: ["V": venv])
        guard install?.wait(timeout: 180) == 0 else { return nil }
        return venv + "/bin/python"
    }
}
