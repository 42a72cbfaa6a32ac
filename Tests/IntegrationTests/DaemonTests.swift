import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("gpsfixd with real clients", .serialized)
struct DaemonTests {
    static let watch = #"?WATCH={"enable":true,"json":true}"# + "\n"

    @Test("over the Unix socket: VERSION, then DEVICES and WATCH, then TPVs matching gpsfix decode")
    func unixSocketClient() throws {
        let daemon = try DaemonUnderTest()
        let client = try daemon.client()
        let version = try #require(client.readLine()?.json)
        #expect(version["class"] as? String == "VERSION" && version["proto_major"] as? Int == 3)
        // As gpsd's `rev`, its source revision: the commit `--version` names.
        let named = try run(Binaries.gpsfixd, ["--version"])
        #expect(named.contains("(\(try #require(version["rev"] as? String)))"), "\(named)")
        client.send(Self.watch)
        #expect(client.readLine()?.json?["class"] as? String == "DEVICES")
        #expect(client.readLine()?.json?["class"] as? String == "WATCH")
        let lines = try #require(client.readLines(until: { $0.contains(#""mode":3"#) }, timeout: 30))
        let tpv = try #require(lines.last?.json)

        let decoded = try run(Binaries.gpsfix, ["decode", Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path])
        let expected = decoded.split(whereSeparator: \.isNewline).compactMap { String($0).json }
            .filter { $0["class"] as? String == "TPV" && $0["time"] as? String == tpv["time"] as? String }
        let reference = try #require(expected.last, "\(decoded.count) bytes decoded: \(decoded.prefix(200))")
        #expect(tpv["lat"] as? Double == reference["lat"] as? Double)
        #expect(tpv["lon"] as? Double == reference["lon"] as? Double)
        #expect(tpv["altMSL"] as? Double == reference["altMSL"] as? Double)
    }

    @Test("gpsfix decode of a missing log fails with the system's reason and writes no report")
    func decodeMissingFile() throws {
        let process = try RunningProcess(Binaries.gpsfix, ["decode", "/nonexistent/capture.nmea"])
        #expect(process.wait(timeout: 20) == 1)
        #expect(process.errorText.contains("open on /nonexistent/capture.nmea failed: No such file or directory"))
        #expect(process.outputText.isEmpty)
    }

    @Test("gpsfix decode of a capture, then a missing one: the first one's reports are all written, then the error")
    func decodeKeepsWhatWasDecoded() throws {
        let log = Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path
        let alone = try RunningProcess(Binaries.gpsfix, ["decode", log])
        #expect(alone.wait(timeout: 20) == 0)
        let process = try RunningProcess(Binaries.gpsfix, ["decode", log, "/nonexistent/capture.nmea"])
        #expect(process.wait(timeout: 20) == 1)
        #expect(process.errorText.contains("open on /nonexistent/capture.nmea failed: No such file or directory"))
        #expect(!alone.outputText.isEmpty && process.outputText == alone.outputText)
    }

    @Test("gpsfix decode into a full disk fails with status 74 and the system's reason, not silently")
    func decodeIntoFullDisk() throws {
        let log = Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path
        let process = try RunningProcess("/bin/sh", ["-c", "exec \"$0\" decode \"$1\" > /dev/full", Binaries.gpsfix, log])
        #expect(process.wait(timeout: 20) == 74)
        #expect(process.errorText.contains("cannot write the reports: No space left on device"), "\(process.errorText)")
    }

    @Test("socat on the Unix socket gets the same protocol")
    func socat() throws {
        let daemon = try DaemonUnderTest()
        let output = try run("/bin/sh", ["-c", "(printf '?VERSION;?DEVICES;\\n'; sleep 2) | socat - UNIX-CONNECT:\(daemon.socket)"], timeout: 10)
        let classes = output.split(whereSeparator: \.isNewline).compactMap { String($0).json?["class"] as? String }
        #expect(classes.prefix(3) == ["VERSION", "VERSION", "DEVICES"], "\(output.prefix(300))")
        #expect(output.contains("\r\n"))
    }

