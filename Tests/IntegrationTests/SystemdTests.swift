import Foundation
import TestSupport
import SystemdSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket standing in for systemd's notification socket.
final class NotificationSocket {
    let path: String
    let descriptor: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-notify-\(UUID().uuidString.prefix(8))").path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The next notification and when it arrived, or `nil` after `timeout` seconds.
    func next(timeout: Double) -> (message: String, at: Date)? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return (String(decoding: buffer[0..<count], as: UTF8.self), Date())
    }
}

@Suite("systemd service", .serialized)
struct SystemdTests {
    static let repository = Binaries.fixtures.deletingLastPathComponent()

    @Test("READY=1, STATUS lines, WATCHDOG=1 at half the interval, STOPPING=1 on SIGTERM")
    func notifications() throws {
        let notifications = try NotificationSocket()
        let folder = try makeTemporaryFolder("sd")
        defer { try? FileManager.default.removeItem(at: folder) }
        let daemon = try RunningProcess(
            Binaries.gpsfixd, ["--demo", "--socket", folder.appendingPathComponent("s").path, "--log-level", "warning"],
            environment: ["NOTIFY_SOCKET": notifications.path, "WATCHDOG_USEC": "2000000"])
        var messages: [(message: String, at: Date)] = []
        let deadline = Date().addingTimeInterval(6)
        while Date() < deadline {
            if let next = notifications.next(timeout: 0.5) { messages.append(next) }
        }
        daemon.stop(SIGTERM)
        while let next = notifications.next(timeout: 1) { messages.append(next) }

        let texts = messages.map(\.message)
        #expect(texts.first == "READY=1")
        #expect(texts.contains { $0.hasPrefix("STATUS=") && $0.contains("clients") })
        let pings = messages.filter { $0.message == "WATCHDOG=1" }.map(\.at)
        #expect(pings.count >= 4)
        let gaps = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }
        // Pings go every second (half of WATCHDOG_USEC); a gap of 2 s is systemd's own limit, past
        // which it would kill the service: what is checked is that, not a speed.
        // A sanitised daemon, many times slower, may miss one responsiveness check (0.5 s): one skipped ping.
        let longest = Binaries.isSanitized ? 3.0 : 2.0
        #expect(gaps.allSatisfy { $0 > 0.5 && $0 < longest }, "watchdog gaps \(gaps)")
        #expect(texts.last == "STOPPING=1")
    }

    @Test("a stop that winds down slowly (a broker's connect hanging) says STOPPING=1 at once: the watchdog never lapses before it")
    func stoppingBeforeWindingDown() throws {
        let notifications = try NotificationSocket()
        let folder = try makeTemporaryFolder("sd-stop")
        defer { try? FileManager.default.removeItem(at: folder) }
        // MQTT to a broker whose SYNs go unanswered: its stop waits for the connect a while.
        let broker = try UnansweringPort()
        let daemon = try RunningProcess(
            Binaries.gpsfixd,
            ["--demo", "--socket", folder.appendingPathComponent("s").path, "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--log-level", "warning"],
            environment: ["NOTIFY_SOCKET": notifications.path, "WATCHDOG_USEC": "2000000"])
        defer { daemon.stop() }
        var messages: [(message: String, at: Date)] = []
        let pinging = Date().addingTimeInterval(20)
        while messages.filter({ $0.message == "WATCHDOG=1" }).count < 2, Date() < pinging {
            if let next = notifications.next(timeout: 0.5) { messages.append(next) }
        }
        // SIGINT: a stop systemd did not ask for, so its watchdog still runs.
        kill(daemon.pid, SIGINT)
        let ending = Date().addingTimeInterval(30)
        while daemon.isRunning || !messages.contains(where: { $0.message == "STOPPING=1" }), Date() < ending {
            if let next = notifications.next(timeout: 0.2) { messages.append(next) }
        }
        let lastPing = try #require(messages.last { $0.message == "WATCHDOG=1" }?.at)
        let stopping = try #require(messages.first { $0.message == "STOPPING=1" }?.at, "\(messages.map(\.message))")
        // systemd's own limit: a service silent for WATCHDOG_USEC after its last ping is killed.
        // A sanitised daemon, many times slower, may miss one responsiveness check, as in the test above.
        let longest = Binaries.isSanitized ? 3.0 : 2.0
        #expect(stopping.timeIntervalSince(lastPing) < longest, "STOPPING=1 \(stopping.timeIntervalSince(lastPing)) s after the last ping")
        #expect(daemon.wait(timeout: 30) != nil, "the daemon ended")
    }

    @Test("under systemd-socket-activate, the passed Unix socket and the command line's TCP both serve: gpspipe reads TPVs")
    func socketActivation() throws {
        let folder = try makeTemporaryFolder("sa")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("activated.sock").path
        let port = freePort()
        // As the installed service runs: the socket unit passes the Unix socket, the
        // options ask for TCP too.
        let activator = try RunningProcess(
            "/usr/bin/systemd-socket-activate",
            ["-l", socket, Binaries.gpsfixd, "--demo", "--socket", socket, "--tcp", "127.0.0.1:\(port)"])
        defer { activator.stop() }
        let connection = try #require(LineClient.connect(unixPath: socket))
        #expect(connection.readLine(timeout: 10)?.contains(#""class":"VERSION""#) == true)
        connection.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        #expect(connection.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 15) != nil)
        let output = try run("/usr/bin/gpspipe", ["-w", "-n", "12", "127.0.0.1:\(port)"], timeout: 30)
        #expect(output.split(whereSeparator: \.isNewline).contains { $0.contains(#""class":"TPV""#) }, "\(output.prefix(400))")
        activator.stop()
        // The passed socket's file is systemd's: gpsfixd leaves it.
        #expect(FileManager.default.fileExists(atPath: socket))
    }

    @Test("the service loads the modules of the serial and PPS groups it allows before it starts, when systemd resolves them: a USB receiver plugged in later is not refused")
    func modulesBeforeDevicePolicy() throws {
        let service = try String(contentsOf: Self.repository.appendingPathComponent("systemd/gpsfixd.service"), encoding: .utf8)
        let values = { (key: String) in
            service.split(separator: "\n").filter { $0.hasPrefix(key + "=") }.flatMap { $0.dropFirst(key.count + 1).split(separator: " ").map(String.init) }
        }
        // ttyUSB (usbserial), ttyACM (cdc_acm) and pps (pps_core): Debian builds them as modules.
        #expect(values("DeviceAllow").contains("char-tty*") && values("DeviceAllow").contains("char-pps"))
        for module in ["usbserial", "cdc_acm", "pps_core"] {
            #expect(values("Wants").contains("modprobe@\(module).service"), "\(module)")
            #expect(values("After").contains("modprobe@\(module).service"), "\(module)")
        }
    }

    @Test("systemd-analyze verify accepts both units")
    func unitsVerify() throws {
        let folder = try makeTemporaryFolder("units")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The unit names the installed path; verify with the binary this build made.
        let service = try String(contentsOf: Self.repository.appendingPathComponent("systemd/gpsfixd.service"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/sbin/gpsfixd", with: Binaries.gpsfixd)
        try service.write(to: folder.appendingPathComponent("gpsfixd.service"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            at: Self.repository.appendingPathComponent("systemd/gpsfixd.socket"), to: folder.appendingPathComponent("gpsfixd.socket"))
        let verify = try RunningProcess(
            "/usr/bin/systemd-analyze",
            ["verify", folder.appendingPathComponent("gpsfixd.service").path, folder.appendingPathComponent("gpsfixd.socket").path],
            environment: ["MANPATH": Self.repository.appendingPathComponent("man").path])
        let status = verify.wait(timeout: 60)
        let errors = verify.errorText
        #expect(status == 0, "\(errors)")
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test("a configuration the daemon refuses ends it with a status the unit does not restart on: no restart every 2 s, for ever")
    func refusedConfigurationNotRestarted() throws {
        let folder = try makeTemporaryFolder("units")
        defer { try? FileManager.default.removeItem(at: folder) }
        let service = try String(contentsOf: Self.repository.appendingPathComponent("systemd/gpsfixd.service"), encoding: .utf8)
        let kept = service.split(separator: "\n").filter { $0.hasPrefix("RestartPreventExitStatus=") }
            .flatMap { $0.dropFirst("RestartPreventExitStatus=".count).split(separator: " ") }.compactMap { Int32($0) }
        let file = folder.appendingPathComponent("gpsfixd.conf").path
        try "devices = [\"/dev/ttyUSB0\"]\nmqtt-intervall = 5\n".write(toFile: file, atomically: true, encoding: .utf8)
        for arguments in [["--config", file], ["--demo", "--time-offset", "9"]] {
            let daemon = try RunningProcess(Binaries.gpsfixd, arguments)
            let status = daemon.wait(timeout: 20)
            if status == nil { daemon.stop() }
            #expect(status != nil && kept.contains(status!), "\(arguments): exit \(String(describing: status)); not restarted: \(kept)")
        }
    }

    /// libmosquitto, as the loader finds it (the package recommends it; a board may go without).
    static let mosquittoLibrary = "/usr/lib/x86_64-linux-gnu/libmosquitto.so.1"

    /// gpsfixd run with `arguments` where libmosquitto is hidden, in a mount namespace of its
    /// own (dlopen finds an empty file): its exit status (`nil` if it ran on for 20 s, and was
    /// stopped) and what it wrote to standard error.
    static func withoutMosquitto(_ arguments: String) throws -> (status: Int32?, errors: String) {
        let command = "mount --bind /dev/null \(mosquittoLibrary) && exec \(Binaries.gpsfixd) \(arguments)"
        let daemon = try RunningProcess("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", command])
        let status = daemon.wait(timeout: 20)
        if status == nil { daemon.stop() }
        return (status, daemon.errorText)
    }

    @Test("MQTT without libmosquitto (a recommendation left out) ends the daemon with a status the unit does not restart on, saying which library",
          .enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: mosquittoLibrary)))
    func missingLibraryNotRestarted() throws {
        let service = try String(contentsOf: Self.repository.appendingPathComponent("systemd/gpsfixd.service"), encoding: .utf8)
        let kept = service.split(separator: "\n").filter { $0.hasPrefix("RestartPreventExitStatus=") }
            .flatMap { $0.dropFirst("RestartPreventExitStatus=".count).split(separator: " ") }.compactMap { Int32($0) }
        let folder = try makeTemporaryFolder("nolib")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (status, errors) = try Self.withoutMosquitto(
            "--demo --socket \(folder.path)/d.sock --tcp 127.0.0.1:\(freePort()) --mqtt mqtt://127.0.0.1:\(freePort())")
        #expect(status != nil && kept.contains(status!), "exit \(String(describing: status)); not restarted: \(kept)")
        #expect(errors.contains("MQTT needs libmosquitto (Debian: libmosquitto1)"), "\(errors.suffix(600))")
    }

    @Test("--check-config of a configuration with MQTT fails where libmosquitto cannot be loaded, as the daemon would, saying which library",
          .enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: mosquittoLibrary)))
    func missingLibraryFailsCheck() throws {
        let (status, errors) = try Self.withoutMosquitto("--demo --check-config --mqtt mqtt://127.0.0.1:\(freePort())")
        #expect(status == 69, "exit \(String(describing: status))")
        #expect(errors.contains("MQTT needs libmosquitto (Debian: libmosquitto1)"), "\(errors.suffix(600))")
        // With the library, the same configuration passes.
        let passing = try RunningProcess(Binaries.gpsfixd, ["--demo", "--check-config", "--mqtt", "mqtt://127.0.0.1:\(freePort())"])
        let passed = passing.wait(timeout: 20)
        if passed == nil { passing.stop() }
        #expect(passed == 0, "exit \(String(describing: passed)): \(passing.errorText.suffix(600))")
    }

    @Test("the environment: watchdog interval and passed sockets only when they are for this process, and a count that could be one")
    func environment() {
        let ours = ServiceEnvironment(environment: ["WATCHDOG_USEC": "5000000", "LISTEN_FDS": "2", "LISTEN_PID": "42"], pid: 42)
        #expect(ours.watchdogInterval == .seconds(5) && ours.listenDescriptors == [3, 4])
        let theirs = ServiceEnvironment(environment: ["WATCHDOG_USEC": "5000000", "WATCHDOG_PID": "7", "LISTEN_FDS": "2", "LISTEN_PID": "7"], pid: 42)
        #expect(theirs.watchdogInterval == nil && theirs.listenDescriptors.isEmpty)
        // A count past descriptor numbers (a wrong value by hand) is none, not a trap.
        let absurd = ServiceEnvironment(environment: ["LISTEN_FDS": "2147483647", "LISTEN_PID": "42"], pid: 42)
        #expect(absurd.listenDescriptors.isEmpty)
    }
}
