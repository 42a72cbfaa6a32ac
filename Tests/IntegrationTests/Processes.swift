import ChildProcesses
import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The project's executables, built next to the test bundle.
enum Binaries {
    static let folder = URL(fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0])
        .deletingLastPathComponent()
    static var gpsfixd: String { folder.appendingPathComponent("gpsfixd").path }
    static var gpsfix: String { folder.appendingPathComponent("gpsfix").path }
    /// Whether the binaries are built with a sanitizer (`scripts/sanitize` says so): its
    /// shadow memory and quarantine make resident-memory bounds meaningless.
    static let isSanitized = ProcessInfo.processInfo.environment["GPSFIX_SANITIZER"] != nil
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures")
}

/// A process the test started, stopped by its PID when the test is done.
///
/// It is started as the daemon starts its children (``ChildProcess``) rather than with
/// Foundation's `Process`, for two reasons: the child must start with an empty signal mask
/// and default handlers (a test thread blocks SIGTERM, and a child that inherits that mask,
/// gpsd for one, never hears it), and waiting must have a deadline
/// (`Process.waitUntilExit` can hang on a child that ignores its signal). Output goes to
/// files, so a chatty child never blocks on a pipe, and the child inherits no other
/// descriptor: one holding a pty master or a client socket would keep a hang-up or an end
/// of stream from ever happening.
final class RunningProcess: @unchecked Sendable {
    let pid: pid_t
    private let outputFile: String
    private let errorFile: String
    private let lock = NSLock()
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let stem = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-proc-\(UUID().uuidString.prefix(8))").path
        outputFile = stem + ".out"
        errorFile = stem + ".err"

        let variables = ProcessInfo.processInfo.environment.merging(environment ?? [:]) { $1 }
        pid = try ChildProcess.spawn(
            executable, arguments, environment: variables.map { "\($0.key)=\($0.value)" },
            output: .file(outputFile), error: .file(errorFile))
    }

    /// Whether the process has not ended yet (reaping it when it has).
    var isRunning: Bool { reap(blocking: false) == nil }

    /// Waits up to `timeout` seconds for the process to end; its exit status (128 + the
    /// signal when a signal ended it), or `nil` when it is still running.
    @discardableResult
    func wait(timeout: Double = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = reap(blocking: false) { return status }
            guard Date() < deadline else { return nil }
            usleep(10_000)
        }
    }

    /// Sends `signal` to this process only and waits for it to end; one that does not end
    /// within `grace` seconds is killed.
    func stop(_ signal: Int32 = SIGTERM, grace: Double = 10) {
        guard isRunning else { return }
        kill(pid, signal)
        if wait(timeout: grace) == nil {
            kill(pid, SIGKILL)
            wait(timeout: grace)
        }
    }

    /// The exit status once the process has ended.
    var terminationStatus: Int32? { reap(blocking: false) }

    /// Everything the process wrote to standard output so far.
    var outputText: String { (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? "" }

    /// Everything the process wrote to standard error so far.
    var errorText: String { (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "" }

    private func reap(blocking: Bool) -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        guard waitpid(pid, &status, blocking ? 0 : WNOHANG) == pid else { return nil }
        let signal = status & 0x7f
        exitStatus = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return exitStatus
    }

    deinit {
        stop(SIGKILL)
        unlink(outputFile)
        unlink(errorFile)
    }
}

/// A free loopback TCP port for a program a test starts, which binds it later; each port is
/// handed out once a process, and only one that binds now.
///
/// The ports come from `GPSFIX_TEST_PORTS` (`FIRST-LAST`: scripts/test gives each of its four
/// test processes its own) or ``defaultTestPorts``, below the kernel's ephemeral range. A
/// port found by binding port 0 lies in that range, where any connection made before the
/// program binds it (another process's clients, by the thousand in the hostile-client
/// suite) may take it.
func freePort() -> Int {
    for _ in testPorts {
        let port = nextTestPort.withLock { offset in
            defer { offset = (offset + 1) % testPorts.count }
            return testPorts.lowerBound + offset
        }
        let (descriptor, bound) = boundLoopbackSocket(type: SOCK_STREAM, port: port)
        close(descriptor)
        if bound == port { return port }
    }
    preconditionFailure("no port of \(testPorts) can be bound")
}

/// The ports ``freePort()`` hands out when `GPSFIX_TEST_PORTS` names none: below the
/// kernel's ephemeral ports (32768 to 60999 by default).
let defaultTestPorts = 20000...29999

let testPorts: ClosedRange<Int> = {
    let bounds = ProcessInfo.processInfo.environment["GPSFIX_TEST_PORTS"]?.split(separator: "-").compactMap { Int($0) }
    guard let bounds, bounds.count == 2, 1024 <= bounds[0], bounds[0] <= bounds[1], bounds[1] <= 65535 else {
        return defaultTestPorts
    }
    return bounds[0]...bounds[1]
}()

