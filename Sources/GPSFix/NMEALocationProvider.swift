import NMEA
import Synchronization

/// The real ``LocationProvider``: NMEA bytes from any ``ByteSource``, framed, assembled
/// and turned into updates.
///
/// It reports the device's life as ``DeviceEvent``s: activated with its first valid
/// sentence, silent (and its fix decayed to no fix) when no sentence arrives for
/// ``silenceTimeout``, resumed with the first sentence after that, lost when the source
/// fails, recovered when it is reopened. A lost
/// source is reopened with exponential backoff, from 50 ms up to ``maximumBackoff``, so
/// a device that comes back is read again within about that long, without a busy loop.
public struct NMEALocationProvider: LocationProvider {
    public let source: any ByteSource
    public var device: String { source.name }
    /// How long without a valid sentence before the fix decays to no fix.
    public var silenceTimeout: Duration
    /// The longest wait between attempts to reopen a lost source.
    public var maximumBackoff: Duration
    /// While on, every accepted sentence is also passed on (for raw `nmea` watchers).
    public var sentenceDemand: SentenceDemand
    public var framing: NMEAFramer.Configuration
    public var centuryRule: CenturyRule
    private let clock: any Clock<Duration>

    public init(
        source: any ByteSource, clock: any Clock<Duration> = ContinuousClock(), silenceTimeout: Duration = .seconds(3),
        maximumBackoff: Duration = .seconds(1), sentenceDemand: SentenceDemand = SentenceDemand(),
        framing: NMEAFramer.Configuration = .lenient, centuryRule: CenturyRule = CenturyRule()
    ) {
        self.source = source
        self.clock = clock
        self.silenceTimeout = silenceTimeout
        self.maximumBackoff = maximumBackoff
        self.sentenceDemand = sentenceDemand
        self.framing = framing
        self.centuryRule = centuryRule
    }

    public func updates() -> AsyncStream<LocationUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: LocationUpdate.self, bufferingPolicy: .bufferingNewest(4096))
        let task = Task {
            await run { continuation.yield($0) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func run(delivering deliver: @escaping @Sendable (LocationUpdate) async -> Void) async {
        let activity = Activity()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await read(deliver, activity) }
            group.addTask { await watchSilence(deliver, activity) }
            await group.next()  // reading ended: the data is over, or we were cancelled
            group.cancelAll()
        }
    }

    private func read(_ deliver: @Sendable (LocationUpdate) async -> Void, _ activity: Activity) async {
        let decoder = NMEAStreamDecoder(framing: framing, centuryRule: centuryRule)
        let session = ReadingSession(device: device)
        let source = self.source
        let sentenceDemand = self.sentenceDemand
        // What one chunk completes, delivered once the chunk is parsed (the parser calls
        // back synchronously; delivering may wait). The buffer is reused.
        var pending: [LocationUpdate] = []
        // The device event goes out before anything its first sentence completes.
        decoder.onSentence = { sentence in
            // Both are taken: a device reopened after a silence is announced once.
            let announcement = session.takeAnnouncement(), resumption = activity.takeResumption(of: session.device)
            if var event = announcement ?? resumption {
                event.line = source.line
                pending.append(.device(event))
            }
            if sentenceDemand.isWanted { pending.append(.sentence(Array(sentence.line))) }
        }
        let emit: (LocationUpdate) -> Void = { pending.append($0) }
        let counters = {
            var counters = DeviceCounters()
            counters.framing = decoder.framer.statistics
            counters.assembly = decoder.assembler.statistics
            counters.reconnects = session.reconnects
            return LocationUpdate.counters(counters)
        }
        func deliverPending() async {
            for update in pending { await deliver(update) }
            pending.removeAll(keepingCapacity: true)
        }
        var backoff = Duration.milliseconds(50)
        while !Task.isCancelled {
            do {
                for try await chunk in source.chunks() {
                    if sentenceDemand.areBytesWanted { pending.append(.bytes(chunk)) }
                    let sentencesBefore = decoder.framer.statistics.sentences
                    let cyclesBefore = decoder.assembler.statistics.cycles
                    chunk.withUnsafeBytes { decoder.feed($0, emit) }
                    if decoder.framer.statistics.sentences > sentencesBefore {
                        activity.record()
                        backoff = .milliseconds(50)
                    }
                    if decoder.assembler.statistics.cycles > cyclesBefore { pending.append(counters()) }
                    await deliverPending()
                }
                decoder.finish(emit)
                pending.append(counters())
                await deliverPending()
                return
            } catch {
                if Task.isCancelled { return }
                decoder.resetFraming()
                if let event = session.lose(reason: "\(error)") {
                    pending.append(.device(event))
                    pending.append(counters())
                }
                await deliverPending()
                try? await clock.sleep(for: backoff)
                backoff = min(backoff * 2, maximumBackoff)
            }
        }
    }

    /// Every half timeout, checks whether sentences arrived; two silent halves in a row
    /// make the device silent.
    private func watchSilence(_ deliver: @Sendable (LocationUpdate) async -> Void, _ activity: Activity) async {
        var quietHalves = 0
        var reported = false
        while !Task.isCancelled {
            do { try await clock.sleep(for: silenceTimeout / 2) } catch { return }
            if activity.takeRecent() {
                quietHalves = 0
                reported = false
                continue
            }
            quietHalves += 1
            if quietHalves >= 2, !reported, activity.wasEverActive {
                reported = true
                var fix = Fix()
                fix.mode = .noFix
                await deliver(.fix(fix))
                await deliver(.device(DeviceEvent(device: device, kind: .silent)))
                // Only now: a sentence before it would be announced ahead of the silence.
                activity.markSilent()
            }
        }
    }
}

/// Whether sentences arrived lately, shared by the reading and the watching tasks:
/// flags, so that recording costs the reading no suspension.
private final class Activity: Sendable {
    private let recent = Atomic<Bool>(false)
    private let everActive = Atomic<Bool>(false)
    private let silent = Atomic<Bool>(false)

    /// The device was reported silent.
    func markSilent() {
        silent.store(true, ordering: .releasing)
    }

    /// The event announcing that a silent device sends again, once per silence.
    func takeResumption(of device: String) -> DeviceEvent? {
        guard silent.load(ordering: .relaxed), silent.exchange(false, ordering: .acquiring) else { return nil }
        return DeviceEvent(device: device, kind: .resumed)
    }

    func record() {
        recent.store(true, ordering: .relaxed)
        everActive.store(true, ordering: .relaxed)
    }

    func takeRecent() -> Bool {
        recent.exchange(false, ordering: .relaxed)
    }

    var wasEverActive: Bool { everActive.load(ordering: .relaxed) }
}

/// The device events of one provider's reading: activated or recovered once per opening
/// that yields a sentence, lost once per failure. Used by the reading task alone.
private final class ReadingSession {
    let device: String
    private var announced = false
    private var lost = false
    /// Openings after a loss that yielded sentences again.
    private(set) var reconnects = 0

    init(device: String) {
        self.device = device
    }

    /// The event to send with the first sentence after opening, once.
    func takeAnnouncement() -> DeviceEvent? {
        guard !announced else { return nil }
        announced = true
        defer { lost = false }
        if lost { reconnects += 1 }
        return DeviceEvent(device: device, kind: lost ? .recovered : .activated)
    }

    /// The event for a failure, unless the device was already lost.
    func lose(reason: String) -> DeviceEvent? {
        announced = false
        guard !lost else { return nil }
        lost = true
        return DeviceEvent(device: device, kind: .lost(reason: reason))
    }
}
