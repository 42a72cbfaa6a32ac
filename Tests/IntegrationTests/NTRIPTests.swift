import Foundation
import GPSFixNTRIP
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A watcher reading every TPV as it comes, on a thread of its own, so the daemon never
/// sees it lag.
final class TPVWatcher: @unchecked Sendable {
    private let client: LineClient
    private let running = Atomic<Bool>(true)
    private let lock = NSLock()
    private var received: [[String: Any]] = []

    init(socket: String) throws {
        client = try LineClient(unixPath: socket)
        client.send("?WATCH={\"enable\":true,\"json\":true}\n")
        Thread { [self] in
            while running.load(ordering: .relaxed) {
                guard let line = client.readLine(timeout: 0.5), line.contains("\"class\":\"TPV\""), let report = line.json else { continue }
                lock.withLock { received.append(report) }
            }
        }.start()
    }

    var tpvs: [[String: Any]] { lock.withLock { received } }

    func stop() { running.store(false, ordering: .relaxed) }

    deinit { stop() }
}

/// What reached the fake receiver, and what a base sent, as RTCM frames.
enum Corrections {
    static func frames(inFile path: String) -> (frames: [[UInt8]], statistics: RTCMFrameFinder.Statistics) {
        let bytes = Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        var finder = RTCMFrameFinder()
        var frames: [[UInt8]] = []
        finder.feed(bytes) { frames.append($0.bytes) }
        return (frames, finder.statistics)
    }

    /// How many runs `written` makes of `sent`: each frame of a run is the frame sent right
    /// after the previous one. `nil` when a frame written was never sent, or out of order.
    static func runs(of written: [[UInt8]], in sent: [[UInt8]]) -> Int? {
        var runs = 0
        var position = -1
        for frame in written {
            if position >= 0, position + 1 < sent.count, sent[position + 1] == frame {
                position += 1
                continue
            }
            guard let next = sent[(position + 1)...].firstIndex(of: frame) else { return nil }
            position = next
            runs += 1
        }
        return runs
    }
}

/// RTCM corrections through real casters: RTKLIB's str2str (NTRIP 1.0) and a caster of the
/// tests' own (`Tests/Tools/ntrip_caster.py`) for NTRIP 2.0, source tables and silence.
@Suite("RTK corrections over NTRIP", .serialized)
struct NTRIPTests {
    static let tools = Binaries.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Tools")
    static let capture = Binaries.fixtures.appendingPathComponent("rtcm/rtcm3.2.log").path
    static let password = "Rtk-s3cret"

    /// A receiver replaying a capture with a DGPS fix (GGA's age and station), saving what it is sent.
    static func receiver(_ folder: URL) throws -> (RunningProcess, link: String, written: String) {
        let link = folder.appendingPathComponent("gps0").path, written = folder.appendingPathComponent("written.bin").path
        let replay = try RunningProcess(Binaries.gpsfix, [
            "replay", Binaries.fixtures.appendingPathComponent("gpsd/cat-ms352.log").path, "--link", link, "--loop",
            "--written", written,
        ])
        try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
        return (replay, link, written)
    }

    static func daemon(
        _ folder: URL, device: String, ntrip: String, extra: [String] = [], environment: [String: String]? = nil
    ) throws -> (RunningProcess, String) {
        let socket = extra.firstIndex(of: "--socket").map { extra[$0 + 1] } ?? folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(
            Binaries.gpsfixd,
            [device, "--log-level", "info", "--ntrip", ntrip, "--ntrip-gga-interval", "1"]
                + (extra.contains("--socket") ? [] : ["--socket", socket]) + extra,
            environment: environment)
        _ = LineClient.connect(unixPath: socket)
        return (daemon, socket)
    }

    /// str2str as a caster, its base input on `basePort`, relaying uploads back to the base.
    static func str2str(basePort: Int, casterPort: Int, folder: URL) throws -> RunningProcess {
        let caster = try RunningProcess("/usr/bin/str2str", [
            "-in", "tcpsvr://:\(basePort)", "-out", "ntripc://user:\(password)@:\(casterPort)/MOUNT", "-b", "1",
        ])
        try waitUntil("str2str listening") { (try? LineClient(tcpPort: casterPort)) != nil }
        return caster
    }