    @Test("over loopback TCP: gpspipe -w prints TPVs")
    func gpspipe() throws {
        let daemon = try DaemonUnderTest()
        let output = try run("/usr/bin/gpspipe", ["-w", "-n", "20", "127.0.0.1:\(daemon.tcpPort)"], timeout: 30)
        let tpvs = output.split(whereSeparator: \.isNewline).filter { $0.contains(#""class":"TPV""#) }
        #expect(tpvs.count >= 5, "\(output.prefix(500))")
    }

    @Test("the Python gps module reads fixes with the right position")
    func pythonClient() throws {
        let daemon = try DaemonUnderTest()
        let script = """
            import gps
            session = gps.gps(host="127.0.0.1", port=\(daemon.tcpPort))
            session.stream(gps.WATCH_ENABLE | gps.WATCH_JSON)
            for report in session:
                if report["class"] == "TPV" and report.get("mode", 0) == 3:
                    print("%.6f %.6f" % (report.lat, report.lon))
                    break
            """
        let output = try run("/usr/bin/python3", ["-c", script], timeout: 30)
        let numbers = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        try #require(numbers.count == 2, "\(output)")
        #expect(abs(numbers[0] - -27.2107) < 0.001 && abs(numbers[1] - 153.052) < 0.001)
    }

    @Test("cgps, run in a terminal under tmux, shows the position")
    func cgps() throws {
        let daemon = try DaemonUnderTest()
        let screen = try terminalScreen(of: "cgps 127.0.0.1:\(daemon.tcpPort)", in: daemon.folder) { $0.contains("3D FIX") }
        #expect(screen.contains("3D FIX"), "\(screen)")
        let latitude = screen.split(separator: "\n").first { $0.contains("Latitude:") }
            .flatMap { $0.split(separator: " ").compactMap { Double($0) }.first }
        let longitude = screen.split(separator: "\n").first { $0.contains("Longitude:") }
            .flatMap { $0.split(separator: " ").compactMap { Double($0) }.first }
        // haicom-305N stays within a few metres of 27.2107 S, 153.0520 E.
        #expect(abs((latitude ?? 0) - 27.2107) < 0.001 && abs((longitude ?? 0) - 153.052) < 0.001, "\(screen)")
    }

    @Test("a sky of 184 signals: libgps, which drops a SKY listing more than 140 satellites, reads the SKY of 140")
    func skyPastLibgpsLimit() throws {
        let folder = try makeTemporaryFolder("sky")
        defer { try? FileManager.default.removeItem(at: folder) }
        let capture = folder.appendingPathComponent("sky.nmea")
        try Data(Self.largeSkyCapture().utf8).write(to: capture)
        let daemon = try DaemonUnderTest(fixture: capture.path)
        let script = Binaries.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Tools/libgps_sky.py").path
        let reader = try RunningProcess("/usr/bin/python3", [script, "127.0.0.1", "\(daemon.tcpPort)"])
        #expect(reader.wait(timeout: 60) == 0, "\(reader.outputText)")
        #expect(reader.outputText == "sky\n")
    }

    /// Ten seconds of a receiver tracking GPS L1 and L5, GLONASS G1 and G2, Galileo E1 and
    /// E5b: GSV groups of 184 signals in all (NMEA 4.11 signal IDs), 12 GPS satellites used
    /// (24 signals).
    static func largeSkyCapture() -> String {
        func sentence(_ body: String) -> String {
            "$\(body)*\(String(format: "%02X", body.utf8.reduce(UInt8(0), ^)))\r\n"
        }
        let groups: [(talker: String, ids: ClosedRange<Int>, signal: Int)] = [
            ("GP", 1...32, 1), ("GP", 1...32, 6), ("GL", 65...88, 1), ("GL", 65...88, 3), ("GA", 1...36, 7), ("GA", 1...36, 2),
        ]
        var text = ""
        for second in 0..<10 {
            let time = String(format: "1200%02d.00", second)
            text += sentence("GPRMC,\(time),A,4807.038,N,01131.000,E,0.0,0.0,231126,,,A")
            text += sentence("GPGGA,\(time),4807.038,N,01131.000,E,1,12,0.9,545.4,M,46.9,M,,")
            text += sentence("GNGSA,A,3,01,02,03,04,05,06,07,08,09,10,11,12,1.5,0.9,1.2,1")
            for group in groups {
                let ids = Array(group.ids)
                let messages = (ids.count + 3) / 4
                for message in 0..<messages {
                    let fields = ids[(message * 4)..<min(ids.count, message * 4 + 4)].map { id in
                        String(format: "%02d,%02d,%03d,%02d", id, 10 + id % 70, id * 7 % 360, 20 + id % 30)
                    }
                    text += sentence("\(group.talker)GSV,\(messages),\(message + 1),\(ids.count),\(fields.joined(separator: ",")),\(group.signal)")
                }
            }
        }
        return text
    }

    @Test("100 watchers receive identical streams; one that never reads is cut off, the others keep up")
    func fanOutAndSlowClient() throws {
        let daemon = try DaemonUnderTest(speed: 20)
        let stalled = try daemon.client()
        stalled.send(#"?WATCH={"enable":true,"json":true,"nmea":true}"# + "\n")
        let watchers = try (0..<100).map { _ in try daemon.client() }
        for watcher in watchers { watcher.send(Self.watch) }
        // Each watcher collects the TPV times it sees over the same window.
        var streams: [[String]] = []
        // One deadline for all: SKY and DEVICE lines keep coming if the TPVs stop.
        let deadline = Date().addingTimeInterval(120)
        for watcher in watchers {
            var times: [String] = []
            while times.count < 12, let line = watcher.readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
                if let object = line.json, object["class"] as? String == "TPV", let time = object["time"] as? String {
                    times.append(time)
                }
            }
            streams.append(times)
        }
        #expect(streams.allSatisfy { $0.count == 12 })
        // Watchers connected at slightly different moments: compare from a common first time.
        let common = streams.map { $0.first ?? "" }.max() ?? ""
        let aligned = streams.map { Array($0.drop { $0 < common }) }
        let shortest = aligned.map(\.count).min() ?? 0
        #expect(shortest >= 4 || Binaries.isSanitized)  // a sanitised daemon runs many times slower
        #expect(Set(aligned.map { Array($0.prefix(shortest)) }).count == 1)
        // The stalled client's buffer fills (its socket, then 256 KiB in the daemon): it is closed.
        var cutOff = false
        for _ in 0..<120 where !cutOff {
            usleep(250_000)
            var poller = pollfd(fd: stalled.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 0)
            cutOff = poller.revents & Int16(POLLHUP | POLLERR | 0x2000) != 0  // 0x2000: POLLRDHUP
            for watcher in watchers.prefix(1) { _ = watcher.readLine(timeout: 0.01) }
        }
        #expect(cutOff, "the client that never reads was not cut off")
        let after = try daemon.client()
        after.send(Self.watch)
        #expect(after.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 10) != nil)
    }

    @Test("malformed and oversized requests, garbage and abrupt disconnects leave the daemon serving")
    func hostileClients() throws {
        let daemon = try DaemonUnderTest()
        let client = try daemon.client()
        _ = client.readLine()
        client.send("?BOGUS;\n")
        #expect(client.readLine()?.contains(#""class":"ERROR","message":"Unrecognized request '?BOGUS;'"#) == true)
        client.send("?VERSION\n")
        #expect(client.readLine()?.contains("Unrecognized request '?VERSION'") == true)
        client.send("hello, I am not a request\n?VERSION;\n")
        #expect(client.readLine()?.json?["class"] as? String == "VERSION")
        client.send(String(repeating: "A", count: 1_000_000))
        client.send("\n?DEVICES;\n")
        #expect(client.readLine()?.contains("Request longer than") == true)
        #expect(client.readLine()?.json?["class"] as? String == "DEVICES")
        client.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        let garbage = try daemon.client()
        garbage.send(bytes: (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        let half = try daemon.client()
        half.send("?WAT")
        _ = half  // both go away at the end of the scope; the first keeps watching
        #expect(client.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 10) != nil)
        let rssBefore = daemon.residentKilobytes
        for _ in 0..<5 { try daemon.client().send(String(repeating: "?", count: 200_000)) }
        #expect(client.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 10) != nil)
        #expect(daemon.residentKilobytes < rssBefore + 20_000 || Binaries.isSanitized)
    }

    @Test("the socket: created 0660, a stale file is replaced, a live daemon's socket is never stolen")
    func socketFile() throws {
        let daemon = try DaemonUnderTest()
        var status = stat()
        #expect(stat(daemon.socket, &status) == 0 && status.st_mode & 0o777 == 0o660)
        let second = try RunningProcess(Binaries.gpsfixd, ["file:/dev/null", "--socket", daemon.socket])
        let exitStatus = second.wait(timeout: 10)
        #expect(exitStatus != nil && exitStatus != 0)
        #expect(second.errorText.contains("in use by a running server"))
        #expect((try? daemon.client()) != nil)

        // A socket file left behind by a killed daemon is replaced by the next one.
        daemon.daemon.stop(SIGKILL)
        #expect(FileManager.default.fileExists(atPath: daemon.socket))
        let third = try RunningProcess(
            Binaries.gpsfixd, [daemon.folder.appendingPathComponent("gps0").path, "--socket", daemon.socket])
        defer { third.stop() }
        #expect(LineClient.connect(unixPath: daemon.socket)?.readLine()?.contains("VERSION") == true)
    }

    @Test("SIGTERM during fan-out ends cleanly and removes the socket file")
    func gracefulShutdown() throws {
        let daemon = try DaemonUnderTest(speed: 20)
        let watchers = try (0..<20).map { _ in try daemon.client() }
        for watcher in watchers { watcher.send(Self.watch) }
        _ = watchers[0].readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 10)
        daemon.daemon.stop(SIGTERM)
        #expect(daemon.daemon.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
    }

    @Test("gpsfix poll and gpsfix watch talk to the daemon over its socket")
    func companionTool() throws {
        let daemon = try DaemonUnderTest()
        _ = try daemon.client().readLines(until: { _ in false }, timeout: 3)
        let poll = try run(Binaries.gpsfix, ["poll", "--socket", daemon.socket], timeout: 10)
        #expect(poll.json?["class"] as? String == "POLL")
        let watch = try run(Binaries.gpsfix, ["watch", "--socket", daemon.socket, "--count", "3"], timeout: 20)
        #expect(watch.split(whereSeparator: \.isNewline).filter { $0.contains(#""class":"TPV""#) }.count == 3)
    }

    @Test("gpsfix poll at a socket whose daemon accepts nothing (its queue full) gives up, saying so")
    func socketNeverAccepting() throws {
        let folder = try makeTemporaryFolder("stuck")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("gpsd.sock").path
        // A listener with no backlog, its one place taken: a connect to it waits for room.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let size = socklen_t(MemoryLayout<sockaddr_un>.size)
        let filler = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        defer { close(filler) }
        let listening = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, size) == 0 && listen(listener, 0) == 0 && connect(filler, $0, size) == 0
            }
        }
        try #require(listening)
        let poll = try RunningProcess(Binaries.gpsfix, ["poll", "--socket", path])
        defer { poll.stop() }
        #expect(poll.wait(timeout: 60) == 1, "gpsfix poll still waiting")
        #expect(poll.errorText.contains("not accepted within 10 seconds"), "\(poll.errorText)")
    }
}

