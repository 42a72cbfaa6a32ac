import GPSFix
import GPSFixDevices
import NMEA
import Synchronization
import TestSupport
import Testing

/// A byte source that replays scripted sessions: each call to `chunks()` plays the next
/// one, which either ends, fails, is refused (a gpsd answering ERROR) or stays open
/// without data (a silent device).
final class ScriptedSource: ByteSource {
    enum Ending: Sendable { case finish, fail, refuse, hang }
    struct DeviceGone: Error {}

    let name = "/dev/scripted"
    let sessions: [([UInt8], Ending)]
    private let calls = Locked(0)
    /// The clock the openings are stamped on, when given.
    private let clock: ManualClock?
    private let stamps = Locked<[Duration]>([])
    /// How many times the source was opened.
    var openings: Int { calls.withLock { $0 } }
    /// When it was opened, on ``clock``.
    var openedAt: [Duration] { stamps.withLock { $0 } }
    /// What ``hasUnreadInput`` says: the test sets it.
    let unread = Locked(false)
    var hasUnreadInput: Bool { unread.withLock { $0 } }

    init(_ sessions: [([UInt8], Ending)], clock: ManualClock? = nil) {
        self.sessions = sessions
        self.clock = clock
    }

    func chunks() -> ByteChunks {
        let index = calls.withLock { calls in defer { calls += 1 }; return calls }
        if let clock { stamps.withLock { $0.append(clock.now.offset) } }
        let (bytes, ending) = index < sessions.count ? sessions[index] : ([], .hang)
        return ByteChunks(AsyncThrowingStream { continuation in
            if !bytes.isEmpty { continuation.yield(ByteChunk(bytes)) }
            switch ending {
            case .finish: continuation.finish()
            case .fail: continuation.finish(throwing: DeviceGone())
            case .refuse: continuation.finish(throwing: DeviceError.refused(path: "gpsd://scripted", message: "gpsd has 2 devices"))
            case .hang: break
            }
        })
    }
}

@Suite("NMEA location provider", .timeLimit(.minutes(1)))
struct ProviderTests {
    let cycle = Array(
        (sentence("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,")
            + sentence("$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A")).utf8)