    @Test("""
        str2str: the frames the base sends reach the receiver whole and in order; the fix goes back as GGA; \
        the password stays out of ps; the caster restarts and corrections resume without a missed cycle
        """)
    func throughStr2str() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (basePort, casterPort) = (freePort(), freePort())
        var caster = try Self.str2str(basePort: basePort, casterPort: casterPort, folder: folder)
        let sent = folder.appendingPathComponent("sent.bin").path, back = folder.appendingPathComponent("back.txt").path
        let base = try RunningProcess("/usr/bin/python3", [Self.tools.appendingPathComponent("rtcm_base.py").path, "\(basePort)", Self.capture, sent, back])
        defer { base.stop() }
        let (replay, link, written) = try Self.receiver(folder)
        defer { replay.stop() }
        let (daemon, socket) = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user:\(Self.password)@127.0.0.1:\(casterPort)/MOUNT", extra: ["--ntrip-timeout", "2"])
        defer { daemon.stop() }
        let watcher = try TPVWatcher(socket: socket)

        try waitUntil("40 frames written to the receiver", within: 30) { Corrections.frames(inFile: written).frames.count >= 40 }
        let first = Corrections.frames(inFile: written)
        #expect(first.statistics.bytesSkipped == 0 && first.statistics.badCRC == 0, "only whole, intact frames reach the receiver")
        #expect(Corrections.runs(of: first.frames, in: Corrections.frames(inFile: sent).frames) == 1)
        // The caster saw the fix: GGA with the replay's position, checksummed.
        try waitUntil("the position relayed back to the base", within: 15) {
            ((try? String(contentsOfFile: back, encoding: .utf8)) ?? "").contains("$GPGGA")
        }
        let uploads = ((try? String(contentsOfFile: back, encoding: .utf8)) ?? "").split(separator: "\r\n").filter { $0.hasPrefix("$GPGGA") }
        let positions = Set(watcher.tpvs.compactMap { tpv -> String? in
            guard let lat = tpv["lat"] as? Double, let lon = tpv["lon"] as? Double else { return nil }
            return String(format: "%.6f,%.6f", lat, lon)
        })
        for upload in uploads.prefix(3) {
            let fields = upload.split(separator: ",", omittingEmptySubsequences: false)
            let latitude = Double(fields[2].prefix(2))! + Double(fields[2].dropFirst(2))! / 60
            let longitude = -(Double(fields[4].prefix(3))! + Double(fields[4].dropFirst(3))! / 60)
            #expect(positions.contains(String(format: "%.6f,%.6f", latitude, longitude)), "\(upload) is a position the daemon reported")
            #expect(Self.hasValidChecksum(String(upload)))
        }
        // The receiver's own view of the corrections, as gpsd reports it.
        let tpv = try #require(watcher.tpvs.last)
        #expect(tpv["status"] as? Int == 2 && tpv["dgpsAge"] != nil && tpv["dgpsSta"] as? Int == 0)
        let arguments = (try? String(contentsOfFile: "/proc/\(daemon.pid)/cmdline", encoding: .utf8)) ?? ""
        #expect(arguments.contains("--ntrip") && !arguments.contains(Self.password), "ps shows no password")

