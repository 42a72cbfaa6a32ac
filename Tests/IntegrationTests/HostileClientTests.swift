import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One attacker: a thread that does one bad thing to a listener until told to stop,
/// reconnecting whenever it is cut off.
private final class Attacker: @unchecked Sendable {
    private let running = Atomic<Bool>(true)
    private let finished = Atomic<Bool>(false)

    init(_ connect: @escaping @Sendable () throws -> LineClient, _ attack: @escaping @Sendable (Int32, () -> Bool) -> Void) {
        Thread { [self] in
            while running.load(ordering: .relaxed) {
                guard let client = try? connect() else { usleep(50_000); continue }
                attack(client.descriptor) { self.running.load(ordering: .relaxed) }
            }
            finished.store(true, ordering: .releasing)
        }.start()
    }

    /// Tells it to stop after what it is doing now.
    func stop() {
        running.store(false, ordering: .relaxed)
    }

    /// Waits (at most 10 s) until it has stopped and its connection is closed.
    func waitUntilStopped() throws {
        try waitUntil("an attacker's end", within: 10) { finished.load(ordering: .acquiring) }
    }

    /// Sends `bytes` without blocking; `false` once the daemon has closed the connection.
    static func send(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        return sent >= 0 || errno == EAGAIN || errno == EINTR
    }

    /// Reads what is there without blocking; `false` once the daemon has closed the connection.
    static func drain(_ descriptor: Int32, upTo limit: Int = 65536) -> Bool {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return count != 0 && !(count < 0 && errno != EAGAIN && errno != EINTR)
    }
}

/// A listener of the daemon, and what its protocol's attacks send.
enum AttackedListener: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case gpsdUnix, gpsdTCP, http, nmeaOut, control

    var testDescription: String { rawValue }

    /// A request the listener's protocol answers, for floods.
    var request: String {
        switch self {
        case .gpsdUnix, .gpsdTCP: "?POLL;"
        case .http: "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/sky HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
        case .nmeaOut: "$GPGGA,flood*00\r\n"
        // A conversation asked for a device the daemon does not serve: refused, and closed.
        case .control: "H\u{0}\u{5}/nope"
        }
    }

    /// What makes a reader of the listener receive reports it then never reads.
    var watch: String {
        switch self {
        case .gpsdUnix, .gpsdTCP: #"?WATCH={"enable":true,"json":true}"# + "\n"
        case .http: "GET /events HTTP/1.1\r\nHost: x\r\n\r\n"
        case .nmeaOut, .control: ""
        }
    }

    /// A request after which the listener's parser reads no further (SwiftNIO's HTTP
    /// decoder stops at a change of protocol): what follows it is bytes no parser takes.
    var protocolSwitch: String? {
        switch self {
        case .http: "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
        default: nil
        }
    }

    /// A line or head far past any bound.
    var overLong: [UInt8] {
        switch self {
        case .http: Array("GET / HTTP/1.1\r\nX-Long: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 200_000) + Array("\r\n\r\n".utf8)
        default: [UInt8](repeating: UInt8(ascii: "x"), count: 100_000) + [10]
        }
    }
}

