import GPSFix
import NIOConcurrencyHelpers
import NMEA
import ReceiverDrivers
import OutputFormats

/// The real ``LocationProvider``: a receiver's bytes (NMEA 0183, u-blox UBX, or both)
/// from any ``ByteSource``, framed, assembled and turned into updates.
///
/// It reports the device's life as ``DeviceEvent``s: activated with its first valid
/// sentence, silent (and its fix decayed to no fix) when no sentence arrives for
/// ``silenceTimeout``, resumed with the first sentence after that, lost when the source
/// fails, recovered when it is reopened. The silence is watched with one timer from
/// `timers`, moved ahead by the sentences and left unset while the device is silent. A lost
/// source is reopened with exponential backoff, from 50 ms up to ``maximumBackoff``, so
/// a device that comes back is read again within about that long, without a busy loop;
/// one that refused is asked again after up to ``maximumRefusalBackoff``.
public struct NMEALocationProvider: LocationProvider {
    public let source: any ByteSource
    public var device: String { source.name }
    public var canWait: Bool { source.canWait }
    /// How long without a valid sentence before the fix decays to no fix.
    public var silenceTimeout: Duration
    /// The longest wait between attempts to reopen a lost source.
    public var maximumBackoff: Duration
    /// While on, every accepted sentence is also passed on (for raw `nmea` watchers).
    public var sentenceDemand: SentenceDemand
    /// While on, a source that can wait is held back by its consumer: not silence.
    public var readingHold: ReadingHold
    public var framing: NMEAFramer.Configuration
    public var centuryRule: CenturyRule
    /// Where the receiver's answers to configuration go while a conversation listens.
    public let replies: ReceiverReplies
    private let clock: any Clock<Duration>
    private let timers: any TimerScheduler

    /// `clock` measures the silence and paces the reopening; `timers` wakes the silence
    /// watch (a task sleeping on `clock` when not given).
    public init(
        source: any ByteSource, clock: any Clock<Duration> = ContinuousClock(), timers: (any TimerScheduler)? = nil,
        silenceTimeout: Duration = .seconds(3), maximumBackoff: Duration = .seconds(1),
        sentenceDemand: SentenceDemand = SentenceDemand(), readingHold: ReadingHold = ReadingHold(),
        framing: NMEAFramer.Configuration = .lenient, centuryRule: CenturyRule = CenturyRule(),
        replies: ReceiverReplies = ReceiverReplies()
    ) {
        self.replies = replies
        self.source = source
        self.clock = clock
        self.timers = timers ?? ClockTimers(clock: clock)
        self.silenceTimeout = silenceTimeout
        self.maximumBackoff = maximumBackoff
        self.sentenceDemand = sentenceDemand
        self.readingHold = readingHold
        self.framing = framing
        self.centuryRule = centuryRule
    }

    public func run(delivering deliver: @escaping @Sendable ([LocationUpdate]) -> Void) async {
        let device = self.device
        let hold = canWait ? readingHold : nil
        let source = self.source
        let activity = DeviceActivity(
            clock: clock, timers: timers, timeout: silenceTimeout, hold: hold, hasUnreadInput: { source.hasUnreadInput }
        ) {
            deliver([.fix(Self.noFix), .device(DeviceEvent(device: device, kind: .silent))])
        }
        let ended = await read(deliver, activity)
        activity.stop()
        // A log read to its end holds no fix any more: said once, as for a silence.
        if ended { deliver([.fix(Self.noFix), .device(DeviceEvent(device: device, kind: .ended))]) }
    }

    /// The wait before the first reopening after a steady opening.
    static let firstBackoff = Duration.milliseconds(50)
    /// The longest wait before asking again a source that refused (``DeviceError/refused``:
    /// a gpsd answering ERROR, or with several devices): its answer changes when its
    /// operator acts, not within the second a device that is absent is looked for again.
    static let maximumRefusalBackoff = Duration.seconds(60)
    /// How long an opening must have lasted, sending sentences, for its failure to be
    /// retried after ``firstBackoff`` again rather than after the doubled wait.
    static let steadyOpening = Duration.seconds(10)

    /// What a device's fix decays to.
    private static var noFix: Fix {
        var fix = Fix()
        fix.mode = .noFix
        return fix
    }

