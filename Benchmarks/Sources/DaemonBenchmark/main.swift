// gpsfixd against gpsd, on the same pseudo-terminal stream, in the same run: CPU seconds
// per 100k sentences with N watching clients, peak RSS, and the latency from the write
// of a cycle into the pty to its TPV at a client, on a 10 Hz stream.
//
// Each daemon reads a fresh pty (gpsd with -b, read-only, as gpsfixd always is) and serves
// N clients over loopback TCP, each watching JSON. This process writes the stream and
// reads every client on one thread, so the daemon has the other core to itself.

import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var gpsfixd = ""
    var gpsd = "/usr/sbin/gpsd"
    var corpus = ""
    var watchers = [1, 10, 64, 100, 1000]
    var latencySeconds = 10.0
    /// gpsd serves at most 64 clients; larger counts are run for gpsfixd only.
    static let gpsdClientCap = 64

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            let value = iterator.next() ?? ""
            switch argument {
            case "--gpsfixd": gpsfixd = value
            case "--gpsd": gpsd = value
            case "--corpus": corpus = value
            case "--watchers": watchers = value.split(separator: ",").compactMap { Int($0) }
            case "--latency-seconds": latencySeconds = Double(value) ?? latencySeconds
            default:
                FileHandle.standardError.write(Data("unknown option \(argument)\n".utf8))
                exit(2)
            }
        }
    }
}

/// Monotonic seconds.
func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// A daemon under measurement.
struct Daemon {
    let name: String
    let pid: pid_t

    static func start(_ name: String, _ arguments: [String]) throws -> Daemon {
        // Nothing of ours leaks into the daemon: the pty master and client sockets are ours.
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let descriptor = Int32(entry), descriptor > 2 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        }
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        guard result == 0 else { throw POSIXError(.init(rawValue: result) ?? .EIO) }
        return Daemon(name: name, pid: pid)
    }

    /// User plus system CPU seconds so far.
    var cpuSeconds: Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Peak resident memory, in MB.
    var peakRSS: Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<100 where waitpid(pid, &status, WNOHANG) == 0 { usleep(20_000) }
        if kill(pid, 0) == 0 {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
    }
}

/// A pty whose master this process writes; non-blocking, so that writing and reading
/// the clients share one thread.
final class Terminal {
    let master: Int32
    let slave: Int32
    let path: String

    init() {
        var master: Int32 = -1, slave: Int32 = -1
        var settings = termios()
        cfmakeraw(&settings)
        guard openpty(&master, &slave, nil, &settings, nil) == 0 else { fatalError("openpty: \(errno)") }
        self.master = master
        self.slave = slave
        path = String(cString: ttyname(slave))
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(master)
        close(slave)
    }
}