/// Where ``freePort()`` looks next: a random start, so that runs one after the other do not
/// meet the ports the last one left closing.
private let nextTestPort = Mutex(Int.random(in: 0..<testPorts.count))

/// A socket of `type` bound to loopback `port` (by default a free one the kernel picks),
/// and the port it is bound to (0 when the bind failed); the caller closes it.
func boundLoopbackSocket(type: __socket_type, port: Int = 0) -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(type.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
        }
    }
    return (descriptor, bound ? Int(UInt16(bigEndian: address.sin_port)) : 0)
}

/// A daemon on a replayed fixture, with its replayer; both stopped by PID at the end.
final class DaemonUnderTest {
    let folder: URL
    let socket: String
    let tcpPort: Int
    let replay: RunningProcess
    let daemon: RunningProcess

    /// Replays `fixture` (under `fixtures/`, or an absolute path) in a loop at `speed`, or as
    /// fast as the daemon takes it (`flood`);
    /// `retime` stamps each cycle one interval after the last, so no time repeats across loops.
    init(
        fixture: String = "gpsd/haicom-305N.log", speed: Double = 4, flood: Bool = false, retime: Bool = false,
        extra: [String] = []
    ) throws {
        folder = try makeTemporaryFolder("it")
        socket = folder.appendingPathComponent("gpsfixd.sock").path
        let link = folder.appendingPathComponent("gps0").path
        tcpPort = freePort()
        replay = try RunningProcess(Binaries.gpsfix, [
            "replay", fixture.hasPrefix("/") ? fixture : Binaries.fixtures.appendingPathComponent(fixture).path, "--link", link, "--loop",
        ] + (flood ? ["--as-fast-as-possible"] : ["--speed", "\(speed)"]) + (retime ? ["--retime"] : []))
        try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
        daemon = try RunningProcess(
            Binaries.gpsfixd, [link, "--socket", socket, "--tcp", "127.0.0.1:\(tcpPort)", "--log-level", "warning"] + extra)
        // Ready once both listen: the daemon binds its TCP port after its socket.
        _ = LineClient.connect(unixPath: socket)
        _ = LineClient.connect(tcpPort: tcpPort)
    }

    func client() throws -> LineClient { try LineClient(unixPath: socket) }

    /// Resident memory of the daemon, in kB.
    var residentKilobytes: Int { statusKilobytes("VmRSS:") }

    /// The daemon's own memory (anonymous: what a leak grows), in kB: resident memory
    /// without the pages of its binary and libraries, which the kernel maps in and out
    /// (the daemon hands those start-up used back a few seconds in).
    var anonymousKilobytes: Int { statusKilobytes("RssAnon:") }

    private func statusKilobytes(_ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field) } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    deinit {
        daemon.stop()
        replay.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Runs an external program (gpspipe, Python) to its end, or kills it after `timeout`
/// seconds, and returns its standard output.
func run(_ executable: String, _ arguments: [String], timeout: Double = 20) throws -> String {
    let process = try RunningProcess(executable, arguments)
    if process.wait(timeout: timeout) == nil { process.stop(SIGKILL) }
    return process.outputText
}

extension String {
    /// The JSON object of a report line.
    var json: [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(trimmingCharacters(in: .whitespacesAndNewlines).utf8)) as? [String: Any]
    }
}

/// Runs a terminal program (cgps, gpsmon) in a tmux server of the test's own, on its own
/// socket in `folder`, and returns its screen once `done` says so or `timeout` passes. The
/// server is killed before returning.
func terminalScreen(of command: String, in folder: URL, timeout: Double = 20, until done: (String) -> Bool) throws -> String {
    let tmuxSocket = folder.appendingPathComponent("tmux").path
    _ = try run("/usr/bin/tmux", ["-S", tmuxSocket, "new-session", "-d", "-x", "120", "-y", "40", command])
    let server = Int32(try run("/usr/bin/tmux", ["-S", tmuxSocket, "display-message", "-p", "#{pid}"])
        .trimmingCharacters(in: .whitespacesAndNewlines))
    defer {
        _ = try? run("/usr/bin/tmux", ["-S", tmuxSocket, "kill-server"])
        if let server, kill(server, 0) == 0 { kill(server, SIGKILL) }
    }
    var screen = ""
    let deadline = Date().addingTimeInterval(timeout)
    while !done(screen), Date() < deadline {
        usleep(250_000)
        screen = try run("/usr/bin/tmux", ["-S", tmuxSocket, "capture-pane", "-p"])
    }
    return screen
}