    /// Reads the source until its data ends (returns `true`) or the task is cancelled,
    /// reopening it with a backoff when it fails. Each chunk is parsed where it is read
    /// (the server's event loop, or the source's reading thread in the tools), and what it
    /// completes is delivered from there at once.
    private func read(_ deliver: @escaping @Sendable ([LocationUpdate]) -> Void, _ activity: DeviceActivity) async -> Bool {
        let source = self.source
        // A serial port given its speed finds it too once configuration has switched it
        // (the receiver may come back at either speed): asked at each loss of frames.
        let search = source.findsSpeed || source.line != nil ? SpeedSearch() : nil
        let reading = ReadingState(
            device: device, line: { [source] in source.line }, sentenceDemand: sentenceDemand,
            decoder: ReceiverStreamDecoder(framing: framing, centuryRule: centuryRule, drivers: ReceiverDrivers.all),
            activity: activity, replies: replies, searchesSpeed: { [source] in source.findsSpeed })
        let handle: @Sendable (ByteChunk) -> Void = { chunk in
            let speedLost = reading.exclusively {
                reading.take(chunk)
                reading.deliverPending(to: deliver)
                return reading.takeSpeedLoss()
            }
            // Out of the reading's lock: ending the opening closes the device's channel.
            if speedLost { search?.request() }
        }
        var backoff = Self.firstBackoff
        while !Task.isCancelled {
            let opened = activity.now
            do {
                if let search {
                    try await search.run {
                        try await source.chunks().forEach(onReadingThread: handle)
                    } lost: {
                        DeviceError.speedLost(path: source.name, bps: source.line?.bps)
                    }
                } else {
                    try await source.chunks().forEach(onReadingThread: handle)
                }
                reading.exclusively {
                    reading.finish()
                    reading.deliverPending(to: deliver)
                }
                return !Task.isCancelled
            } catch {
                if Task.isCancelled { return false }
                // A source that sent sentences for a while before failing is retried soon
                // again; one that fails as soon as it sends (a flapping cable, an upstream
                // that drops each client) backs off as one that sends nothing does.
                let sentSentences = reading.exclusively { reading.takeSentencesSinceOpening() }
                if sentSentences, activity.now - opened >= Self.steadyOpening { backoff = Self.firstBackoff }
                reading.exclusively {
                    reading.lose(reason: "\(error)")
                    reading.deliverPending(to: deliver)
                }
                // The limit of this failure's kind, for this wait too: a gpsd gone after
                // refusing is looked for again within the second.
                let isRefusal = if case DeviceError.refused = error { true } else { false }
                let limit = isRefusal ? max(maximumBackoff, Self.maximumRefusalBackoff) : maximumBackoff
                backoff = min(backoff, limit)
                try? await clock.sleep(for: backoff)
                backoff = min(backoff * 2, limit)
            }
        }
        return false
    }
}

/// One provider's reading: the decoder and what the reading has announced, used by one
/// thread at a time, under its lock (``exclusively(_:)``): the source's reading thread
/// while a chunk is parsed, the provider's task between openings. The source's ending
/// orders the two in time, but the hand-over from an event loop's read to the task that
/// awaits the ending is no ordering the memory model (or ThreadSanitizer) sees; the lock,
/// never contended, makes it one.
private final class ReadingState: @unchecked Sendable {
    private let lock = NIOLock()

    /// Runs `body` holding the reading's lock.
    func exclusively<Result>(_ body: () throws -> Result) rethrows -> Result {
        try lock.withLock(body)
    }

    let device: String
    /// The serial line as set, once the source is open.
    let line: @Sendable () -> SerialLine?
    let sentenceDemand: SentenceDemand
    let decoder: ReceiverStreamDecoder
    let activity: DeviceActivity
    let replies: ReceiverReplies
    /// Whether the source finds its speed now, and so is searched again when its bytes
    /// stop making frames.
    let searchesSpeed: @Sendable () -> Bool
    /// When bytes that made no frame began to arrive, since the last frame or pause, and
    /// when the last of them did.
    private var unframed: (since: Duration, last: Duration)?
    /// The bytes have made no frame for a whole silence timeout: the speed is lost.
    private var speedLost = false
    /// What the chunk being parsed completed, delivered once it is parsed.
    private var pending: [LocationUpdate] = []
    private var timeSampler = ReceiverTimeSampler()
    private var announced = false
    private var lost = false
    /// Openings after a loss that yielded sentences again.
    private var reconnects = 0
    /// Whether valid sentences were read since the last ``takeSentencesSinceOpening()``.
    private var sentencesSinceOpening = false
    /// The receiver and its line as last announced, and the decoder's count of its changes then.
    private var identified: ReceiverIdentity?
    private var announcedLine: SerialLine?
    private var receiverChanges = 0
    /// Whether the chunk being parsed completed a cycle (its fix emitted): the device's
    /// counters follow it.
    private var cycleCompleted = false
    /// NMEA sentences the receiver sent since the last fix: one that sends its own gets
    /// none written for it.
    private var sentencesSinceFix = 0
    /// The last fix's mode, and the last view's satellites used and HDOP, for the NMEA
    /// written for a binary receiver.
    private var lastMode = FixMode.unknown
    private var lastView: (satellitesUsed: Int?, hdop: Double?)?
    /// Whether a view of satellites (not of signals) was written since the last fix.
    private var satelliteViewSinceFix = false

