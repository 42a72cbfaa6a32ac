import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An OsmAnd endpoint of the tests' own (`Tests/Tools/osmand_recorder.py`): it records the
/// positions it answers 200, answers what its status file says, and can go away.
final class OsmAndEndpoint {
    static let script = Binaries.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Tools/osmand_recorder.py").path
    let folder: URL
    let port = freePort()
    private var process: RunningProcess?

    var log: String { folder.appendingPathComponent("positions.log").path }
    var statusFile: String { folder.appendingPathComponent("status").path }

    init(folder: URL) throws {
        self.folder = folder
        try start()
    }

    func start() throws {
        process = try RunningProcess("/usr/bin/python3", [Self.script, "\(port)", log, statusFile])
        try waitUntil("the OsmAnd endpoint") { (try? LineClient(tcpPort: port)) != nil }
    }

    func stop() {
        process?.stop()
        process = nil
    }

    /// Whether the endpoint's process runs.
    var isRunning: Bool { process?.isRunning ?? false }

    /// Answers `status` from now on.
    func answer(_ status: Int) throws {
        try "\(status)".write(toFile: statusFile, atomically: true, encoding: .utf8)
    }

    /// The positions recorded, as their query fields.
    var positions: [[String: String]] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            Dictionary(line.split(separator: "&").compactMap { pair -> (String, String)? in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }) { first, _ in first }
        }
    }

    deinit { stop() }
}

/// A tmpfs of `bytes` mounted at a folder (root only): a disk that fills up.
struct SmallFileSystem {
    static var canMount: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount") }
    let path: String

    init(at folder: URL, bytes: Int) throws {
        path = folder.path
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        _ = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path])
        guard available != nil, size == bytes else {
            // Not the caller's to undo: it has no file system yet.
            unmount()
            throw TimedOut(description: "a \(bytes)-byte tmpfs at \(path) was not mounted at that size (\(size.map(String.init) ?? "none"))")
        }
    }

    private var statistics: statvfs? {
        var result = statvfs()
        return statvfs(path, &result) == 0 ? result : nil
    }

    /// Its size, in bytes.
    var size: Int? { statistics.map { Int($0.f_blocks) * Int($0.f_frsize) } }

    /// Bytes free, in whole blocks.
    var available: Int? { statistics.map { Int($0.f_bavail) * Int($0.f_frsize) } }

    /// Unmounts it (lazily, should a process still hold a file there).
    func unmount() {
        _ = try? run("/bin/umount", ["--lazy", path])
    }
}

/// An ext4 image on a loop device, mounted at a folder (root only): a disk that can be
/// frozen (`fsfreeze`), so that every write to it waits, as on a stalled SD card.
struct FreezableFileSystem {
    static var canMount: Bool {
        getuid() == 0 && FileManager.default.fileExists(atPath: "/dev/loop-control")
            && ["/sbin/mkfs.ext4", "/sbin/fsfreeze", "/bin/mount"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    }

    let path: String
    private let image: String

    init(at folder: URL, megabytes: Int = 8) throws {
        path = folder.path
        image = folder.path + ".img"
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, off_t(megabytes) << 20) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        _ = try run("/sbin/mkfs.ext4", ["-q", "-F", image])
        do {
            _ = try run("/bin/mount", ["-o", "loop", image, path])
        } catch {
            unlink(image)
            throw error
        }
        var mounted = stat(), parent = stat()
        guard stat(path, &mounted) == 0, stat(folder.deletingLastPathComponent().path, &parent) == 0, mounted.st_dev != parent.st_dev
        else {
            // Not the caller's to undo: it has no file system yet.
            remove()
            throw TimedOut(description: "an ext4 image at \(path) was not mounted")
        }
    }

    /// Freezes it for `seconds`, in a process of its own that thaws it whatever becomes of
    /// the test; returns once it is frozen, with the process (it ends at the thaw). The
    /// file `marker + ".thawing"` appears half a second before the thaw.
    func freeze(for seconds: Int, marker: String) throws -> RunningProcess {
        let freezer = try RunningProcess("/bin/sh", [
            "-c", "/sbin/fsfreeze -f \"$0\" && : > \"$1\"; sleep \(seconds); : > \"$1.thawing\"; sleep 0.5; /sbin/fsfreeze -u \"$0\"",
            path, marker,
        ])
        try waitUntil("the file system frozen") { FileManager.default.fileExists(atPath: marker) }
        return freezer
    }

