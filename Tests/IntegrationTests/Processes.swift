import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The project's executables, built next to the test bundle.
enum Binaries {
    static let folder = URL(fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0])
        .deletingLastPathComponent()
    static var gpsfixd: String { folder.appendingPathComponent("gpsfixd").path }
    static var gpsfix: String { folder.appendingPathComponent("gpsfix").path }
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures")
}

/// A process the test started, stopped by its PID when the test is done.
final class RunningProcess: @unchecked Sendable {
    let process = Process()
    let output = Pipe()
    let errors = Pipe()

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Sends `signal` to this process only, and waits for it to end.
    func stop(_ signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        kill(pid, signal)
        process.waitUntilExit()
    }

    /// Everything the process wrote to standard error (after it ended).
    var errorText: String { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }

    deinit { stop(SIGKILL) }
}

/// A free loopback TCP port, found by binding port 0.
func freePort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length)
            return getsockname(descriptor, pointer, &length)
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A plain client on a Unix or TCP socket, reading lines with a timeout.
final class LineClient {
    let descriptor: Int32
    private var pending: [UInt8] = []

    init(unixPath: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(unixPath.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    func send(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The next line (without CR LF), or `nil` at end of stream or after `timeout` seconds.
    func readLine(timeout: Double = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = pending[..<newline]
                pending.removeFirst(newline + 1)
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            pending += buffer[0..<count]
        }
    }

    /// Lines until one satisfies `condition` (included), or `nil` on timeout.
    func readLines(until condition: (String) -> Bool, timeout: Double = 10) -> [String]? {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while let line = readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            lines.append(line)
            if condition(line) { return lines }
        }
        return nil
    }
}

/// A daemon on a replayed fixture, with its replayer; both stopped by PID at the end.
final class DaemonUnderTest {
    let folder: URL
    let socket: String
    let tcpPort: Int
    let replay: RunningProcess
    let daemon: RunningProcess

    init(fixture: String = "gpsd/haicom-305N.log", speed: Double = 4, extra: [String] = []) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        socket = folder.appendingPathComponent("gpsfixd.sock").path
        let link = folder.appendingPathComponent("gps0").path
        tcpPort = freePort()
        replay = try RunningProcess(Binaries.gpsfix, [
            "replay", Binaries.fixtures.appendingPathComponent(fixture).path, "--link", link, "--speed", "\(speed)", "--loop",
        ])
        while !FileManager.default.fileExists(atPath: link) { usleep(20_000) }
        daemon = try RunningProcess(
            Binaries.gpsfixd, [link, "--socket", socket, "--tcp", "127.0.0.1:\(tcpPort)", "--log-level", "warning"] + extra)
        let deadline = Date().addingTimeInterval(10)
        while (try? LineClient(unixPath: socket)) == nil, Date() < deadline { usleep(20_000) }
    }

    func client() throws -> LineClient { try LineClient(unixPath: socket) }

    /// Resident memory of the daemon, in kB.
    var residentKilobytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    deinit {
        daemon.stop()
        replay.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Runs an external program (gpspipe, Python) and returns its standard output, which
/// goes to a file so that a long output never blocks the program on a full pipe.
func run(_ executable: String, _ arguments: [String], timeout: Double = 20) throws -> String {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-run-\(UUID().uuidString)")
    FileManager.default.createFile(atPath: file.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = try FileHandle(forWritingTo: file)
    process.standardError = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning, Date() < deadline { usleep(50_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }  // not waited for: it may already be a zombie
    return String(decoding: try Data(contentsOf: file), as: UTF8.self)
}

extension String {
    /// The JSON object of a report line.
    var json: [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(trimmingCharacters(in: .whitespacesAndNewlines).utf8)) as? [String: Any]
    }
}