    @Test("a source that falls silent decays to no fix after the timeout, told by a device event; then the watch sleeps without a timer")
    func silenceDecays() async throws {
        let clock = ManualClock()
        let provider = NMEALocationProvider(source: ScriptedSource([(cycle, .hang)]), clock: clock, silenceTimeout: .seconds(2))
        var iterator = provider.updateStream().makeAsyncIterator()
        #expect(
            await iterator.next()
                == .device(DeviceEvent(device: "/dev/scripted", kind: .activated, receiver: ReceiverIdentity(driver: "NMEA0183"))))
        // The cycle is open until its end is known: no fix yet, nothing until the clock moves.
        // The watch sleeps until a timeout after the last sentence: still asleep after 1.9 s.
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(1900))
        try await Task.sleep(for: .milliseconds(20))
        #expect(clock.sleeping == 1)
        clock.advance(by: .milliseconds(100))
        var noFix = Fix()
        noFix.mode = .noFix
        #expect(await iterator.next() == .fix(noFix))
        #expect(await iterator.next() == .device(DeviceEvent(device: "/dev/scripted", kind: .silent)))
        // Silent, the watch waits for the reader's next sentence, not on the clock.
        try await Task.sleep(for: .milliseconds(50))
        #expect(clock.sleeping == 0)
    }

    @Test("a source whose bytes wait unread is not silent for three timeouts (its reader is late); past that it is (bytes that never make a sentence)")
    func unreadInputPutsSilenceOff() async throws {
        let clock = ManualClock()
        let source = ScriptedSource([(cycle, .hang)])
        source.unread.withLock { $0 = true }
        let provider = NMEALocationProvider(source: source, clock: clock, silenceTimeout: .seconds(2))
        let updates = Locked<[LocationUpdate]>([])
        let running = Task { await provider.run { update in updates.withLock { $0.append(contentsOf: update) } } }
        func silenced() -> Bool { updates.withLock { $0.contains(.device(DeviceEvent(device: "/dev/scripted", kind: .silent))) } }
        // Three timeouts with bytes waiting: the watch sets itself again each time.
        for _ in 0..<3 {
            await clock.waitForSleepers()
            clock.advance(by: .seconds(2))
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(!silenced())
        // A fourth: the bytes waiting are no sign of life any more.
        await clock.waitForSleepers()
        clock.advance(by: .seconds(2))
        for _ in 0..<100 where !silenced() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(silenced())
        running.cancel()
        await running.value
    }

    @Test("stopping a provider whose device never sent reports nothing: no silence, no decayed fix")
    func cancelledBeforeAnySentence() async throws {
        let clock = ManualClock()
        let provider = NMEALocationProvider(source: ScriptedSource([([], .hang)]), clock: clock, silenceTimeout: .seconds(2))
        let updates = Locked<[LocationUpdate]>([])
        let running = Task { await provider.run { update in updates.withLock { $0.append(contentsOf: update) } } }
        try await Task.sleep(for: .milliseconds(50))
        clock.advance(by: .seconds(10))
        running.cancel()
        await running.value
        let reported = updates.withLock { $0 }
        #expect(!reported.contains { if case .fix = $0 { true } else if case .device = $0 { true } else { false } }, "\(reported)")
    }

    @Test("a failing source is reported lost, reopened after a backoff, and reported recovered")
    func reopensLostSource() async throws {
        let clock = ManualClock()
        let source = ScriptedSource([(cycle, .fail), ([], .fail), (cycle, .finish)])
        let provider = NMEALocationProvider(source: source, clock: clock, silenceTimeout: .seconds(60))
        let finished = Atomic<Bool>(false)
        let collected = Task {
            var events: [DeviceEvent.Kind] = []
            for await update in provider.updateStream() { if case .device(let event) = update { events.append(event.kind) } }
            finished.store(true, ordering: .releasing)
            return events
        }
        // Moves time on until the script has played out, however busy the machine is.
        for _ in 0..<20_000 where !finished.load(ordering: .acquiring) {
            try await Task.sleep(for: .milliseconds(1))
            clock.advance(by: .milliseconds(100))
        }
        collected.cancel()  // a no-op once finished; a hung script fails the test instead
        let events = await collected.value
        // The script's data then ends: said last.
        #expect(events.count == 4)
        #expect(events.first == .activated && events.dropLast().last == .recovered && events.last == .ended)
        if events.count > 1, case .lost(let reason) = events[1] { #expect(reason.contains("DeviceGone")) } else { Issue.record("no lost event") }
    }

    /// A source playing `sessions`, read by a provider while its clock was moved on by
    /// `step` every 5 ms until `until` said so of the source, 4,000 steps at most.
    static func opened(
        playing sessions: [([UInt8], ScriptedSource.Ending)], step: Duration, until enough: (ScriptedSource) -> Bool
    ) async throws -> ScriptedSource {
        let clock = ManualClock()
        let source = ScriptedSource(sessions, clock: clock)
        let provider = NMEALocationProvider(source: source, clock: clock, silenceTimeout: .seconds(600))
        let running = Task { await provider.run { _ in } }
        for _ in 0..<4000 {
            if enough(source) { break }
            try await Task.sleep(for: .milliseconds(5))
            clock.advance(by: step)
        }
        running.cancel()
        await running.value
        return source
    }

    @Test("a source that refuses (a gpsd with two devices, or answering ERROR) is asked again after a wait that doubles up to a minute; one that fails otherwise, within a second again")
    func refusalsBackOff() async throws {
        // Twelve refusals, then failures of another kind (gpsd gone). On the provider's
        // clock in steps of 200 ms (a machine too busy to reopen within a step's 5 ms
        // makes the waits longer, never shorter).
        let sessions = Array(repeating: ([UInt8](), ScriptedSource.Ending.refuse), count: 12) + Array(repeating: ([], .fail), count: 3)
        let source = try await Self.opened(playing: sessions, step: .milliseconds(200)) { $0.openings >= 14 }
        let opened = source.openedAt
        try #require(opened.count >= 14, "\(opened)")
        let waits = zip(opened.dropFirst(), opened).map { $0 - $1 }
        // After the first refusals, 0.05 s doubled each time: past the daemon's 1 s.
        for (index, wait) in waits.prefix(12).enumerated() {
            #expect(wait >= min(.milliseconds(50) * (1 << index), .seconds(60)), "wait \(index): \(waits)")
        }
        #expect(waits.prefix(12).max()! < .seconds(80), "at most a minute (and a lagging step's slack): \(waits)")
        // The first failure after the refusals: waited for within a second, not a minute.
        #expect(waits[12] < .seconds(6), "\(waits)")
    }

    @Test("a source that sends a cycle and fails at once, again and again, is reopened after a doubling wait, not every 50 ms")
    func shortOpeningsBackOff() async throws {
        // 750 ms on the provider's clock: reopened every 50 ms, fifteen openings; after 50,
        // 100, 200 and 400 ms, five at most.
        var steps = 0
        let source = try await Self.opened(playing: Array(repeating: (cycle, .fail), count: 30), step: .milliseconds(10)) { _ in
            defer { steps += 1 }
            return steps == 75
        }
        #expect((1...5).contains(source.openings), "\(source.openings) openings")
    }

    @Test("with sentence forwarding on, every accepted sentence is passed on as received")
    func forwardsSentences() async {
        let provider = NMEALocationProvider(source: ScriptedSource([(cycle, .finish)]), sentenceDemand: SentenceDemand(sentences: true))
        var sentences: [String] = []
        var fixes = 0
        for await update in provider.updateStream() {
            if case .sentence(let line) = update { sentences.append(String(decoding: line, as: UTF8.self)) }
            if case .fix(let fix) = update, fix.mode != .noFix { fixes += 1 }
        }
        #expect(sentences.count == 2 && sentences[0].hasPrefix("$GPGGA,081412.000") && sentences[1].hasSuffix("*") == false)
        #expect(fixes == 1)
    }
}
