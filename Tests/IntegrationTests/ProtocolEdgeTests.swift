import ChildProcesses
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// gpsd's protocol edges, each against the real daemon, as gpsd 3.22 answers them.
@Suite("gpsfixd at gpsd's protocol edges", .serialized)
struct ProtocolEdgeTests {
    /// A client past the banner.
    static func client(of daemon: DaemonUnderTest) throws -> LineClient {
        let client = try daemon.client()
        #expect(client.readLine()?.json?["class"] as? String == "VERSION")
        return client
    }

    @Test("?WATCH; answers DEVICES then WATCH; a WATCH of an unknown device is an ERROR that changes nothing")
    func watchAnswers() throws {
        let daemon = try DaemonUnderTest()
        let client = try Self.client(of: daemon)
        client.send("?WATCH;\n")
        #expect(client.readLine()?.json?["class"] as? String == "DEVICES")
        #expect(client.readLine()?.json?["enable"] as? Bool == false)
        client.send(#"?WATCH={"enable":true,"device":"/dev/nonexist"};"# + "\n")
        let error = try #require(client.readLine()?.json)
        #expect(error["class"] as? String == "ERROR" && error["message"] as? String == "No such device as /dev/nonexist")
        client.send("?WATCH;\n")
        #expect(client.readLine()?.json?["class"] as? String == "DEVICES")
        let watch = try #require(client.readLine()?.json)
        #expect(watch["class"] as? String == "WATCH" && watch["enable"] as? Bool == false && watch["device"] == nil)
    }

    @Test("a WATCH resets pps and the other options it does not name, keeping json, nmea and raw")
    func watchResets() throws {
        let daemon = try DaemonUnderTest()
        let client = try Self.client(of: daemon)
        client.send(#"?WATCH={"enable":true,"json":true,"pps":true,"timing":true};"# + "\n")
        let first = try #require(client.readLines(until: { $0.contains(#""class":"WATCH""#) })?.last?.json)
        #expect(first["pps"] as? Bool == true && first["timing"] as? Bool == true)
        client.send(#"?WATCH={"enable":true};"# + "\n")
        let second = try #require(client.readLines(until: { $0.contains(#""class":"WATCH""#) })?.last?.json)
        #expect(second["pps"] as? Bool == false && second["timing"] as? Bool == false && second["json"] as? Bool == true)
    }

    @Test("a request line over the limit is refused even when its newline comes in the same write, and the next is answered")
    func longLineInOneWrite() throws {
        let daemon = try DaemonUnderTest()
        let client = try Self.client(of: daemon)
        client.send(String(repeating: "?", count: 2000) + "\n?VERSION;\n")
        let error = try #require(client.readLine()?.json)
        #expect(error["class"] as? String == "ERROR" && (error["message"] as? String)?.contains("longer than") == true)
        #expect(client.readLine()?.json?["class"] as? String == "VERSION")
    }

    @Test("DEVICE reports go to JSON watchers of the device, never into an nmea or raw stream")
    func deviceReportsOnlyToJSONWatchers() throws {
        let daemon = try DaemonUnderTest()
        let json = try Self.client(of: daemon), nmea = try Self.client(of: daemon), raw = try Self.client(of: daemon)
        json.send(#"?WATCH={"enable":true,"json":true};"# + "\n")
        nmea.send(#"?WATCH={"enable":true,"nmea":true};"# + "\n")
        raw.send(#"?WATCH={"enable":true,"raw":2};"# + "\n")
        for client in [json, nmea, raw] { _ = client.readLines(until: { $0.contains(#""class":"WATCH""#) }) }
        #expect(json.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 20) != nil)
        // The device goes away: its replay stops, the pty hangs up.
        daemon.replay.stop()
        let news = json.readLines(until: { $0.contains(#""class":"DEVICE""#) && $0.contains(#""online":false"#) }, timeout: 20)
        #expect(news != nil, "the JSON watcher was not told the device went")
        var nmeaLines: [String] = []
        while let line = nmea.readLine(timeout: 1) { nmeaLines.append(line) }
        #expect(!nmeaLines.isEmpty && nmeaLines.allSatisfy { $0.hasPrefix("$") || $0.hasPrefix("!") })
        var rawText = ""
        while let line = raw.readLine(timeout: 1) { rawText += line }
        #expect(!rawText.isEmpty && !rawText.contains(#"{"class":"DEVICE""#))
    }
}

/// Sockets, start-up, signals and inputs: each a defect gpsfixd had.
@Suite("gpsfixd's start-up, signals and inputs", .serialized)
struct StartupTests {
    @Test("a Unix socket from the service manager stands in for the default one, which is neither bound nor needed")
    func passedSocketReplacesDefault() throws {
        let folder = try makeTemporaryFolder("sa")
        defer { try? FileManager.default.removeItem(at: folder) }
        let passed = folder.appendingPathComponent("other.sock").path
        let defaultExisted = FileManager.default.fileExists(atPath: "/run/gpsfixd/gpsfixd.sock")
        let activator = try RunningProcess("/usr/bin/systemd-socket-activate", ["-l", passed, Binaries.gpsfixd, "--demo"])
        defer { activator.stop() }
        let client = try #require(LineClient.connect(unixPath: passed, within: 20), "nothing listens on the passed socket")
        #expect(client.readLine(timeout: 20)?.json?["class"] as? String == "VERSION")
        #expect(activator.wait(timeout: 1) == nil, "the daemon ended: \(activator.errorText.suffix(300))")
        if !defaultExisted { #expect(!FileManager.default.fileExists(atPath: "/run/gpsfixd/gpsfixd.sock")) }
    }

    @Test("a TCP port that cannot be bound ends the daemon cleanly: its Unix socket removed, a non-zero exit, the address and who holds it named")
    func failedBindCleansUp() throws {
        let folder = try makeTemporaryFolder("bind")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socketPath = folder.appendingPathComponent("s.sock").path
        // Another program holds the port.
        let (holder, port) = boundLoopbackSocket(type: SOCK_STREAM)
        defer { close(holder) }
        listen(holder, 1)
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socketPath, "--tcp", "127.0.0.1:\(port)"])
        let status = daemon.wait(timeout: 20)
        #expect(status != nil && status != 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath), "the socket file was left behind")
        #expect(daemon.errorText.contains("cannot start"))
        // The holder is this test: its pid, as /proc tells.
        #expect(daemon.errorText.contains("cannot listen on 127.0.0.1:\(port): the address is in use by "), "\(daemon.errorText)")
        #expect(daemon.errorText.contains("(pid \(getpid()))"), "\(daemon.errorText)")
    }

    @Test("a socket path that cannot be bound ends the daemon naming the path and why, not the system call")
    func unboundSocketNamed() throws {
        let folder = try makeTemporaryFolder("nopath")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socketPath = folder.appendingPathComponent("missing/s.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socketPath])
        let status = daemon.wait(timeout: 20)
        #expect(status != nil && status != 0)
        #expect(daemon.errorText.contains("cannot listen on \(socketPath): No such file or directory (its folder does not exist"), "\(daemon.errorText.suffix(400))")
    }

    @Test("a run by hand without the package's /run/gpsfixd, where it cannot be made: the default socket left out, said, and TCP serves",
          .enabled(if: getuid() == 0, "mounts a read-only /run in a mount namespace of its own, which takes root"))
    func defaultSocketFolderUnwritable() throws {
        let port = freePort()
        // /run read-only in a private mount namespace: the host's is untouched.
        let daemon = try RunningProcess("/usr/bin/unshare", [
            "--mount", "--propagation", "private", "/bin/sh", "-c", "mount -t tmpfs -o ro,size=64k tmpfs /run && exec \"$0\" --demo --tcp 127.0.0.1:\"$1\"",
            Binaries.gpsfixd, "\(port)",
        ])
        defer { daemon.stop() }
        let client = try #require(LineClient.connect(tcpPort: port, within: 20), "no TCP: \(daemon.errorText.suffix(400))")
        #expect(client.readLine(timeout: 20)?.json?["class"] as? String == "VERSION")
        #expect(daemon.errorText.contains("no Unix socket: the default's folder /run/gpsfixd cannot be made or written"), "\(daemon.errorText.suffix(400))")
    }

    @Test("SIGHUP ends the daemon as cleanly as SIGTERM: exit 0, its socket removed")
    func hangUpIsClean() throws {
        let folder = try makeTemporaryFolder("hup")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socketPath = folder.appendingPathComponent("s.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socketPath])
        _ = try #require(LineClient.connect(unixPath: socketPath, within: 20))
        kill(daemon.pid, SIGHUP)
        #expect(daemon.wait(timeout: 20) == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    /// Root's daemon serving on a socket (mode 0660, root's) in a folder anyone may write.
    static func rootsDaemon(_ label: String) throws -> (folder: URL, socket: String, daemon: RunningProcess) {
        let folder = try makeTemporaryFolder(label)
        chmod(folder.path, 0o777)
        let socket = folder.appendingPathComponent("root.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--demo", "--socket", socket])
        _ = try #require(LineClient.connect(unixPath: socket, within: 20))
        return (folder, socket, daemon)
    }

    @Test("a live socket that refuses this user (EACCES) is not taken for a stale one, and is left in place",
          .enabled(if: getuid() == 0, "runs a second daemon as nobody, which takes root"))
    func deniedSocketIsNotStale() throws {
        let (folder, socketPath, owner) = try Self.rootsDaemon("eacces")
        defer { try? FileManager.default.removeItem(at: folder) }
        defer { owner.stop() }
        // Another user, whom the socket's mode 0660 denies, starts a daemon on the same path.
        let other = try RunningProcess("/usr/sbin/runuser", ["-u", "nobody", "--", Binaries.gpsfixd, "--demo", "--socket", socketPath])
        let status = other.wait(timeout: 20)
        #expect(status != nil && status != 0)
        #expect(other.errorText.contains("may be in use"), "\(other.errorText.suffix(300))")
        #expect(FileManager.default.fileExists(atPath: socketPath))
        #expect(LineClient.connect(unixPath: socketPath, within: 2) != nil)
    }

    @Test("a stale socket of another user's (root's run by hand), which refuses this user, is replaced: the daemon serves",
          .enabled(if: getuid() == 0, "runs the daemon as nobody beside root's socket, which takes root"))
    func deniedStaleSocketReplaced() throws {
        let (folder, socketPath, crashed) = try Self.rootsDaemon("stale-eacces")
        defer { try? FileManager.default.removeItem(at: folder) }
        // Killed: its socket file (0660, root's) stays, and nothing listens on it.
        crashed.stop(SIGKILL)
        #expect(FileManager.default.fileExists(atPath: socketPath))
        let service = try RunningProcess("/usr/sbin/runuser", ["-u", "nobody", "--", Binaries.gpsfixd, "--demo", "--socket", socketPath])
        defer { service.stop() }
        try waitUntil("the socket replaced: nobody's now", within: 20) {
            var status = stat()
            return stat(socketPath, &status) == 0 && status.st_uid != 0 || !service.isRunning
        }
        #expect(service.isRunning, "\(service.errorText.suffix(300))")
    }

    @Test("inputs refused with a clear error instead of a trap, a spin or a silent default",
          arguments: [
            (["gpsfix", "decode", "--max-length", "5", "/dev/null"], "--max-length 5 is out of range"),
            (["gpsfixd", "/dev/ttyS0", "/dev/ttyS0"], "/dev/ttyS0 is named twice"),
            (["gpsfixd", "/dev/null", "/dev/./null"], "/dev/null and /dev/./null are one device, /dev/null"),
            (["gpsfixd", "--demo", "--http-cors", "https://a.example\r\nSet-Cookie: x=y"], "'https://a.example?Set-Cookie: x=y' is not an origin"),
            (["gpsfixd", "--demo", "--tcp", "127.evil.example:2947"], "is not a loopback address"),
            (["gpsfixd", "--demo", "--mqtt", "mqtt://fleet:hunter2@host:99999"], "mqtt://fleet:***@host:99999"),
            // After the keeper changed the receiver's speed, a restart would open the port
            // at --speed, where the receiver no longer answers.
            (["gpsfixd", "/dev/ttyS0", "--speed", "38400", "--receiver", "baud=115200;save=true"], "--speed 38400 differs from"),
            (["gpsfixd", "/dev/ttyS0", "--receiver", "rate=1", "--receiver", "device=/dev/ttyS0;rate=2"], "two --receiver tables for /dev/ttyS0"),
            (["gpsfixd", "/dev/ttyS0", "--receiver", "rate=0.2"], "not within --silence-timeout 3"),
            // OsmAnd's protocol has no login: a user and password would be dropped, and a
            // server behind one answer 401 for ever.
            (["gpsfixd", "--demo", "--traccar", "http://van:hunter2@127.0.0.1:5055/", "--traccar-id", "7"], "takes no user or password"),
          ])
    func refusedInputs(_ command: [String], _ message: String) throws {
        let binary = command[0] == "gpsfix" ? Binaries.gpsfix : Binaries.gpsfixd
        let process = try RunningProcess(binary, Array(command.dropFirst()))
        let status = process.wait(timeout: 20)
        #expect(status != nil && status != 0 && status! < 128, "exit \(String(describing: status))")
        #expect(process.errorText.contains(message), "\(process.errorText.suffix(300))")
        #expect(!process.errorText.contains("hunter2"))
    }

    @Test("an empty MQTT password file is an error, not an empty password; so is one with no line end for a megabyte")
    func emptyPasswordFile() throws {
        let folder = try makeTemporaryFolder("pw")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("password")
        try Data().write(to: file)
        let process = try RunningProcess(Binaries.gpsfixd, ["--demo", "--mqtt", "mqtt://fleet@127.0.0.1", "--mqtt-password-file", file.path])
        #expect(process.wait(timeout: 20) != 0)
        #expect(process.errorText.contains("is empty"), "\(process.errorText.suffix(300))")

        // A file without a line end, longer than any password: refused, not read whole.
        try Data(repeating: UInt8(ascii: "x"), count: 1 << 20).write(to: file)
        let long = try RunningProcess(Binaries.gpsfixd, ["--demo", "--mqtt", "mqtt://fleet@127.0.0.1", "--mqtt-password-file", file.path])
        #expect(long.wait(timeout: 20) != 0)
        #expect(long.errorText.contains("its first line is longer than 4096 bytes"), "\(long.errorText.suffix(300))")
    }

    @Test("gpsfix replay --loop of a log without sentences ends with an error instead of spinning")
    func replayOfNothing() throws {
        let folder = try makeTemporaryFolder("empty")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("empty.nmea")
        try Data("# only a comment\n".utf8).write(to: log)
        let process = try RunningProcess(Binaries.gpsfix, ["replay", log.path, "--loop"])
        let status = process.wait(timeout: 20)
        if status == nil { process.stop(SIGKILL) }
        #expect(status != nil && status != 0)
        #expect(process.errorText.contains("holds no NMEA sentence"))
    }

    @Test("gpsfix replay refuses, saying why, what it cannot hold in memory: a log past its limit (sparse here), or a device")
    func replayOfTooMuch() throws {
        let folder = try makeTemporaryFolder("huge")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("huge.nmea").path
        let file = open(log, O_WRONLY | O_CREAT, 0o644)
        try #require(file >= 0 && ftruncate(file, 1 << 40) == 0)
        close(file)
        for (input, reason) in [(log, "is over 256 MiB"), ("/dev/zero", "is not a file")] {
            let process = try RunningProcess(Binaries.gpsfix, ["replay", input])
            let status = process.wait(timeout: 20)
            if status == nil { process.stop(SIGKILL) }
            #expect(status != nil && status != 0, "\(input)")
            #expect(process.errorText.contains(reason), "\(input): \(process.errorText)")
        }
    }

    @Test("gpsfix replay --link replaces a link, and nothing else: a file at the path is left as it is")
    func replayLinkOverFile() throws {
        let folder = try makeTemporaryFolder("link")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("gps0").path
        try "precious\n".write(toFile: path, atomically: true, encoding: .utf8)
        let process = try RunningProcess(Binaries.gpsfix, ["replay", Binaries.fixtures.appendingPathComponent("gpsd/cat-ms352.log").path, "--link", path])
        let status = process.wait(timeout: 20)
        if status == nil { process.stop(SIGKILL) }
        #expect(status != nil && status != 0)
        #expect(process.errorText.contains("exists and is not a link"), "\(process.errorText)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious\n")
    }

    @Test("gpsfix replay --written to a full disk ends with an error naming the loss, not a success")
    func replayWrittenToFullDisk() throws {
        let folder = try makeTemporaryFolder("written")
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("gps0").path
        let log = Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path
        // /dev/full refuses every write with ENOSPC, as a full disk does.
        let process = try RunningProcess(Binaries.gpsfix, ["replay", log, "--link", link, "--written", "/dev/full", "--loop"])
        defer { process.stop(SIGKILL) }
        try waitUntil("the link") { FileManager.default.fileExists(atPath: link) }
        // A reader writing to the receiver, as the daemon writes corrections.
        let reader = open(link, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let correction: [UInt8] = [0xD3, 0x00, 0x13] + Array("correction".utf8)
        #expect(write(reader, correction, correction.count) == correction.count)
        // The copy polls the terminal every tenth of a second: a second is ten of its turns.
        usleep(1_000_000)
        kill(process.pid, SIGINT)
        let status = process.wait(timeout: 20)
        #expect(status != nil && status != 0, "\(process.errorText.suffix(300))")
        #expect(process.errorText.contains("--written /dev/full: bytes were lost: No space left on device"), "\(process.errorText.suffix(300))")
    }

    @Test("gpsfix replay stopped by a signal removes its link: left, it would lead to the next terminal given the number", arguments: [SIGINT, SIGTERM])
    func replayStoppedRemovesLink(_ signal: Int32) throws {
        let folder = try makeTemporaryFolder("link")
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("gps0").path
        let log = Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path
        let process = try RunningProcess(Binaries.gpsfix, ["replay", log, "--link", link, "--loop"])
        defer { process.stop(SIGKILL) }
        try waitUntil("the link") { FileManager.default.fileExists(atPath: link) }
        kill(process.pid, signal)
        #expect(process.wait(timeout: 10) == 0, "\(process.errorText)")
        var status = stat()
        #expect(lstat(link, &status) != 0, "the link is gone")
    }

    @Test("gpsfix replay whose standard output is gone (its pipe's reader ended) ends with an error, its link removed")
    func replayOutputGoneRemovesLink() throws {
        let folder = try makeTemporaryFolder("link")
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("gps0").path
        let errors = folder.appendingPathComponent("errors").path
        let log = Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        // The reader has gone before the replay writes its terminal's path.
        close(ends[0])
        let pid = try ChildProcess.spawn(Binaries.gpsfix, ["replay", log, "--link", link, "--loop"], output: .descriptor(ends[1]), error: .file(errors))
        close(ends[1])
        var status: Int32 = 0
        var reaped = false
        defer {
            if !reaped {
                kill(pid, SIGKILL)
                waitpid(pid, nil, 0)
            }
        }
        try waitUntil("the replay to end", within: 20) {
            reaped = waitpid(pid, &status, WNOHANG) == pid
            return reaped
        }
        let errorText = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(status & 0x7F == 0, "ended by signal \(status & 0x7F), its link left")
        #expect((status >> 8) & 0xFF != 0, "a replay whose output was lost is not a success")
        #expect(errorText.contains("cannot write to standard output"), "\(errorText)")
        var linkStatus = stat()
        #expect(lstat(link, &linkStatus) != 0, "the link is gone")
    }

    @Test("a file: device read to its end is offline and its fix decayed")
    func fileDeviceEnds() throws {
        let folder = try makeTemporaryFolder("file")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socketPath = folder.appendingPathComponent("s.sock").path
        let log = Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path
        // Long enough to connect first: the log waits for the daemon's reading, which a
        // watcher that has not connected yet does not hold back, so it is read at once.
        let daemon = try RunningProcess(Binaries.gpsfixd, ["file:" + log, "--socket", socketPath, "--log-level", "info"])
        defer { daemon.stop() }
        let client = try #require(LineClient.connect(unixPath: socketPath, within: 20))
        client.send(#"?WATCH={"enable":true,"json":true};"# + "\n")
        client.send("?DEVICES;\n")
        // Said in the DEVICES answer when the log was already read, else in a DEVICE report.
        let offline = client.readLines(until: { line in
            // Offline after its data was seen: before its first sentence it is offline too.
            line.contains(#""class":"DEVICE"#) && line.contains(#""flags":1"#) && line.contains(#""online":false"#)
        }, timeout: 20)
        #expect(offline != nil, "the device stayed online after its data ended")
        client.send("?POLL;\n")
        let poll = try #require(client.readLines(until: { $0.contains(#""class":"POLL""#) }, timeout: 10)?.last)
        #expect(poll.contains(#""mode":1"#), "\(poll.prefix(300))")
    }

    @Test("a file: device that names a folder, or whose read fails (EIO, as from a failing disk), is reported with the system's reason, not taken for a log that ended",
          arguments: [false, true])
    func fileDeviceFails(readFails: Bool) throws {
        let folder = try makeTemporaryFolder("file")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socketPath = folder.appendingPathComponent("s.sock").path
        // The daemon's own memory at address 0, never mapped: a file that opens, and whose
        // first read fails with EIO, as a log on a failing disk or a pulled stick does.
        let (device, reason) = readFails ? ("file:/proc/self/mem", "Input/output error") : ("file:" + folder.path, "Is a directory")
        let daemon = try RunningProcess(Binaries.gpsfixd, [device, "--socket", socketPath, "--log-level", "info"])
        defer { daemon.stop() }
        try waitUntil("the reason logged", within: 20) { daemon.errorText.contains(reason) }
        #expect(!daemon.errorText.contains("data ended"), "\(daemon.errorText.suffix(1000))")
    }
}
