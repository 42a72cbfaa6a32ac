import Foundation
import GPSFixDevices
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the daemon and the tool say about devices and options, seen from outside: a device
/// that falls silent and resumes, DEVICE through gpsd's own client requests, raw sentences
/// to gpspipe, options refused with a reason, the tool's errors.
@Suite("Device state, options and tool errors", .serialized)
struct DeviceStateTests {
    static let cycle = Array(
        ("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n"
            + "$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A*61\r\n").utf8)

    @Test("a device silent past the timeout is reported offline, and online again as soon as it resumes")
    func silentDeviceResumes() async throws {
        let folder = try makeTemporaryFolder("resume")
        defer { try? FileManager.default.removeItem(at: folder) }
        let terminal = try PseudoTerminal()
        let socket = folder.appendingPathComponent("s.sock").path
        let daemon = try RunningProcess(
            Binaries.gpsfixd, [terminal.path, "--speed", "9600", "--socket", socket, "--silence-timeout", "0.5", "--log-level", "warning"])
        defer { daemon.stop() }
        let client = try #require(LineClient.connect(unixPath: socket))
        _ = client.readLine()
        client.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        try await terminal.write(Self.cycle)
        let online = #/"class":"DEVICE".*"online":true/#
        let offline = #/"class":"DEVICE".*"online":false/#
        #expect(client.readLines(until: { $0.contains(online) }, timeout: 10) != nil, "no activation")
        #expect(client.readLines(until: { $0.contains(offline) }, timeout: 10) != nil, "no silence")
        try await terminal.write(Self.cycle)
        #expect(client.readLines(until: { $0.contains(online) }, timeout: 10) != nil, "not announced on resuming")
        client.send("?DEVICES;\n")
        let devices = client.readLines(until: { $0.contains(#""class":"DEVICES""#) }, timeout: 10)?.last
        #expect(devices?.contains(#""online":true"#) == true, "\(devices ?? "no DEVICES")")
    }

    @Test("?DEVICE= names a device: its driver and the speed autobaud found; an unknown path is an ERROR")
    func deviceRequest() throws {
        let daemon = try DaemonUnderTest()
        let client = try daemon.client()
        _ = client.readLines(until: { _ in false }, timeout: 2)  // let it activate
        let path = daemon.folder.appendingPathComponent("gps0").path
        client.send(#"?DEVICE={"path":"\#(path)"};"# + "\n")
        let device = try #require(client.readLine()?.json)
        #expect(device["class"] as? String == "DEVICE" && device["path"] as? String == path)
        #expect(device["driver"] as? String == "NMEA0183")
        #expect(device["bps"] as? Int == 9600 && device["parity"] as? String == "N" && device["stopbits"] as? Int == 1)
        client.send(#"?DEVICE={"path":"/dev/nonexistent"};"# + "\n")
        #expect(client.readLine()?.contains(#""class":"ERROR","message":"Can't open /dev/nonexistent."#) == true)
    }

    @Test("gpspipe -r prints the receiver's sentences as sent")
    func gpspipeRaw() throws {
        let daemon = try DaemonUnderTest()
        let output = try run("/usr/bin/gpspipe", ["-r", "-n", "30", "127.0.0.1:\(daemon.tcpPort)"], timeout: 30)
        let sentences = output.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$GP") }
        #expect(sentences.count >= 10, "\(output.prefix(500))")
        let fixture = try String(contentsOf: Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log"), encoding: .utf8)
        #expect(sentences.allSatisfy { fixture.contains($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
    }

    @Test("gpsmon, run in a terminal under tmux, shows the receiver's sentences in its packet window")
    func gpsmon() throws {
        let daemon = try DaemonUnderTest()
        // gpsmon asks ?WATCH={"raw":2,"pps":true} without "enable": it must be enabled.
        let screen = try terminalScreen(of: "gpsmon 127.0.0.1:\(daemon.tcpPort)", in: daemon.folder) {
            $0.contains("$GPGGA") && $0.contains("$GPRMC")
        }
        #expect(screen.contains("$GPGGA") && screen.contains("$GPRMC"), "\(screen)")
        #expect(screen.contains("NMEA0183"), "gpsmon names the driver from DEVICE: \(screen)")
    }

    @Test("the demo: a watcher's first TPV is already a 3D fix, stamped with today's time, and times only increase")
    func demoStartsFixed() throws {
        let folder = try makeTemporaryFolder("demo")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("s.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socket, "--log-level", "warning"])
        defer { daemon.stop() }
        let client = try #require(LineClient.connect(unixPath: socket))
        _ = client.readLine()
        client.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        var tpvs: [[String: Any]] = []
        // SKY and DEVICE lines keep coming if the TPVs stop: one deadline for the four.
        let deadline = Date().addingTimeInterval(30)
        while tpvs.count < 4, let line = client.readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            if let object = line.json, object["class"] as? String == "TPV" { tpvs.append(object) }
        }
        try #require(tpvs.count == 4)
        #expect(tpvs.allSatisfy { $0["mode"] as? Int == 3 }, "\(tpvs.map { $0["mode"] ?? "-" })")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = tpvs.compactMap { ($0["time"] as? String).flatMap(formatter.date(from:)) }
        #expect(times.count == 4 && zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(times)")
        #expect(abs((times.last ?? .distantPast).timeIntervalSinceNow) < 5, "demo time \(times.last.map(String.init(describing:)) ?? "none")")
    }

    @Test("out-of-range timing options are refused with the range, before anything starts",
          arguments: [["--silence-timeout", "0"], ["--silence-timeout", "1e300"], ["--status-interval", "0"]])
    func timingOptionsValidated(option: [String]) throws {
        let process = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", "/nonexistent/s.sock"] + option)
        let status = process.wait(timeout: 10)
        #expect(status != nil && status != 0)
        #expect(process.errorText.contains("\(option[0]) ") && process.errorText.contains("out of range"), "\(process.errorText)")
    }

    @Test("gpsfix record of a device that is not there fails saying why, leaving a log already there as it was, and making none")
    func recordMissingDevice() throws {
        let folder = try makeTemporaryFolder("record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let kept = folder.appendingPathComponent("kept.log").path, made = folder.appendingPathComponent("log").path
        try "$GPGGA,last week's recording\n".write(toFile: kept, atomically: true, encoding: .utf8)
        // A link to a log not made yet: the log is made there, as it would be written.
        let link = folder.appendingPathComponent("current.log").path, today = folder.appendingPathComponent("today.log").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: today)
        for output in [made, kept, link] {
            let process = try RunningProcess(Binaries.gpsfix, ["record", "/dev/ttyGPSFIX-none", "-o", output, "--duration", "2"])
            let status = process.wait(timeout: 20)
            #expect(status != nil && status != 0)
            #expect(process.errorText.contains("/dev/ttyGPSFIX-none does not exist"), "\(process.errorText)")
        }
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "$GPGGA,last week's recording\n")
        #expect(!FileManager.default.fileExists(atPath: made) && !FileManager.default.fileExists(atPath: today))
    }

    @Test("gpsfix record and replay say why a log, a link or a copy cannot be made or read, with status 1 and no usage text: the command line was right")
    func toolFileErrors() throws {
        let folder = try makeTemporaryFolder("files")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("capture.log").path
        try "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n".write(toFile: log, atomically: true, encoding: .utf8)
        let nowhere = folder.appendingPathComponent("missing/x").path
        for (arguments, reason) in [
            (["record", "/dev/ttyGPSFIX-none", "-o", nowhere, "--duration", "1"], "cannot write \(nowhere): No such file or directory"),
            (["replay", log, "--link", nowhere], "--link \(nowhere) cannot be made: No such file or directory"),
            (["replay", log, "--written", nowhere], "--written \(nowhere) cannot be opened: No such file or directory"),
            (["replay", folder.path], "\(folder.path) is not a file"),
        ] {
            let tool = try RunningProcess(Binaries.gpsfix, arguments)
            #expect(tool.wait(timeout: 10) == 1, "\(arguments): \(tool.errorText)")
            #expect(tool.errorText.contains(reason), "\(arguments): \(tool.errorText)")
            #expect(!tool.errorText.contains("Usage:"), "\(arguments): \(tool.errorText)")
        }
    }

    @Test("gpsfix watch shows a server's texts without their control characters: no escape of a gpsd's reaches the terminal")
    func watchShowsPrintable() throws {
        let lines = #"{"class":"DEVICE","path":"/dev/\u001b[2J","online":true}"# + "\r\n"
            + #"{"class":"TPV","device":"/dev/x","mode":3,"time":"\u001b]0;owned\u0007","lat":1.0,"lon":2.0}"#
        let gpsd = try FakeGPSD(with: lines)
        // On a terminal (script's), where the compact view is shown.
        let command = "\(Binaries.gpsfix) watch --tcp 127.0.0.1:\(gpsd.port) --count 1"
        let watch = try RunningProcess("/usr/bin/script", ["--quiet", "--return", "--command", command, "/dev/null"])
        let status = watch.wait(timeout: 20)
        if status == nil { watch.stop() }
        #expect(status == 0, "\(watch.errorText)")
        #expect(watch.outputText.contains("device /dev/?[2J") && watch.outputText.contains("?]0;owned?"), "\(watch.outputText.debugDescription)")
        #expect(!watch.outputText.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
    }

    @Test("gpsfix watch and poll fail, saying why, when the daemon leaves early, never speaks or never answers the connection, and when standard output is full")
    func toolEndsAreErrors() throws {
        // A daemon that sends one fix and closes, and a socket nothing serves.
        let (early, earlyPort) = try LoopbackListener.open()
        let (silent, silentPort) = try LoopbackListener.open()
        defer {
            for listener in [early, silent] {
                shutdown(listener, Int32(SHUT_RDWR))
                close(listener)
            }
        }
        Thread {
            let client = accept(early, nil, nil)
            guard client >= 0 else { return }
            let lines = #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\r\n"
                + #"{"class":"TPV","device":"/dev/x","mode":3,"lat":1.0,"lon":2.0}"# + "\r\n"
            _ = Array(lines.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The ?WATCH read before closing, so that the close is an end, not a reset.
            var request = [UInt8](repeating: 0, count: 1024)
            _ = request.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            close(client)
        }.start()
        let cut = try RunningProcess(Binaries.gpsfix, ["watch", "--tcp", "127.0.0.1:\(earlyPort)", "--count", "5", "--json"])
        #expect(cut.wait(timeout: 20) == 1, "\(cut.errorText)")
        #expect(cut.errorText.contains("the daemon closed the connection after 1 of 5 fixes"), "\(cut.errorText)")
        let mute = try RunningProcess(Binaries.gpsfix, ["watch", "--tcp", "127.0.0.1:\(silentPort)"])
        let muteStatus = mute.wait(timeout: 30)
        if muteStatus == nil { mute.stop() }
        #expect(muteStatus == 1 && mute.errorText.contains("no answer from the daemon within 10 seconds"), "\(mute.errorText)")

        // A port whose connections wait unanswered: its backlog of one is taken, so the
        // kernel drops the next SYNs, as a firewall that drops them does.
        let (crowded, crowdedPort) = try LoopbackListener.open()
        defer { close(crowded) }
        listen(crowded, 0)
        let first = try LineClient(tcpPort: crowdedPort)
        let stuck = try RunningProcess(Binaries.gpsfix, ["poll", "--tcp", "127.0.0.1:\(crowdedPort)"])
        let stuckStatus = stuck.wait(timeout: 40)
        if stuckStatus == nil { stuck.stop() }
        #expect(stuckStatus == 1 && stuck.errorText.contains("no answer within 10 seconds"), "\(stuck.errorText)")
        withExtendedLifetime(first) {}

        let daemon = try DaemonUnderTest()
        let full = try RunningProcess("/bin/sh", ["-c", "exec \"$0\" poll --tcp 127.0.0.1:\(daemon.tcpPort) > /dev/full", Binaries.gpsfix])
        #expect(full.wait(timeout: 20) == 1, "\(full.errorText)")
        #expect(full.errorText.contains("cannot write to standard output: No space left on device"), "\(full.errorText)")
    }

    @Test("gpsfix poll reaches the daemon by host name over TCP, and says so when nothing listens")
    func pollByHostName() throws {
        let daemon = try DaemonUnderTest()
        let poll = try run(Binaries.gpsfix, ["poll", "--tcp", "localhost:\(daemon.tcpPort)"], timeout: 10)
        #expect(poll.json?["class"] as? String == "POLL", "\(poll)")
        let refused = try RunningProcess(Binaries.gpsfix, ["poll", "--tcp", "localhost:\(freePort())"])
        #expect(refused.wait(timeout: 10) != 0)
        #expect(refused.errorText.contains("cannot connect to localhost:"), "\(refused.errorText)")
    }

    @Test("the tool refuses absurd durations, timeouts and speeds with a reason, not a crash")
    func absurdNumbers() throws {
        for (arguments, reason) in [
            (["record", "/dev/ttyGPSFIX-none", "-o", "/dev/null", "--duration", "nan"], "--duration nan: give"),
            (["ntrip", "sourcetable", "ntrip://127.0.0.1:9/", "--timeout", "inf"], "--timeout inf: give"),
            (["replay", "/dev/null", "--speed", "1e-300"], "--speed 1e-300: give"),
        ] {
            let tool = try RunningProcess(Binaries.gpsfix, arguments)
            #expect(tool.wait(timeout: 10) == 64, "\(arguments): \(tool.errorText)")
            #expect(tool.errorText.contains(reason), "\(arguments): \(tool.errorText)")
        }
    }

    @Test("gpsfix poll gives up on a peer that sends megabytes without a line end, and one that never answers")
    func pollBounded() throws {
        let (listener, port) = try LoopbackListener.open()
        defer { close(listener) }
        let babbler = try RunningProcess(Binaries.gpsfix, ["poll", "--tcp", "127.0.0.1:\(port)"])
        let peer = LoopbackListener.accept(listener)
        try #require(peer >= 0, "the tool did not connect: \(babbler.errorText)")
        defer { close(peer) }
        var patience = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(peer, SOL_SOCKET, SO_SNDTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 16)
        // Until the tool stops reading (the socket closed, or 2 s without room): 4 MiB at most.
        for _ in 0..<64 {
            guard send(peer, chunk, chunk.count, Int32(MSG_NOSIGNAL)) == chunk.count else { break }
        }
        #expect(babbler.wait(timeout: 10) == 1)
        #expect(babbler.errorText.contains("more than 1 MiB without a line end"), "\(babbler.errorText)")

        let waiting = try RunningProcess(Binaries.gpsfix, ["poll", "--tcp", "127.0.0.1:\(port)"])
        let silent = LoopbackListener.accept(listener)
        try #require(silent >= 0, "the tool did not connect: \(waiting.errorText)")
        defer { close(silent) }
        #expect(waiting.wait(timeout: 20) == 1)
        #expect(waiting.errorText.contains("no answer to ?POLL within 10 seconds"), "\(waiting.errorText)")
    }

    @Test("gpsfix watch --tcp keeps its connection alive with TCP keepalive, so a daemon's host that vanishes while its receiver is silent is found gone")
    func watchKeepsAlive() throws {
        let (listener, port) = try LoopbackListener.open()
        defer { close(listener) }
        let watch = try RunningProcess(Binaries.gpsfix, ["watch", "--tcp", "127.0.0.1:\(port)"])
        defer { watch.stop() }
        let peer = LoopbackListener.accept(listener)
        try #require(peer >= 0, "the tool did not connect: \(watch.errorText)")
        defer { close(peer) }
        // A silent peer: the tool's socket has keepalive's timer (2) once its request is
        // acknowledged, and none without keepalive.
        try waitUntil("the tool's socket has keepalive's timer", within: 10) { TCPTable.timersOfEstablished(remotePort: port) == [2] }
    }
}