    init(
        device: String, line: @escaping @Sendable () -> SerialLine?, sentenceDemand: SentenceDemand,
        decoder: ReceiverStreamDecoder, activity: DeviceActivity, replies: ReceiverReplies,
        searchesSpeed: @escaping @Sendable () -> Bool
    ) {
        self.device = device
        self.line = line
        self.sentenceDemand = sentenceDemand
        self.decoder = decoder
        self.activity = activity
        self.replies = replies
        self.searchesSpeed = searchesSpeed
        // The device event goes out before anything its first frame completes.
        decoder.onSentence = { [unowned self] sentence in
            announceIfDue()
            sentencesSinceFix &+= 1
            if sentenceDemand.isWanted { pending.append(.sentence(Array(sentence.line))) }
        }
        decoder.onBinaryFrame = { [unowned self] frame in
            announceIfDue()
            replies.offer(frame)
        }
        decoder.onRTCM3Frame = { [unowned self] frame in
            if sentenceDemand.areCorrectionsWanted { pending.append(.rtcm3(Array(frame))) }
        }
    }

    /// Announces the device with the first frame after an opening or a silence. Both are
    /// taken: a device reopened after a silence is announced once.
    private func announceIfDue() {
        let announcement = takeAnnouncement(), resumption = activity.takeResumption(of: device)
        guard var event = announcement ?? resumption else { return }
        timeSampler.restart()
        event.line = line()
        event.receiver = decoder.receiver
        identified = event.receiver
        announcedLine = event.line
        receiverChanges = decoder.receiverChanges
        pending.append(.device(event))
    }

    /// Parses one chunk.
    func take(_ chunk: ByteChunk) {
        if sentenceDemand.areBytesWanted { pending.append(.bytes(chunk.bytes)) }
        decoder.readAt = chunk.readAt
        let framesBefore = decoder.framesAccepted
        let binaryFramesBefore = decoder.framer.binaryStatistics.frames
        cycleCompleted = false
        chunk.bytes.withUnsafeBytes { decoder.feed($0, emit) }
        if decoder.framesAccepted > framesBefore {
            activity.record()
            sentencesSinceOpening = true
            unframed = nil
        } else if !chunk.bytes.isEmpty {
            takeUnframed()
        }
        if cycleCompleted { pending.append(counters()) }
        // A receiver that began speaking UBX, or answered MON-VER (as it does after a
        // configuration), is named anew, with its line (a new speed) as it is now: only a
        // binary frame changes what names it.
        if identified != nil, decoder.framer.binaryStatistics.frames != binaryFramesBefore,
           decoder.receiverChanges != receiverChanges {
            receiverChanges = decoder.receiverChanges
            let receiver = decoder.receiver, line = line()
            if receiver != identified || line != announcedLine {
                identified = receiver
                announcedLine = line
                pending.append(.device(DeviceEvent(device: device, kind: .identified, line: line, receiver: receiver)))
            }
        }
    }

    /// Bytes that made no frame. When only such have come for a whole silence timeout,
    /// without a pause as long, on a source that finds its speed and while no
    /// conversation listens (it may be switching the speed), the receiver is at another
    /// speed: ``takeSpeedLoss()`` says so.
    private func takeUnframed() {
        guard searchesSpeed() else { return }
        let now = activity.now
        guard let (since, last) = unframed, now - last <= activity.timeout else {
            unframed = (now, now)
            return
        }
        unframed = (since, now)
        guard now - since >= activity.timeout, !replies.isListened else { return }
        unframed = nil
        speedLost = true
    }