@Suite("gpsfixd under load", .serialized)
struct LoadTests {
    @Test("a burst of 1000 connects is absorbed, and 1000 watchers all receive the cycles (--max-clients 1500)")
    func thousandWatchers() throws {
        let daemon = try DaemonUnderTest(speed: 4, extra: ["--max-clients", "1500"])
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(limit.rlim_max, 4096)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        // Over TCP, the way in of gpsd's clients (libgps speaks TCP only), the side
        // --max-clients caps.
        let clients = try (0..<1000).map { _ in try LineClient(tcpPort: daemon.tcpPort) }
        for client in clients { client.send(#"?WATCH={"enable":true,"json":true}"# + "\n") }
        var receiving = 0
        // One deadline for all: a thousand clients read in turn at 20 s each would be hours.
        let deadline = Date().addingTimeInterval(120)
        for client in clients {
            let left = max(0.01, deadline.timeIntervalSinceNow)
            if client.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: left) != nil { receiving += 1 }
        }
        #expect(receiving == 1000)
    }

    @Test("a flood through a pseudo-terminal reaches every watcher whole, one reading slowly included: none is cut off")
    func floodWithoutCutOffs() throws {
        // The order of the capture's fixes, which every watcher must see, looping, without a gap.
        let decoded = try run(Binaries.gpsfix, ["decode", Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path])
        let order = decoded.split(whereSeparator: \.isNewline).compactMap { Self.tpvTime(String($0)) }
        let next = Dictionary(zip(order, order.dropFirst() + order.prefix(1)), uniquingKeysWith: { first, _ in first })
        let daemon = try DaemonUnderTest(flood: true, extra: ["--stall-timeout", "5"])
        let watchers = try (0..<6).map { _ in try daemon.client() }
        for watcher in watchers { watcher.send(#"?WATCH={"enable":true,"json":true}"# + "\n") }
        // Five read as fast as they can, one pausing 2 ms after each line (some 400 fixes
        // a second, slower than the flood), each on a thread of its own, for 5 s.
        let times = Locked<[[String]]>(Array(repeating: [], count: watchers.count))
        let group = DispatchGroup()
        for (index, watcher) in watchers.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                let deadline = Date().addingTimeInterval(5)
                var seen: [String] = []
                // While the slow one holds the flood back, the others may wait seconds.
                while Date() < deadline {
                    guard let line = watcher.readLine(timeout: 0.2) else { continue }
                    if let time = Self.tpvTime(line) { seen.append(time) }
                    if index == 0 { usleep(2000) }
                }
                times.withLock { $0[index] = seen }
            }.start()
        }
        group.wait()
        let streams = times.withLock { $0 }
        // The slow one held the flood back: the others are at most its buffers' worth ahead.
        #expect(streams.dropFirst().allSatisfy { $0.count <= streams[0].count + 1000 }, "\(streams.map(\.count))")
        for (index, stream) in streams.enumerated() {
            #expect(stream.count > order.count, "watcher \(index) saw \(stream.count) fixes")
            let gaps = zip(stream, stream.dropFirst()).filter { next[$0] != $1 }
            #expect(gaps.isEmpty, "watcher \(index): \(gaps.count) gaps, the first \(gaps.first.map { "\($0)" } ?? "")")
        }
        // Each is still served: its VERSION comes after whatever it had not read yet.
        for (index, watcher) in watchers.enumerated() {
            watcher.send("?VERSION;\n")
            #expect(watcher.readLines(until: { $0.contains(#""class":"VERSION""#) }, timeout: 20) != nil, "watcher \(index) was cut off")
        }
    }

    static func tpvTime(_ line: String) -> String? {
        guard line.contains(#""class":"TPV""#), let start = line.range(of: #""time":""#)?.upperBound,
            let end = line[start...].firstIndex(of: "\"")
        else { return nil }
        return String(line[start..<end])
    }
}