/// The N watching clients, read together with poll.
final class Watchers {
    private(set) var descriptors: [Int32] = []
    /// TPVs each client has received.
    private(set) var reports: [Int] = []
    /// Arrival times of TPVs at the first client, by the TPV's `time`.
    private(set) var arrivals: [String: Double] = [:]
    private var carry: [[UInt8]] = []
    private var firstClientLine: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private static let marker = Array(#""class":"TPV""#.utf8)

    init(count: Int, port: Int) throws {
        for _ in 0..<count {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            let watch = Array(#"?WATCH={"enable":true,"json":true};"#.utf8) + [10]
            _ = watch.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            descriptors.append(descriptor)
            reports.append(0)
            carry.append([])
        }
    }

    deinit { descriptors.forEach { close($0) } }

    /// Reads whatever the clients have, waiting up to `timeout` seconds for the first
    /// byte; returns whether anything arrived. Also drains the pty master (gpsd probes).
    @discardableResult
    func pump(timeout: Double, terminal: Terminal) -> Bool {
        var polls = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        polls.append(pollfd(fd: terminal.master, events: Int16(POLLIN), revents: 0))
        guard poll(&polls, nfds_t(polls.count), Int32(timeout * 1000)) > 0 else { return false }
        var any = false
        for (index, entry) in polls.enumerated() where entry.revents != 0 {
            let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
            guard count > 0, index < descriptors.count else { continue }
            any = true
            let arrived = now()
            let chunk = carry[index] + buffer[0..<count]
            reports[index] += occurrences(in: chunk)
            carry[index] = Array(chunk.suffix(Self.marker.count - 1))
            if index == 0 { recordArrivals(buffer[0..<count], at: arrived) }
        }
        return any
    }

    private func occurrences(in bytes: [UInt8]) -> Int {
        var found = 0
        var index = 0
        let marker = Self.marker
        while index + marker.count <= bytes.count {
            if bytes[index] == marker[0], bytes[index..<index + marker.count].elementsEqual(marker) {
                found += 1
                index += marker.count
            } else {
                index += 1
            }
        }
        return found
    }

    private func recordArrivals(_ bytes: ArraySlice<UInt8>, at time: Double) {
        for byte in bytes {
            guard byte == 10 else {
                firstClientLine.append(byte)
                continue
            }
            let line = String(decoding: firstClientLine, as: UTF8.self)
            firstClientLine.removeAll(keepingCapacity: true)
            guard line.contains(#""class":"TPV""#), let start = line.range(of: #""time":""#) else { continue }
            let stamp = line[start.upperBound...].prefix { $0 != "\"" }
            if arrivals[String(stamp)] == nil { arrivals[String(stamp)] = time }
        }
    }

    func resetCounts() {
        reports = reports.map { _ in 0 }
        arrivals = [:]
    }
}

/// A synthetic 10 Hz receiver: RMC, GGA, GSA and three GSVs per cycle, each cycle a new
/// tenth of a second, so that every TPV names the cycle it came from.
struct TenHertzReceiver {
    private(set) var tenths = 0

    static func sentence(_ body: String) -> [UInt8] {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return Array("$\(body)*\(String(format: "%02X", checksum))\r\n".utf8)
    }

    /// The next cycle's bytes and the TPV time gpsd's protocol will give it.
    mutating func nextCycle() -> (bytes: [UInt8], time: String) {
        defer { tenths += 1 }
        let seconds = 36_000 + tenths / 10
        let (hour, minute, second, tenth) = (seconds / 3600, seconds / 60 % 60, seconds % 60, tenths % 10)
        let clock = String(format: "%02d%02d%02d.%d0", hour, minute, second, tenth)
        let iso = String(format: "2026-11-22T%02d:%02d:%02d.%d00Z", hour, minute, second, tenth)
        var bytes = Self.sentence("GPRMC,\(clock),A,5128.6757,N,00000.0927,W,0.13,271.2,221126,,,A")
        bytes += Self.sentence("GPGGA,\(clock),5128.6757,N,00000.0927,W,1,09,0.9,45.9,M,47.0,M,,")
        bytes += Self.sentence("GPGSA,A,3,02,05,07,09,13,15,20,24,30,,,,1.6,0.9,1.3")
        bytes += Self.sentence("GPGSV,3,1,12,02,45,212,33,05,30,040,41,07,12,100,38,09,60,300,45")
        bytes += Self.sentence("GPGSV,3,2,12,13,22,180,30,15,71,010,44,20,05,250,,24,33,120,39")
        bytes += Self.sentence("GPGSV,3,3,12,30,50,080,42,31,08,330,,32,15,200,,29,25,150,")
        return (bytes, iso)
    }
}

func writeAll(_ bytes: [UInt8], to terminal: Terminal, watchers: Watchers) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(terminal.master, $0.baseAddress! + offset, min(4096, bytes.count - offset)) }
        if written > 0 {
            offset += written
        } else {
            watchers.pump(timeout: 0.001, terminal: terminal)  // the pty is full: read the clients meanwhile
        }
    }
}

func freePort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length)
            return getsockname(descriptor, $0, &length)
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction + 0.5))]
}

struct Result {
    var daemon: String
    var watchers: Int
    var cpuPer100k: Double
    var peakRSS: Double
    var p50: Double
    var p99: Double
    var latencyCycles: Int
    var everyReportDelivered: Bool
}