    /// Whether the chunk just parsed found the speed lost (see ``takeUnframed()``).
    func takeSpeedLoss() -> Bool {
        defer { speedLost = false }
        return speedLost
    }

    /// Whether the source sent valid sentences since this was last asked.
    func takeSentencesSinceOpening() -> Bool {
        defer { sentencesSinceOpening = false }
        return sentencesSinceOpening
    }

    /// The data ended: the open cycle is emitted.
    func finish() {
        decoder.finish(emit)
        pending.append(counters())
    }

    /// The source failed: the device is reported lost, once until it sends again.
    func lose(reason: String) {
        decoder.resetFraming()
        unframed = nil
        timeSampler.restart()
        announced = false
        guard !lost else { return }
        lost = true
        pending.append(.device(DeviceEvent(device: device, kind: .lost(reason: reason))))
        pending.append(counters())
    }

    /// Hands what was completed since the last call to `deliver`, if anything.
    func deliverPending(to deliver: ([LocationUpdate]) -> Void) {
        guard !pending.isEmpty else { return }
        deliver(pending)
        // The buffer is reused when the consumer did not keep the batch (the event loop
        // publishing it in the same turn), so a read allocates no new one.
        pending.removeAll(keepingCapacity: true)
    }

    private func emit(_ update: LocationUpdate) {
        pending.append(update)
        if sentenceDemand.isWanted, decoder.binaryCarriesFixes { writeSentences(for: update) }
        if case .fix(let fix) = update {
            cycleCompleted = true
            if let sample = timeSampler.sample(for: fix, readAt: decoder.emittedFixReadAt) { pending.append(.receiverTime(sample)) }
        }
    }

    /// NMEA 0183 for a receiver whose fixes come in UBX and that sends no NMEA of its own,
    /// for NMEA out and `nmea` watchers, as gpsd writes it for a binary device: GGA, RMC
    /// and ZDA per fix, GSA and GSV per view.
    private func writeSentences(for update: LocationUpdate) {
        switch update {
        case .fix(let fix):
            lastMode = fix.mode
            defer {
                sentencesSinceFix = 0
                satelliteViewSinceFix = false
            }
            guard sentencesSinceFix == 0 else { return }
            for line in FixSentences.sentences(for: fix, satellitesUsed: lastView?.satellitesUsed, hdop: lastView?.hdop) {
                pending.append(.sentence(line))
            }
        case .sky(let sky) where !sky.satellitesReportedEarlier && sentencesSinceFix == 0:
            // A view of signals (u-blox's NAV-SIG) lists a satellite once per signal: it is
            // written only for a receiver that sent no view of satellites (NAV-SAT) this
            // epoch, and GGA counts the satellites with a signal used.
            let ofSignals = sky.satellites.contains { $0.signal != nil }
            guard !(ofSignals && satelliteViewSinceFix) else { return }
            satelliteViewSinceFix = satelliteViewSinceFix || !ofSignals
            let used = ofSignals ? Set(sky.satellites.filter(\.used).map(\.identity.prn)).count : sky.usedCount
            lastView = (used, sky.hdop)
            for line in FixSentences.sentences(for: sky, mode: lastMode) { pending.append(.sentence(line)) }
        default:
            break
        }
    }

    private func counters() -> LocationUpdate {
        var counters = DeviceCounters()
        counters.framing = decoder.framer.nmea.statistics
        counters.assembly = decoder.assembler.statistics
        counters.binaryFraming = decoder.framer.binaryStatistics
        counters.ubxAssembly = decoder.ubx.statistics
        // Only the protocols heard: an NMEA receiver's counters carry none, and cost nothing.
        decoder.driverStatistics { name, statistics in
            if statistics != EpochReports.Statistics() { counters.driverAssembly[name] = statistics }
        }
        counters.reconnects = reconnects
        counters.distrustedTimes = timeSampler.distrusted
        counters.timesBehind = timeSampler.behind
        counters.timesAhead = timeSampler.ahead
        counters.survey = decoder.ubx.survey
        return .counters(counters)
    }

    /// The event to send with the first sentence after opening, once.
    private func takeAnnouncement() -> DeviceEvent? {
        guard !announced else { return nil }
        announced = true
        defer { lost = false }
        if lost { reconnects += 1 }
        return DeviceEvent(device: device, kind: lost ? .recovered : .activated)
    }
}
