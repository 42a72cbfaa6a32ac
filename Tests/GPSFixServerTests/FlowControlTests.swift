import Foundation
import GPSFix
import GPSFixDevices
import GPSFixServer
import Logging
import NMEA
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
import NIOPosix
#endif

/// A server reading a pseudo-terminal on its event loop, as the daemon reads one: the
/// path on which production holds a source back (its channel's `autoRead`).
final class PtyServerUnderTest: Sendable {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-flow-\(UUID().uuidString.prefix(8))")
    let terminal: PseudoTerminal
    let server: GPSFixServer
    /// Cycles written into the pseudo-terminal so far.
    let written = Counter()
    private let serving: Task<Void, Never>

    var socketPath: String { folder.appendingPathComponent("s.sock").path }

    init(
        clientBuffer: (low: Int, high: Int) = (8 * 1024, 32 * 1024), stallTimeout: Duration, holdBackLimit: Duration,
        silenceTimeout: Duration = .milliseconds(500), logs: LogRecorder? = nil
    ) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        terminal = try PseudoTerminal()
        server = GPSFixServer(
            configuration: .init(
                socketPath: folder.appendingPathComponent("s.sock").path, release: "test",
                limits: SessionLimits(queuedBytes: clientBuffer, stallTimeout: stallTimeout), holdBackLimit: holdBackLimit),
            group: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "test", factory: { _ -> any LogHandler in logs ?? SwiftLogNoOpLogHandler() }))
        try await server.start()
        var port = SerialPort(path: terminal.path, settings: SerialSettings(speed: 9600))
        port.reactor = server.descriptorReactor
        let provider = NMEALocationProvider(
            source: port, timers: server.timers, silenceTimeout: silenceTimeout, sentenceDemand: server.sentenceDemand,
            readingHold: server.readingHold)
        let server = self.server
        serving = Task { await server.serve(provider) }
    }

    /// Writes `count` cycles into the pseudo-terminal, 50 at a time, counting them. Paced
    /// by a reader (`readerSaw`, the cycles whose TPVs it has read), it writes the next 50
    /// once the reader has read this batch's TPVs, as a receiver sends at its own rate: a
    /// flood the reader cannot keep up with loses its reports, as it should, once no hold
    /// is left. A reader that sees no more for 20 s fails the write.
    func write(cycles count: Int, readerSaw: Counter? = nil) -> Task<Void, any Error> {
        let terminal = self.terminal, written = self.written
        return Task {
            for start in stride(from: 0, to: count, by: 50) {
                let end = min(count, start + 50)
                try await terminal.write(SyntheticReceiver.cycles(start..<end))
                for _ in start..<end { written.increment() }
                guard let readerSaw else { continue }
                // A cycle's TPV is sent once the next cycle begins: the batch's last waits.
                let deadline = ContinuousClock.now + .seconds(20)
                while readerSaw.value < end - 1 {
                    guard ContinuousClock.now < deadline else { throw PacingStalled(cycle: end - 2, saw: readerSaw.value) }
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
        }
    }

    struct PacingStalled: Error, CustomStringConvertible {
        let cycle: Int, saw: Int
        var description: String { "the reader did not get cycle \(cycle)'s TPV within 20 s (it got \(saw) cycles)" }
    }

    func client() async throws -> LineClient {
        let client = try LineClient(unixPath: socketPath)
        #expect(await client.line()?.contains(#""class":"VERSION""#) == true)
        client.send(#"?WATCH={"enable":true,"json":true};"# + "\n")
        #expect(await client.line()?.contains(#""class":"DEVICES""#) == true)
        #expect(await client.line()?.contains(#""class":"WATCH""#) == true)
        return client
    }

    func stop() async {
        serving.cancel()
        await serving.value
        await server.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// What the server does with clients that read slower than a device sends, through the
/// production path: a pseudo-terminal read on the event loop, held back by `autoRead`.
@Suite("Flow control for lagging clients", .serialized)
struct FlowControlTests {
    static let cycles = 3000

    /// Reads lines until none comes for `quiet` seconds (or `limit` seconds pass), on a
    /// thread of its own, keeping in `saw` the cycles up to the last TPV read.
    static func drain(_ client: LineClient, quiet: Double = 1.5, limit: Double = 60, saw: Counter? = nil) async -> [String] {
        await withCheckedContinuation { continuation in
            Thread {
                var lines: [String] = []
                let deadline = Date().addingTimeInterval(limit)
                while Date() < deadline, let line = client.readLine(timeout: quiet) {
                    lines.append(line)
                    if let saw, let index = SyntheticReceiver.index(ofTPV: line) { saw.set(index + 1) }
                }
                continuation.resume(returning: lines)
            }.start()
        }
    }

    /// Waits until `counter` stops moving for 500 ms (at most `seconds`), and returns it.
    static func settled(_ counter: Counter, within seconds: Double = 15) async throws -> Int {
        var last = -1
        let deadline = Date().addingTimeInterval(seconds)
        while counter.value != last, Date() < deadline {
            last = counter.value
            try await Task.sleep(for: .milliseconds(500))
        }
        return counter.value
    }

    /// Whether the TPVs in `lines` are every cycle written, in order (the last may wait
    /// for the next cycle to end it); otherwise says where they differ.
    static func isEveryCycle(_ lines: [String], of count: Int) -> Bool {
        let received = lines.compactMap(SyntheticReceiver.index(ofTPV:))
        guard received != Array(0..<count), received != Array(0..<(count - 1)) else { return true }
        let first = zip(received, 0...).first { $0 != $1 }
        Issue.record("\(received.count) of \(count) cycles, first difference at \(first.map { "\($0.1)" } ?? "the end")")
        return false
    }

    /// Whether the device was reported silent or offline in `lines` before its last cycle
    /// (after it, the device is silent indeed).
    static func reportsSilenceBeforeTheEnd(_ lines: [String], of count: Int) -> Bool {
        let end = lines.firstIndex { SyntheticReceiver.index(ofTPV: $0) == count - 2 } ?? lines.endIndex
        return lines[..<end].contains {
            $0.contains(#""online":false"#) || ($0.contains(#""class":"TPV""#) && $0.contains(#""mode":1"#))
        }
    }

    /// Whether the server closed `client`'s connection: its stream ends after what it holds.
    static func hasEnded(_ client: LineClient) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        var bytes = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var poller = pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 2000) > 0 else { return false }
            if bytes.withUnsafeMutableBytes({ read(client.descriptor, $0.baseAddress, $0.count) }) <= 0 { return true }
        }
        return false
    }

    /// Writes cycles into the harness's pseudo-terminal, 50 at a time, until cancelled.
    static func writeUntilCancelled(_ harness: PtyServerUnderTest) -> Task<Void, any Error> {
        Task {
            var start = 0
            while !Task.isCancelled {
                try await harness.terminal.write(SyntheticReceiver.cycles(start..<start + 50))
                start += 50
            }
        }
    }

    @Test("a pseudo-terminal is held back while a watcher lags, is not reported silent, and the watcher gets every cycle once it reads")
    func holdsBackWhatCanWait() async throws {
        let harness = try await PtyServerUnderTest(stallTimeout: .seconds(60), holdBackLimit: .seconds(60))
        let client = try await harness.client()
        let writing = harness.write(cycles: Self.cycles)
        // The client reads nothing: its socket and its 32 KiB fill, the loop stops reading
        // the pty, whose buffer fills, and the writer waits, far short of every cycle,
        // for longer than the silence timeout (0.5 s).
        let taken = try await Self.settled(harness.written)
        #expect(taken < Self.cycles, "the pseudo-terminal was not held back: \(taken) cycles written")
        let lines = await Self.drain(client)
        try await writing.value
        let everyCycle = Self.isEveryCycle(lines, of: Self.cycles)
        #expect(everyCycle)
        let silent = Self.reportsSilenceBeforeTheEnd(lines, of: Self.cycles)
        #expect(!silent, "a held-back device was reported silent")
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.cutOff == 0 && clients.reportsDropped == 0)
        await harness.stop()
    }

    @Test("the hold for a lagging watcher runs out: the device reads on for the others, and the laggard loses reports, counted")
    func holdRunsOut() async throws {
        let harness = try await PtyServerUnderTest(stallTimeout: .seconds(60), holdBackLimit: .milliseconds(300))
        let lagging = try await harness.client()
        let reader = try await harness.client()
        let saw = Counter()
        let reading = Task { await Self.drain(reader, quiet: 3, saw: saw) }
        let writing = harness.write(cycles: Self.cycles, readerSaw: saw)
        let timeout = Task {  // a writer held for good fails the test instead of hanging it
            try await Task.sleep(for: .seconds(60))
            writing.cancel()
        }
        try await writing.value
        timeout.cancel()
        let everyCycle = Self.isEveryCycle(await reading.value, of: Self.cycles)
        #expect(everyCycle)
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.reportsDropped > 0 && clients.cutOff == 0)
        // The laggard is still served once it reads.
        let caughtUp = await Self.drain(lagging)
        #expect(caughtUp.contains { SyntheticReceiver.index(ofTPV: $0) != nil })
        await harness.stop()
    }

    @Test("a watcher over its cap for the stall timeout is cut off even while it trickles, and the others get every cycle")
    func cutsOffATrickle() async throws {
        let harness = try await PtyServerUnderTest(stallTimeout: .seconds(1), holdBackLimit: .milliseconds(300))
        let trickler = try await harness.client()
        let reader = try await harness.client()
        let saw = Counter()
        let reading = Task { await Self.drain(reader, quiet: 3, saw: saw) }
        // 64 bytes every 50 ms: 1.3 KB/s, far below what the device sends.
        let trickle = Atomic<Bool>(true)
        let trickling = Thread {
            var bytes = [UInt8](repeating: 0, count: 64)
            while trickle.load(ordering: .relaxed) {
                _ = bytes.withUnsafeMutableBytes { read(trickler.descriptor, $0.baseAddress, $0.count) }
                usleep(50_000)
            }
        }
        trickling.start()
        try await harness.write(cycles: Self.cycles, readerSaw: saw).value
        let everyCycle = Self.isEveryCycle(await reading.value, of: Self.cycles)
        #expect(everyCycle)
        trickle.store(false, ordering: .relaxed)
        // Past what its socket still holds, the trickler's connection has ended.
        #expect(Self.hasEnded(trickler), "the trickling watcher was not cut off")
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.cutOff == 1)
        await harness.stop()
    }

    @Test("a watcher that stops reading finds no more waiting for it in its socket, once cut off, than the sessions' send buffer holds (the kernel's own would hold minutes of reports)")
    func socketSendBufferIsBounded() async throws {
        let harness = try await PtyServerUnderTest(stallTimeout: .seconds(1), holdBackLimit: .milliseconds(300))
        let stalled = try await harness.client()
        let reader = try await harness.client()
        let saw = Counter()
        let reading = Task { await Self.drain(reader, quiet: 3, saw: saw) }
        try await harness.write(cycles: Self.cycles, readerSaw: saw).value
        _ = await reading.value
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.cutOff == 1)
        // Cut off: what it reads now is what its socket held, up to the end.
        var held = 0
        var bytes = [UInt8](repeating: 0, count: 65536)
        while true {
            var poller = pollfd(fd: stalled.descriptor, events: Int16(POLLIN), revents: 0)
            try #require(poll(&poller, 1, 10_000) > 0, "the stalled watcher's connection did not end")
            let count = bytes.withUnsafeMutableBytes { read(stalled.descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            held += count
        }
        // The kernel doubles the size asked for, for its own bookkeeping.
        #expect(held <= 2 * SessionLimits().sendBuffer, "\(held) bytes waited in the socket")
        await harness.stop()
    }

    @Test("clients cut off one after another are each counted, and logged once a minute")
    func cutOffsLoggedOnceAMinute() async throws {
        let logs = LogRecorder()
        let harness = try await PtyServerUnderTest(stallTimeout: .milliseconds(500), holdBackLimit: .zero, logs: logs)
        var sleepers: [LineClient] = []
        for _ in 0..<3 { sleepers.append(try await harness.client()) }
        let writing = Self.writeUntilCancelled(harness)
        let deadline = ContinuousClock.now + .seconds(30)
        var cutOff = 0
        while cutOff < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            cutOff = try #require(await harness.server.snapshot()?.clients).cutOff
        }
        #expect(cutOff == 3)
        let lines = logs.lines.filter { $0.contains("client cut off") }
        #expect(lines.count == 1, "\(lines)")
        writing.cancel()
        _ = try? await writing.value
        for sleeper in sleepers { sleeper.hangUp() }
        await harness.stop()
    }

    @Test("a client that sends requests without reading is read no further than its answers can be written, and others are served")
    func requestFloodIsBounded() async throws {
        let harness = try await PtyServerUnderTest(stallTimeout: .seconds(2), holdBackLimit: .milliseconds(300))
        let reader = try await harness.client()
        let flooder = try LineClient(unixPath: harness.socketPath)
        _ = fcntl(flooder.descriptor, F_SETFL, fcntl(flooder.descriptor, F_GETFL) | O_NONBLOCK)
        let line = Array((String(repeating: "?POLL;", count: 170) + "\n").utf8)
        let saw = Counter()
        let reading = Task { await Self.drain(reader, quiet: 3, saw: saw) }
        let writing = harness.write(cycles: 300, readerSaw: saw)
        // Sends for 3 s, as fast as the socket takes it: once the server stops reading,
        // the socket's buffers fill and the sends are refused.
        var accepted = 0
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            let sent = line.withUnsafeBytes { send(flooder.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 { accepted += sent } else if errno == EAGAIN { usleep(1000) } else { break }
        }
        #expect(accepted < 8 << 20, "the server read \(accepted) bytes of requests it could not answer")
        try await writing.value
        let everyCycle = Self.isEveryCycle(await reading.value, of: 300)
        #expect(everyCycle)
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.cutOff == 1)
        await harness.stop()
    }

    @Test("a source that cannot wait is never held back: a lagging watcher loses reports, counted, and stays while it reads")
    func dropsForALaggingWatcherOfASerialSource() async throws {
        // A real UART cannot be had here: a mock provider that cannot wait stands in for it.
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"], canWait: false,
            limits: SessionLimits(queuedBytes: (8 * 1024, 32 * 1024), stallTimeout: .seconds(60)))
        let provider = harness.providers[0]
        let client = try await harness.client()
        let reports = 5000
        for index in 0..<reports {
            var fix = ServerTests.fix
            let clock = NMEATime(hour: UInt8(index / 3600), minute: UInt8(index / 60 % 60), second: UInt8(index % 60), nanosecond: 0)
            fix.time = GPSTime(year: 2026, month: 11, day: 22, time: clock)
            provider.yield(.fix(fix))
        }
        // Every report is taken at once: nothing waits for the client.
        var published = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let clients = try #require(await harness.server.snapshot()?.clients)
            published = clients.reportsSent + clients.reportsDropped
            if published >= reports { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(published >= reports)
        let received = (await Self.drain(client)).compactMap(SyntheticReceiver.index(ofTPV:))
        #expect(received.count < reports && received == received.sorted() && Set(received).count == received.count)
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.reportsDropped == reports - received.count && clients.cutOff == 0)
        await harness.stop()
    }
}