func measure(daemonName: String, watchers count: Int, options: Options, corpus: [UInt8], sentences: Int) throws -> Result {
    let terminal = Terminal()
    let port = freePort()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-bench-\(getpid())-\(port)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let arguments = daemonName == "gpsd"
        ? [options.gpsd, "-N", "-n", "-b", "-S", "\(port)", "-F", folder.appendingPathComponent("gpsd.sock").path, terminal.path]
        : [options.gpsfixd, terminal.path, "--socket", folder.appendingPathComponent("gpsfixd.sock").path,
           "--tcp", "127.0.0.1:\(port)", "--log-level", "warning"]
    let daemon = try Daemon.start(daemonName, arguments)
    defer { daemon.stop() }

    var watchers: Watchers?
    for _ in 0..<200 where watchers == nil {
        watchers = try? Watchers(count: count, port: port)
        if watchers == nil { usleep(25_000) }
    }
    guard let watchers else { throw POSIXError(.ECONNREFUSED) }

    // Warm up at 10 Hz until the first client sees fixes (gpsd probes the device first).
    var receiver = TenHertzReceiver()
    let warmUpEnd = now() + 20
    while watchers.reports[0] < 3, now() < warmUpEnd {
        writeAll(receiver.nextCycle().bytes, to: terminal, watchers: watchers)
        let next = now() + 0.1
        while now() < next { watchers.pump(timeout: max(0, next - now()), terminal: terminal) }
    }

    // Latency: a cycle every 100 ms; each TPV's arrival at the first client against its write.
    while watchers.pump(timeout: 0.3, terminal: terminal) {}
    watchers.resetCounts()
    var written: [String: Double] = [:]
    let cycles = Int(options.latencySeconds * 10)
    var deadline = now()
    for _ in 0..<cycles {
        let cycle = receiver.nextCycle()
        written[cycle.time] = now()
        writeAll(cycle.bytes, to: terminal, watchers: watchers)
        deadline += 0.1
        while now() < deadline { watchers.pump(timeout: max(0, deadline - now()), terminal: terminal) }
    }
    while watchers.pump(timeout: 0.5, terminal: terminal) {}
    let latencies = written.compactMap { time, at in watchers.arrivals[time].map { ($0 - at) * 1000 } }
    // The TPV of the last cycle may wait for the next cycle to start: count the others.
    let everyReportDelivered = watchers.reports.allSatisfy { $0 >= cycles - 1 }

    // Throughput: the corpus as fast as the pty takes it, then until the clients go quiet.
    let before = daemon.cpuSeconds
    writeAll(corpus, to: terminal, watchers: watchers)
    while watchers.pump(timeout: 1.5, terminal: terminal) {}
    let cpu = daemon.cpuSeconds - before

    return Result(
        daemon: daemonName, watchers: count, cpuPer100k: cpu / Double(sentences) * 100_000, peakRSS: daemon.peakRSS,
        p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), latencyCycles: latencies.count,
        everyReportDelivered: everyReportDelivered)
}

let options = Options(CommandLine.arguments)
guard !options.gpsfixd.isEmpty, !options.corpus.isEmpty else {
    print("usage: DaemonBenchmark --gpsfixd PATH --corpus FILE [--watchers 1,10,64,100,1000] [--latency-seconds 10]")
    exit(2)
}
signal(SIGPIPE, SIG_IGN)
let corpus = Array(try Data(contentsOf: URL(fileURLWithPath: options.corpus)))
let sentences = corpus.count { $0 == 10 }
print("corpus: \(sentences) sentences; 10 Hz latency over \(Int(options.latencySeconds * 10)) cycles")
print("daemon    watchers  CPU-s/100k  peak RSS MB  latency p50 ms  p99 ms  every report")
var results: [Result] = []
for count in options.watchers {
    for name in ["gpsd", "gpsfixd"] where name == "gpsfixd" || count <= Options.gpsdClientCap {
        let result = try measure(daemonName: name, watchers: count, options: options, corpus: corpus, sentences: sentences)
        results.append(result)
        print(
            String(
                format: "%-9@ %8d  %10.3f  %11.1f  %14.3f  %6.3f  %@", result.daemon as NSString, result.watchers,
                result.cpuPer100k, result.peakRSS, result.p50, result.p99,
                (result.everyReportDelivered ? "yes" : "NO") + " (\(result.latencyCycles) timed)" as NSString))
    }
}
for count in options.watchers {
    let pair = results.filter { $0.watchers == count }
    if let gpsd = pair.first(where: { $0.daemon == "gpsd" }), let ours = pair.first(where: { $0.daemon == "gpsfixd" }) {
        print(String(format: "%5d watchers: gpsfixd uses %.2fx gpsd's CPU", count, ours.cpuPer100k / gpsd.cpuPer100k))
    }
}