    /// Thaws it (should the freezer have been stopped), unmounts it and removes its image.
    func remove() {
        _ = try? run("/sbin/fsfreeze", ["-u", path])
        _ = try? run("/bin/umount", ["--lazy", path])
        unlink(image)
    }
}

/// A gpsd watcher of the daemon's that keeps the times of its TPVs with a position: each is
/// a position the forwarder queues.
final class PositionWatcher {
    private let client: LineClient
    private(set) var times: [Double] = []

    init(_ daemon: DaemonUnderTest) throws {
        client = try daemon.client()
        client.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
    }

    /// Reads what has come, without waiting for more.
    func read() {
        while let line = client.readLine(timeout: 0.02) {
            guard let json = line.json, json["class"] as? String == "TPV", json["lat"] != nil, json["lon"] != nil,
                let time = (json["time"] as? String).flatMap(ISO8601DateFormatter.fractional.date(from:))
            else { continue }
            times.append(time.timeIntervalSince1970)
        }
    }
}

@Suite("Traccar, with nothing lost", .serialized)
struct TraccarTests {
    static func daemon(_ folder: URL, _ endpoint: OsmAndEndpoint, extra: [String] = []) throws -> (RunningProcess, String) {
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", socket, "--log-level", "info", "--traccar", "http://127.0.0.1:\(endpoint.port)/",
            "--traccar-id", "boat7", "--state-directory", folder.appendingPathComponent("state").path,
        ] + extra)
        _ = LineClient.connect(unixPath: socket)
        return (daemon, socket)
    }

    /// The timestamps of `positions`, in the order they arrived, in seconds.
    static func times(_ positions: [[String: String]]) -> [Double] { positions.compactMap { $0["timestamp"].flatMap(seconds) } }

    /// A timestamp read as Traccar reads it: a whole number, below 2³¹ seconds, above it
    /// milliseconds.
    static func seconds(_ timestamp: some StringProtocol) -> Double? {
        Int(timestamp).map { $0 < Int(Int32.max) ? Double($0) : Double($0) / 1000 }
    }

    /// Whether `times` are one a second, each once, in order (the demo's 1 Hz fixes).
    static func isEverySecond(_ times: [Double]) -> Bool {
        zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 1) < 0.01 }
    }

    @Test("the server goes away and comes back: every position arrives once, in order, speed in knots")
    func outage() throws {
        let folder = try makeTemporaryFolder("traccar")
        defer { try? FileManager.default.removeItem(at: folder) }
        let endpoint = try OsmAndEndpoint(folder: folder)
        let (daemon, socket) = try Self.daemon(folder, endpoint)
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        try waitUntil("positions at the endpoint") { endpoint.positions.count >= 3 }
        #expect(endpoint.positions.allSatisfy { $0["id"] == "boat7" })
        let arguments = (try? String(contentsOfFile: "/proc/\(daemon.pid)/cmdline", encoding: .utf8)) ?? ""
        #expect(arguments.contains("--traccar-id") && !arguments.contains("boat7"), "ps shows the device's identifier: \(arguments)")
        endpoint.stop()
        usleep(4_000_000)
        try endpoint.start()
        let sentBefore = endpoint.positions.count
        try waitUntil("the backlog sent", within: 30) { endpoint.positions.count >= sentBefore + 6 }
        usleep(2_000_000)
        let times = Self.times(endpoint.positions)
        #expect(times.count >= 9 && Set(times).count == times.count, "\(times)")
        #expect(Self.isEverySecond(times), "\(times)")
        // Units: the TPV's m/s in knots, for the same second.
        var tpvSpeeds: [Double: Double] = [:]
        while let line = watcher.readLine(timeout: 0.2) {
            guard let json = line.json, json["class"] as? String == "TPV", let time = json["time"] as? String,
                let speed = json["speed"] as? Double, let date = ISO8601DateFormatter.fractional.date(from: time)
            else { continue }
            tpvSpeeds[date.timeIntervalSince1970.rounded()] = speed
        }
        let compared = endpoint.positions.compactMap { position -> (Double, Double)? in
            guard let time = position["timestamp"].flatMap(Self.seconds), let knots = position["speed"].flatMap(Double.init),
                let speed = tpvSpeeds[time.rounded()]
            else { return nil }
            return (knots, speed)
        }
        #expect(!compared.isEmpty)
        #expect(compared.allSatisfy { abs($0.0 - $0.1 * 1.943844) < 0.0015 }, "\(compared.prefix(3))")
    }

    @Test("killed with SIGKILL while the server is away: the journal's positions arrive after a restart")
    func killedDuringOutage() throws {
        let folder = try makeTemporaryFolder("traccar-kill")
        defer { try? FileManager.default.removeItem(at: folder) }
        let endpoint = try OsmAndEndpoint(folder: folder)
        endpoint.stop()
        var (daemon, _) = try Self.daemon(folder, endpoint)
        let journal = folder.appendingPathComponent("state/traccar.journal").path
        let queued = { () -> [Double] in
            let text = (try? String(contentsOfFile: journal, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.hasPrefix("P ") }.compactMap { line in
                line.split(separator: "&").first { $0.hasPrefix("timestamp=") }.flatMap { Self.seconds($0.dropFirst(10)) }
            }
        }
        try waitUntil("positions in the journal", within: 20) { queued().count >= 4 }
        daemon.stop(SIGKILL)
        let before = queued()
        try endpoint.start()
        (daemon, _) = try Self.daemon(folder, endpoint)
        defer { daemon.stop() }
        try waitUntil("the journal sent", within: 30) { Set(Self.times(endpoint.positions)).isSuperset(of: before) }
        let times = Self.times(endpoint.positions)
        #expect(Array(times.prefix(before.count)) == before, "the killed run's positions first, in order")
        #expect(Set(times).count == times.count)
    }

    @Test("a server refusing the device (400), then failing (500), keeps the positions queued, saying which; they arrive, in order, once it answers 200")
    func serverErrors() throws {
        let folder = try makeTemporaryFolder("traccar-500")
        defer { try? FileManager.default.removeItem(at: folder) }
        let endpoint = try OsmAndEndpoint(folder: folder)
        try endpoint.answer(400)
        let (daemon, _) = try Self.daemon(folder, endpoint)
        defer { daemon.stop() }
        // Traccar answers 400 for a device it does not know: said as such, not as no answer.
        try waitUntil("the refusal logged", within: 10) { daemon.errorText.contains("Traccar server refuses the positions (HTTP 400)") }
        try endpoint.answer(500)
        try waitUntil("the error logged", within: 10) { daemon.errorText.contains("Traccar server answers HTTP 500") }
        #expect(endpoint.positions.isEmpty)
        try endpoint.answer(200)
        try waitUntil("positions after the errors", within: 40) { endpoint.positions.count >= 6 }
        let times = Self.times(endpoint.positions)
        #expect(Self.isEverySecond(times), "\(times)")
        #expect(!daemon.errorText.contains("not reached"))
    }

    /// What a crashed daemon's backtrace says of the crash: its reason and the frames in
    /// GPSFix's sources; `nil` when it did not crash.
    static func crash(in log: String) -> String? {
        let lines = log.split(separator: "\n")
        guard let start = lines.firstIndex(where: { $0.contains("crashed") || $0.contains("Fatal error") }) else { return nil }
        let frames = lines[start...].filter { $0.contains("crashed") || $0.contains("Fatal error") || $0.contains("/Sources/") }
        return frames.prefix(40).joined(separator: "\n")
    }

    @Test(
        "the journal's disk fills up while the server is away: every position arrives, in order, each once, when it is back",
        .enabled(if: SmallFileSystem.canMount, "mounts a 16 kB tmpfs: root only"))
    func fullDisk() throws {
        let folder = try makeTemporaryFolder("traccar-full")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try SmallFileSystem(at: folder.appendingPathComponent("state"), bytes: 16 * 1024)
        defer { disk.unmount() }
        let endpoint = try OsmAndEndpoint(folder: folder)
        endpoint.stop()
        // A 10 Hz receiver: each cycle one second after the last, so every time is new.
        let daemon = try DaemonUnderTest(speed: 10, retime: true, extra: [
            "--traccar", "http://127.0.0.1:\(endpoint.port)/", "--traccar-id", "boat7", "--state-directory", disk.path,
        ])
        let watcher = try PositionWatcher(daemon)
        // Full: less room left than a line takes (the last page of a tmpfs is counted used
        // from its first byte, so the journal's size says it, not the free blocks).
        let journal = disk.path + "/traccar.journal"
        try waitUntil("the journal's disk full", within: 40) {
            watcher.read()
            let size = (try? FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int) ?? 0
            return size > 16 * 1024 - 150
        }
        // A few seconds more of positions that the disk cannot take.
        let full = Date()
        while Date().timeIntervalSince(full) < 3 { watcher.read() }
        daemon.replay.stop()
        let quiet = Date()
        while Date().timeIntervalSince(quiet) < 1 { watcher.read() }
        let last = try #require(watcher.times.last)
        try endpoint.start()
        // The sender retries after 1, 2, 4 ... 30 s: up to 30 s before it knows, then the backlog at 20 a second.
        let arrived = (try? waitUntil("the last position at the endpoint", within: 70) {
            watcher.read()
            return Self.times(endpoint.positions).contains { abs($0 - last) < 0.01 }
        }) != nil
        // Time for a position sent again to show.
        usleep(1_000_000)
        let times = Self.times(endpoint.positions)
        #expect(
            arrived,
            "\(times.count) requests, \(Set(times).count) positions; \(watcher.times.count) TPVs; endpoint \(endpoint.isRunning ? "running" : "gone"); \(Self.crash(in: daemon.daemon.errorText) ?? String(daemon.daemon.errorText.suffix(1500)))")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "in order, each once: \(times.prefix(20))")
        let missing = watcher.times.filter { time in !times.contains { abs($0 - time) < 0.01 } }
        #expect(missing.isEmpty, "\(missing.count) of \(watcher.times.count) positions never arrived")
        #expect(!FileManager.default.fileExists(atPath: disk.path + "/traccar.journal.new"))
        let said = daemon.daemon.errorText.components(separatedBy: "the journal cannot be written").count - 1
        #expect(said == 1, "the full disk said once in the log: \(daemon.daemon.errorText.suffix(2000))")
    }
    @Test(
        "a stalled disk (its file system frozen) holds up no client, and the positions of the stall arrive, in order, each once",
        .enabled(if: FreezableFileSystem.canMount, "mounts an ext4 image on a loop device: root only"))
    func stalledDisk() throws {
        let folder = try makeTemporaryFolder("traccar-stalled")
        defer { try? FileManager.default.removeItem(at: folder) }
        let disk = try FreezableFileSystem(at: folder.appendingPathComponent("state"))
        defer { disk.remove() }
        let endpoint = try OsmAndEndpoint(folder: folder)
        let daemon = try DaemonUnderTest(speed: 10, retime: true, extra: [
            "--traccar", "http://127.0.0.1:\(endpoint.port)/", "--traccar-id=boat7", "--state-directory", disk.path,
        ])
        let watcher = try PositionWatcher(daemon)
        try waitUntil("positions at the endpoint") {
            watcher.read()
            return endpoint.positions.count >= 5
        }
        // The identifier given as one argument is hidden from ps as well.
        let arguments = (try? String(contentsOfFile: "/proc/\(daemon.daemon.pid)/cmdline", encoding: .utf8)) ?? ""
        #expect(arguments.contains("--traccar-id=") && !arguments.contains("boat7") && endpoint.positions.allSatisfy { $0["id"] == "boat7" })
        // Four seconds of a disk that takes no write: about 40 TPVs of a 10 Hz receiver.
        let frozen = folder.appendingPathComponent("frozen").path
        let freezer = try disk.freeze(for: 4, marker: frozen)
        let before = watcher.times.count
        // What the watcher read before the thaw was announced came while the disk stalled.
        try waitUntil("the thaw announced", within: 20) {
            guard !FileManager.default.fileExists(atPath: frozen + ".thawing") else { return true }
            watcher.read()
            return false
        }
        let duringStall = watcher.times.count - before
        #expect(duringStall >= 10, "TPVs to a watcher while the disk stalled: \(duringStall)")
        try waitUntil("the file system thawed", within: 20) {
            watcher.read()
            return !freezer.isRunning
        }
        let last = try #require(watcher.times.last)
        let arrived = (try? waitUntil("the stall's positions at the endpoint", within: 20) {
            watcher.read()
            return Self.times(endpoint.positions).contains { abs($0 - last) < 0.01 }
        }) != nil
        let times = Self.times(endpoint.positions)
        #expect(arrived && zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "in order, each once: \(times.suffix(20))")
        let missing = watcher.times[before...].filter { time in !times.contains { abs($0 - time) < 0.01 } }
        #expect(missing.isEmpty, "\(missing.count) of the \(watcher.times.count - before) positions from the stall on never arrived")
    }
}

extension ISO8601DateFormatter {
    fileprivate static var fractional: ISO8601DateFormatter {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format
    }
}