        // The caster goes away and comes back on the same port.
        let before = first.frames.count
        caster.stop()
        try waitUntil("the outage logged", within: 15) { daemon.errorText.contains("NTRIP: no corrections from") }
        usleep(1_500_000)
        caster = try Self.str2str(basePort: basePort, casterPort: casterPort, folder: folder)
        defer { caster.stop() }
        try waitUntil("corrections resumed", within: 60) { Corrections.frames(inFile: written).frames.count >= before + 40 }
        let all = Corrections.frames(inFile: written)
        #expect(all.statistics.bytesSkipped == 0 && all.statistics.badCRC == 0)
        // Two runs: before the outage and after it (a frame may be lost in the gap, none altered).
        let runs = Corrections.runs(of: all.frames, in: Corrections.frames(inFile: sent).frames)
        #expect(runs == 2 || runs == 3, "frames written run in the base's order, one run per connection")
        #expect(daemon.errorText.contains("corrections resume"))
        #expect(daemon.errorText.components(separatedBy: "NTRIP: no corrections from").count == 2, "the outage is logged once")
        #expect(!daemon.errorText.contains(Self.password))
        watcher.stop()
        // The clients never missed a cycle: the replay's TPVs every half second (or the loop's restart).
        let times = watcher.tpvs.compactMap { $0["time"] as? String }.compactMap(Self.seconds)
        #expect(times.count >= 8)
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 0.5) < 0.01 || $1 < $0 })
    }

    @Test("a wrong password is refused by str2str and logged once, without the password")
    func wrongPassword() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (basePort, casterPort) = (freePort(), freePort())
        let caster = try Self.str2str(basePort: basePort, casterPort: casterPort, folder: folder)
        defer { caster.stop() }
        let (replay, link, _) = try Self.receiver(folder)
        defer { replay.stop() }
        let passwordFile = folder.appendingPathComponent("password").path
        try "Wrong-pw-123\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let (daemon, socket) = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user@127.0.0.1:\(casterPort)/MOUNT", extra: ["--ntrip-password-file", passwordFile])
        defer { daemon.stop() }
        let watcher = try TPVWatcher(socket: socket)
        try waitUntil("the refusal logged", within: 15) { daemon.errorText.contains("401 Unauthorized") }
        // Two more attempts at least (backoff 1 s, then 2 s), each refused, logged once.
        usleep(3_500_000)
        #expect(daemon.errorText.components(separatedBy: "NTRIP: no corrections from").count == 2)
        #expect(daemon.errorText.contains("refused the user name or password"))
        #expect(!daemon.errorText.contains("Wrong-pw-123"))
        // The device is served meanwhile (a 2 Hz capture: 6 TPVs take 3 s or so).
        try waitUntil("six TPVs while the caster refuses", within: 20) { watcher.tpvs.count >= 6 }
    }

    /// The tests' own caster in `mode`, on a free port.
    static func ownCaster(_ folder: URL, mode: String) throws -> (RunningProcess, port: Int, record: String) {
        let port = freePort(), record = folder.appendingPathComponent("caster-\(mode).txt").path
        let caster = try RunningProcess("/usr/bin/python3", [
            tools.appendingPathComponent("ntrip_caster.py").path, "\(port)", capture, record, mode, "user:\(password)",
        ])
        try waitUntil("the caster listening") { (try? LineClient(tcpPort: port)) != nil }
        return (caster, port, record)
    }

    static func lines(_ path: String, _ prefix: String) -> [Substring] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix(prefix) }
    }

    @Test("NTRIP 2.0 with chunked transfer: every frame the caster sends reaches the receiver; the request says who asks")
    func chunkedVersion2() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (caster, port, record) = try Self.ownCaster(folder, mode: "chunked")
        defer { caster.stop() }
        let (replay, link, written) = try Self.receiver(folder)
        defer { replay.stop() }
        let (daemon, _) = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user@127.0.0.1:\(port)/MOUNT", extra: [],
            environment: ["GPSFIX_NTRIP_PASSWORD": Self.password])
        defer { daemon.stop() }
        try waitUntil("60 frames written", within: 30) { Corrections.frames(inFile: written).frames.count >= 60 }
        let sentBytes = Self.lines(record, "SENT ").flatMap { line in
            stride(from: 5, to: line.count, by: 2).map { UInt8(line.dropFirst($0).prefix(2), radix: 16)! }
        }
        var finder = RTCMFrameFinder()
        var sent: [[UInt8]] = []
        finder.feed(sentBytes) { sent.append($0.bytes) }
        let received = Corrections.frames(inFile: written).frames
        #expect(Array(sent.prefix(received.count)) == received, "the frames, in the caster's order, from the first")
        let request = try #require(Self.lines(record, "REQUEST /MOUNT").first)
        #expect(request.contains(" NTRIP_GPSFix/") && request.hasSuffix(" Ntrip/2.0"))
        try waitUntil("a position uploaded", within: 15) { !Self.lines(record, "UPLOAD $GPGGA").isEmpty }
        #expect(daemon.errorText.contains("(NTRIP 2)"))
    }

    @Test("a caster that streams and never reads: the positions it has no room for are dropped and counted, corrections flow on")
    func casterThatNeverReads() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (caster, port, _) = try Self.ownCaster(folder, mode: "deaf")
        defer { caster.stop() }
        let (replay, link, written) = try Self.receiver(folder)
        defer { replay.stop() }
        let metrics = freePort()
        // A position a millisecond, from the start: the caster's window fills in seconds.
        let (daemon, _) = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user:\(Self.password)@127.0.0.1:\(port)/MOUNT",
            extra: ["--ntrip-gga-interval", "0.001", "--ntrip-position", "52.37,4.89", "--metrics", "127.0.0.1:\(metrics)"])
        defer { daemon.stop() }
        func metric(_ name: String) -> Double { CasterTests.metric("gpsfix_ntrip_positions_\(name)_total", port: metrics) ?? -1 }
        try? waitUntil("positions dropped", within: 30) { metric("dropped") > 0 }
        try #require(metric("dropped") > 0, "\(metric("sent")) sent; \(daemon.errorText.suffix(1500))")
        let before = Corrections.frames(inFile: written).frames.count
        try waitUntil("corrections still written", within: 15) { Corrections.frames(inFile: written).frames.count >= before + 10 }
        #expect(daemon.isRunning)
    }

    @Test("gpsfix ntrip hides a password given in the caster's address from ps while it waits, after -- too", arguments: [false, true])
    func toolHidesPassword(afterDoubleDash: Bool) throws {
        // A caster that lets the connection in (the kernel's backlog) and never answers.
        let (listener, port) = boundLoopbackSocket(type: SOCK_STREAM, port: freePort())
        defer { close(listener) }
        try #require(port != 0 && listen(listener, 4) == 0)
        let address = "ntrip://user:\(Self.password)@127.0.0.1:\(port)"
        let tool = try RunningProcess(
            Binaries.gpsfix, ["ntrip", "sourcetable", "--timeout", "30"] + (afterDoubleDash ? ["--", address] : [address]))
        defer { tool.stop() }
        func commandLine() -> String { (try? String(contentsOfFile: "/proc/\(tool.pid)/cmdline", encoding: .utf8)) ?? "" }
        try waitUntil("the password hidden", within: 10) { commandLine().contains("***") }
        #expect(!commandLine().contains(Self.password) && tool.isRunning, "\(commandLine())")
    }

    @Test("a caster's address given to gpsfixd as a device is refused, its password not in the message")
    func casterAsDevice() throws {
        let address = "ntrip://rover:\(Self.password)@127.0.0.1:2101/MOUNT"
        let daemon = try RunningProcess(Binaries.gpsfixd, ["/dev/null", address])
        let status = daemon.wait(timeout: 20)
        if status == nil { daemon.stop() }
        #expect(status != nil && status != 0)
        #expect(daemon.errorText.contains("'ntrip://rover:***@127.0.0.1:2101/MOUNT' is not a device"), "\(daemon.errorText.suffix(600))")
        #expect(!daemon.errorText.contains(Self.password))
    }

    @Test("gpsfix ntrip sourcetable of a caster nothing listens for: status 1, saying why, without the usage")
    func toolCasterAbsent() throws {
        let tool = try RunningProcess(Binaries.gpsfix, ["ntrip", "sourcetable", "ntrip://127.0.0.1:\(freePort())", "--timeout", "5"])
        let status = tool.wait(timeout: 20)
        if status == nil { tool.stop() }
        #expect(status == 1, "\(tool.errorText.suffix(600))")
        #expect(tool.errorText.contains("refused") && !tool.errorText.contains("Usage"), "\(tool.errorText.suffix(600))")
    }

    @Test("a source table, the nearest first; a 401 from the caster; a caster that accepts and never sends")
    func tableRefusalAndSilence() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (caster, port, record) = try Self.ownCaster(folder, mode: "silent")
        defer { caster.stop() }

        let table = try run(Binaries.gpsfix, ["ntrip", "sourcetable", "ntrip://127.0.0.1:\(port)", "--near=-30,150"])
        let rows = table.split(separator: "\n").dropFirst().map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        #expect(rows.map { $0.first ?? "" } == ["FAR", "MOUNT"], "Sydney's base is nearer to -30,150: \(table)")
        #expect(rows.first?.count == 10 && rows.first?[1] == "RTCM 3")

        let (replay, link, _) = try Self.receiver(folder)
        defer { replay.stop() }
        let wrong = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user:Nope-42@127.0.0.1:\(port)/MOUNT", extra: ["--socket", folder.appendingPathComponent("w.sock").path])
        try waitUntil("the 401 logged", within: 15) { wrong.0.errorText.contains("401 Unauthorized") }
        #expect(!wrong.0.errorText.contains("Nope-42"))
        wrong.0.stop()

        let (daemon, socket) = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user:\(Self.password)@127.0.0.1:\(port)/MOUNT", extra: ["--ntrip-timeout", "1"])
        defer { daemon.stop() }
        let watcher = try TPVWatcher(socket: socket)
        try waitUntil("the silence logged", within: 15) { daemon.errorText.contains("no corrections for 1 s") }
        try waitUntil("two reconnections", within: 20) { Self.lines(record, "REQUEST /MOUNT").count >= 4 }
        #expect(daemon.errorText.components(separatedBy: "NTRIP: no corrections from").count == 2, "the outage is logged once")
        #expect(!daemon.errorText.contains("corrections resume"), "accepting without sending ends no outage")
        watcher.stop()
        let times = watcher.tpvs.compactMap { $0["time"] as? String }.compactMap(Self.seconds)
        #expect(times.count >= 8)
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 0.5) < 0.01 || $1 < $0 }, "no cycle missed meanwhile")
    }

    @Test("a caster slow to accept, and slower to send its first frame: the wait for corrections starts when it accepts")
    func slowCaster() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        // Accepts 1.6 s after the request, sends 1 s after that: within 2 s of each.
        let (caster, port, record) = try Self.ownCaster(folder, mode: "slow")
        defer { caster.stop() }
        let (replay, link, written) = try Self.receiver(folder)
        defer { replay.stop() }
        let (daemon, _) = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user:\(Self.password)@127.0.0.1:\(port)/MOUNT", extra: ["--ntrip-timeout", "2"])
        defer { daemon.stop() }
        try waitUntil("20 frames written", within: 30) { Corrections.frames(inFile: written).frames.count >= 20 }
        #expect(Self.lines(record, "REQUEST /MOUNT").count == 1, "\(daemon.errorText.suffix(1000))")
        #expect(!daemon.errorText.contains("no corrections for"))
    }

    @Test("a stream of bytes that hold no RTCM 3 frame (another format) is no stream of corrections: left after the timeout, saying why")
    func foreignStream() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (caster, port, record) = try Self.ownCaster(folder, mode: "foreign")
        defer { caster.stop() }
        let (replay, link, _) = try Self.receiver(folder)
        defer { replay.stop() }
        let (daemon, _) = try Self.daemon(
            folder, device: link, ntrip: "ntrip://user:\(Self.password)@127.0.0.1:\(port)/MOUNT", extra: ["--ntrip-timeout", "1"])
        defer { daemon.stop() }
        try waitUntil("the stream left", within: 15) { daemon.errorText.contains("no RTCM 3 frame for 1 s, only ") }
        #expect(daemon.errorText.contains("is the mountpoint's format RTCM 3?"), "\(daemon.errorText.suffix(1500))")
        try waitUntil("a reconnection", within: 20) { Self.lines(record, "REQUEST /MOUNT").count >= 2 }
    }

    @Test("a caster that streams a second, then closes (another rover on the account): reconnected after a backoff that grows, not every second")
    func streamClosedSoon() throws {
        let folder = try makeTemporaryFolder("ntrip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (caster, port, record) = try Self.ownCaster(folder, mode: "kick")
        defer { caster.stop() }
        let (replay, link, written) = try Self.receiver(folder)
        defer { replay.stop() }
        let (daemon, _) = try Self.daemon(folder, device: link, ntrip: "ntrip://user:\(Self.password)@127.0.0.1:\(port)/MOUNT", extra: [])
        defer { daemon.stop() }
        func streams() -> [Double] { Self.lines(record, "STREAM ").compactMap { Double($0.dropFirst(7)) } }
        try waitUntil("four streams", within: 30) { streams().count >= 4 }
        #expect(!Corrections.frames(inFile: written).frames.isEmpty)
        // Each stream lasts a second; the waits after it 1, 2, then 4 s: a backoff reset by
        // each frame that came waited a second each time.
        let starts = streams()
        let gaps = zip(starts, starts.dropFirst()).map { $1 - $0 }
        #expect(gaps[2] > gaps[0] + 1.5, "gaps between streams \(gaps)")
    }

    @Test("ntrips:// with --ntrip-ca: corrections over TLS from a caster whose certificate that authority signed; without it, refused")
    func tls() throws {
        let folder = try makeTemporaryFolder("ntrips")
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = folder.appendingPathComponent("caster.pem").path, key = folder.appendingPathComponent("caster.key").path
        _ = try run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        try #require(FileManager.default.fileExists(atPath: certificate), "openssl made no certificate")
        let (caster, port, _) = try Self.ownCaster(folder, mode: "chunked")
        defer { caster.stop() }
        // socat holds the TLS end in front of the plain caster, as a TLS proxy would.
        let tlsPort = freePort()
        let proxy = try RunningProcess("/usr/bin/socat", [
            "OPENSSL-LISTEN:\(tlsPort),reuseaddr,fork,cert=\(certificate),key=\(key),verify=0", "TCP:127.0.0.1:\(port)",
        ])
        defer { proxy.stop() }
        try waitUntil("the TLS proxy listening") { (try? LineClient(tcpPort: tlsPort)) != nil }
        // The tool says why the handshake failed, not that the caster closed the connection.
        let tool = try RunningProcess(Binaries.gpsfix, ["ntrip", "sourcetable", "ntrips://127.0.0.1:\(tlsPort)", "--timeout", "10"])
        let status = tool.wait(timeout: 20)
        if status == nil { tool.stop() }
        #expect(status == 1 && tool.errorText.lowercased().contains("certificate"), "\(tool.errorText.suffix(600))")
        #expect(!tool.errorText.contains("without a source table"))
        let (replay, link, written) = try Self.receiver(folder)
        defer { replay.stop() }
        let environment = ["GPSFIX_NTRIP_PASSWORD": Self.password]
        let untrusting = try Self.daemon(
            folder, device: link, ntrip: "ntrips://user@127.0.0.1:\(tlsPort)/MOUNT",
            extra: ["--socket", folder.appendingPathComponent("u.sock").path], environment: environment)
        try waitUntil("the untrusted certificate refused", within: 15) { untrusting.0.errorText.contains("NTRIP: no corrections from") }
        untrusting.0.stop()
        #expect(Corrections.frames(inFile: written).frames.isEmpty, "nothing written from an untrusted caster")

        let (daemon, _) = try Self.daemon(
            folder, device: link, ntrip: "ntrips://user@127.0.0.1:\(tlsPort)/MOUNT", extra: ["--ntrip-ca", certificate],
            environment: environment)
        defer { daemon.stop() }
        try waitUntil("30 frames written over TLS", within: 30) { Corrections.frames(inFile: written).frames.count >= 30 }
        let received = Corrections.frames(inFile: written)
        #expect(received.statistics.bytesSkipped == 0 && received.statistics.badCRC == 0)
        #expect(daemon.errorText.contains("streaming corrections from ntrips://user@127.0.0.1"))
    }

    static func seconds(_ time: String) -> Double? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: time)?.timeIntervalSince1970
    }

    static func hasValidChecksum(_ sentence: String) -> Bool {
        guard sentence.hasPrefix("$"), let star = sentence.lastIndex(of: "*") else { return false }
        let sum = sentence[sentence.index(after: sentence.startIndex)..<star].utf8.reduce(UInt8(0), ^)
        return UInt8(sentence[sentence.index(after: star)...].prefix(2), radix: 16) == sum
    }
}