/// Every kind of hostile client at once against each listener of a daemon reading a
/// 10 Hz replay, beside a well-behaved gpsd watcher and a `raw:2` watcher.
@Suite("gpsfixd under hostile clients", .serialized)
struct HostileClientTests {
    static func residentKilobytes(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    static func descriptorCount(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// The attackers of `listener`, all at once; `connect` opens a connection to it.
    fileprivate static func attackers(
        of listener: AttackedListener, connect: @escaping @Sendable () throws -> LineClient
    ) -> [Attacker] {
        let flood = Array(String(repeating: listener.request, count: max(1, 1000 / listener.request.count)).utf8) + [10]
        var attackers: [Attacker] = []
        // Floods of requests (pipelined, for HTTP), reading 64 bytes a round.
        for _ in 0..<3 {
            attackers.append(Attacker(connect) { fd, going in
                while going(), Attacker.send(flood, to: fd), Attacker.drain(fd, upTo: 64) { usleep(500) }
            })
        }
        // Slowloris: a byte a second, never a whole request.
        for _ in 0..<5 {
            attackers.append(Attacker(connect) { fd, going in
                while going(), Attacker.send([UInt8(ascii: "G")], to: fd) { sleep(1) }
            })
        }
        // Over-long lines and heads, and binary garbage.
        let long = listener.overLong
        attackers.append(Attacker(connect) { fd, going in
            while going(), Attacker.send(long, to: fd), Attacker.drain(fd) { usleep(20_000) }
        })
        attackers.append(Attacker(connect) { fd, going in
            var generator = SystemRandomNumberGenerator()
            while going() {
                let garbage = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
                guard Attacker.send(garbage, to: fd), Attacker.drain(fd) else { return }
                usleep(10_000)
            }
        })
        // A change of protocol asked for, then a flood no parser takes.
        if let protocolSwitch = listener.protocolSwitch {
            let head = Array(protocolSwitch.utf8), flood = [UInt8](repeating: UInt8(ascii: "u"), count: 65536)
            attackers.append(Attacker(connect) { fd, going in
                guard Attacker.send(head, to: fd) else { return }
                while going(), Attacker.send(flood, to: fd), Attacker.drain(fd) { usleep(1_000) }
            })
        }
        // Half-open: connects, closes its sending side, never reads.
        attackers.append(Attacker(connect) { fd, going in
            shutdown(fd, Int32(SHUT_WR))
            while going() { usleep(100_000) }
        })
        // Churn: connect, a request, gone.
        let request = Array(listener.request.utf8)
        attackers.append(Attacker(connect) { fd, _ in
            _ = Attacker.send(request, to: fd)
            usleep(5_000)
        })
        // Readers that never read what they asked for.
        let watch = Array(listener.watch.utf8)
        for _ in 0..<3 {
            attackers.append(Attacker(connect) { fd, going in
                _ = Attacker.send(watch, to: fd)
                while going() { usleep(100_000) }
            })
        }
        // A horde of idle connections: as many as 2,000 held open, those closed replaced
        // 200 at a time five times a second (each new one at the cap closes another: a
        // churn of up to 1,000 connects a second beside the churn attacker's). A daemon
        // under a sanitizer accepts 10 to 20 times slower, and connects it cannot accept
        // wait in the listen backlog ahead of the fresh clients: its horde is a twentieth.
        let (most, batch) = Binaries.isSanitized ? (100, 10) : (2000, 200)
        attackers.append(Attacker(connect) { _, going in
            var horde: [LineClient] = []
            while going() {
                horde.removeAll { !Attacker.drain($0.descriptor, upTo: 1024) }
                var opened = 0
                while horde.count < most, opened < batch, let client = try? connect() {
                    horde.append(client)
                    opened += 1
                }
                usleep(200_000)
            }
        })
        return attackers
    }

    /// The device's silence timeout here: far above any stall of the daemon's event loop
    /// that the attack can cause on a busy machine, so that a silence reported means the
    /// daemon stopped reading the device, not that the machine was slow.
    ///
    /// The replayer writes a cycle every 0.1 s throughout (strace: never more than 0.21 s
    /// apart, even on a saturated machine), so the device is never silent. But the daemon
    /// judges silence by the wall clock, on the event loop that also reads the device: one
    /// turn of the loop that accepts and closes a horde's connections, on a 2-core machine
    /// with a build (or 8 CPU hogs) beside it, has taken 2 to 3 s with the debug build, and
    /// the silence timer, run at the end of that turn, fires before the loop has polled the
    /// device's waiting bytes again. With the 1 s this test used to give, it reported the
    /// device silent 8 times in 40 s under 8 CPU hogs. How long the reading stalls is
    /// measured by Benchmarks/silence-under-attack, how long each cycle waits for a watcher
    /// by Benchmarks/under-attack (docs/BENCHMARKS.md); this suite checks what the daemon
    /// did with what it was sent.
    static let silenceTimeout = 10

    @Test("under attack on each listener the daemon serves on: bounded memory, descriptors back to baseline, every TPV in order, every byte the device sent passed on, fresh clients answered, never silent",
          arguments: AttackedListener.allCases)
    func survivesEveryKindAtOnce(on listener: AttackedListener) throws {
        let httpPort = freePort(), nmeaPort = freePort()
        let daemon = try DaemonUnderTest(fixture: "gpsd/haicom-305N.log", speed: 10, extra: [
            "--silence-timeout", "\(Self.silenceTimeout)", "--http", "127.0.0.1:\(httpPort)", "--nmea-tcp", "127.0.0.1:\(nmeaPort)",
        ])
        let pid = daemon.daemon.pid
        let good = try daemon.client()
        good.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        let raw = try daemon.client()
        raw.send(#"?WATCH={"raw":2}"# + "\n")
        _ = try #require(good.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 20))
        _ = try #require(raw.readLines(until: { $0.contains(#""class":"WATCH""#) }, timeout: 20))
        usleep(500_000)
        let baselineDescriptors = Self.descriptorCount(pid)
        let baselineMemory = Self.residentKilobytes(pid)

        // The good watcher and the raw watcher read on their own threads throughout.
        let goodLines = Locked<[String]>([]), rawBytes = Locked<[UInt8]>([])
        let reading = Atomic<Bool>(true)
        // Stopped on every way out of the test, a failure's included: a reader left spinning
        // would take a core from the suites after it.
        defer { reading.store(false, ordering: .relaxed) }
        let readers = [
            Thread {
                while reading.load(ordering: .relaxed) {
                    if let line = good.readLine(timeout: 0.5) {
                        goodLines.withLock { $0.append(line) }
                    } else if good.reachedEnd {
                        return
                    }
                }
            },
            Thread {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while reading.load(ordering: .relaxed) {
                    var poller = pollfd(fd: raw.descriptor, events: Int16(POLLIN), revents: 0)
                    guard poll(&poller, 1, 500) > 0 else { continue }
                    let count = buffer.withUnsafeMutableBytes { read(raw.descriptor, $0.baseAddress, $0.count) }
                    guard count > 0 else { return }
                    rawBytes.withLock { $0 += buffer[0..<count] }
                }
            },
        ]
        readers.forEach { $0.start() }

        let socket = daemon.socket, tcpPort = daemon.tcpPort
        let control = daemon.folder.appendingPathComponent("gpsfixd-control.sock").path
        let attackers = Self.attackers(of: listener) {
            switch listener {
            case .gpsdUnix: try LineClient(unixPath: socket)
            case .gpsdTCP: try LineClient(tcpPort: tcpPort)
            case .http: try LineClient(tcpPort: httpPort)
            case .nmeaOut: try LineClient(tcpPort: nmeaPort)
            case .control: try LineClient(unixPath: control)
            }
        }
        defer { attackers.forEach { $0.stop() } }
        var peakMemory = baselineMemory
        var unanswered: [String] = []
        // How long a fresh client may wait, and the descriptors may take to come back: a
        // bound on a hang, not a measure of speed (a sanitised daemon under the same attack
        // is many times slower, and so is any daemon on a machine busy with a build).
        let patience: Double = Binaries.isSanitized ? 40 : 20
        for round in 0..<24 {  // 12 s of attack
            usleep(500_000)
            peakMemory = max(peakMemory, Self.residentKilobytes(pid))
            #expect(kill(pid, 0) == 0, "the daemon died")
            guard round % 10 == 5 else { continue }
            // A fresh gpsd client and a fresh HTTP GET are answered meanwhile. The gpsd
            // client comes on TCP, or on the Unix socket while TCP is the port flooded with
            // connects: those wait in the kernel's listen backlog, the fresh one among them,
            // and one the daemon has not read before a cap's worth of newer ones arrive is
            // closed as having asked nothing (a weakness to mend: see docs/protocol.md).
            // Three tries, all within the patience, as gpsd's clients reconnect.
            let answered = (0..<3).contains { _ in
                let fresh = listener == .gpsdTCP ? try? LineClient(unixPath: socket) : try? LineClient(tcpPort: tcpPort)
                guard let fresh else { return false }
                fresh.send("?POLL;\n")
                return fresh.readLines(until: { $0.contains(#""class":"POLL""#) }, timeout: patience / 3) != nil
            }
            if !answered { unanswered.append("gpsd, round \(round)") }
            let browser = try LineClient(tcpPort: httpPort)
            browser.send("GET /api/v1/fix HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if browser.readLine(timeout: patience) != "HTTP/1.1 200 OK" { unanswered.append("HTTP, round \(round)") }
        }
        attackers.forEach { $0.stop() }
        for attacker in attackers { try attacker.waitUntilStopped() }
        // The watcher reads on until it has 60 TPVs, half of what 12 s of the replay hold,
        // and one more since the attack ended: a count of what arrived, however long a busy
        // machine makes that take (bounded, in case none comes).
        let tpvsAtEnd = goodLines.withLock { lines in lines.filter { $0.contains(#""class":"TPV""#) }.count }
        let caughtUp = (try? waitUntil("60 TPVs, and one after the attack", within: 60) {
            let tpvs = goodLines.withLock { lines in lines.filter { $0.contains(#""class":"TPV""#) }.count }
            return tpvs >= 60 && tpvs > tpvsAtEnd
        }) != nil
        #expect(caughtUp, "TPVs stopped coming")
        reading.store(false, ordering: .relaxed)
        usleep(700_000)

        #expect(unanswered.isEmpty, "fresh clients not answered: \(unanswered)")
        let growth = peakMemory - baselineMemory
        print("\(listener): resident memory \(baselineMemory) kB, peak \(peakMemory) kB under attack (+\(growth) kB)")
        #expect(Binaries.isSanitized || growth <= 16 * 1024, "resident memory grew by \(growth) kB")
        let descriptorsBack = (try? waitUntil("descriptors back to baseline", within: 2 * patience) {
            Self.descriptorCount(pid) <= baselineDescriptors
        }) != nil
        #expect(descriptorsBack, "descriptors: \(Self.descriptorCount(pid)) against \(baselineDescriptors) before")

        // Every TPV, in order: each one the capture's next, as gpsfix decode reads it, but
        // where the replay loops back to the start.
        let decoded = try run(Binaries.gpsfix, ["decode", Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path])
        let capture = decoded.split(whereSeparator: \.isNewline).compactMap { line -> String? in
            line.contains(#""class":"TPV""#) ? String(line).json?["time"] as? String : nil
        }
        let position = Dictionary(capture.enumerated().map { ($1, $0) }) { first, _ in first }
        let lines = goodLines.withLock { $0 }
        let times = lines.compactMap { line -> String? in
            line.contains(#""class":"TPV""#) ? line.json?["time"] as? String : nil
        }
        #expect(times.count >= 60, "\(times.count) TPVs")
        let skips = zip(times, times.dropFirst()).filter { earlier, later in
            guard later > earlier else { return false }  // the replay looped
            guard let from = position[earlier], let to = position[later] else { return true }
            return to != from + 1
        }
        #expect(skips.isEmpty, "TPVs missing between: \(skips.prefix(3))")
        #expect(!lines.contains { $0.contains(#""online":false"#) }, "the device was reported silent")
        #expect(!daemon.daemon.errorText.contains("device silent"))

        // The raw watcher's bytes are the device's, every one: what it received is one
        // unbroken stretch of the capture's payload as replayed (looping), so the daemon
        // read and passed on everything the device sent during the attack, in order.
        let payload = try Self.payload(of: "gpsd/haicom-305N.log")
        let received = rawBytes.withLock { $0 }
        let body = Array(received.drop { $0 != UInt8(ascii: "$") })  // after the WATCH answers
        #expect(body.count > 10_000, "\(body.count) raw bytes")
        #expect(!String(decoding: body, as: UTF8.self).contains(#"{"class""#), "JSON in the raw stream")
        let looped = payload + payload
        if let start = looped.firstRange(of: Array(body.prefix(1024)))?.lowerBound {
            var offset = start % payload.count
            let mismatch = body.indices.first { index in
                defer { offset = (offset + 1) % payload.count }
                return body[index] != payload[offset]
            }
            #expect(mismatch == nil, "the raw stream departs from the device's bytes at byte \(mismatch ?? 0) of \(body.count)")
        } else {
            Issue.record("the raw stream's first 1 KiB are not the device's bytes")
        }
    }

    /// A capture's payload as the replayer writes it: without its comment lines.
    static func payload(of fixture: String) throws -> [UInt8] {
        let text = try String(contentsOf: Binaries.fixtures.appendingPathComponent(fixture), encoding: .isoLatin1)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("#") }
        return Array(lines.joined(separator: "\n").utf8.map { $0 })
    }
}
