import GPSFix
import NIOConcurrencyHelpers
import NMEA
import ReceiverDrivers
import OutputFormats
import Synchronization

/// The real ``LocationProvider``: a receiver's bytes (NMEA 0183, u-blox UBX, or both)
/// from any ``ByteSource``, framed, assembled and turned into updates.
///
/// It reports the device's life as ``DeviceEvent``s: activated with its first valid
/// sentence, silent (and its fix decayed to no fix) when no sentence arrives for
/// ``silenceTimeout``, resumed with the first sentence after that, lost when the source
/// fails, recovered when it is reopened. The silence is watched with one timer from
/// `timers` at a time, while the device sends, and none while it is silent. A lost
/// source is reopened with exponential backoff, from 50 ms up to ``maximumBackoff``, so
/// a device that comes back is read again within about that long, without a busy loop.
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
        let activity = Activity(
            clock: clock, timers: timers, timeout: silenceTimeout, hold: hold, hasUnreadInput: { source.hasUnreadInput }
        ) {
            deliver([.fix(Self.noFix), .device(DeviceEvent(device: device, kind: .silent))])
        }
        let ended = await read(deliver, activity)
        activity.stop()
        // A log read to its end holds no fix any more: said once, as for a silence.
        if ended { deliver([.fix(Self.noFix), .device(DeviceEvent(device: device, kind: .ended))]) }
    }

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
    private func read(_ deliver: @escaping @Sendable ([LocationUpdate]) -> Void, _ activity: Activity) async -> Bool {
        let source = self.source
        let search = source.findsSpeed ? SpeedSearch() : nil
        let reading = ReadingState(
            device: device, line: { [source] in source.line }, sentenceDemand: sentenceDemand,
            decoder: ReceiverStreamDecoder(framing: framing, centuryRule: centuryRule, drivers: ReceiverDrivers.all),
            activity: activity, replies: replies, searchesSpeed: search != nil)
        let handle: @Sendable (ByteChunk) -> Void = { chunk in
            let speedLost = reading.exclusively {
                reading.take(chunk)
                reading.deliverPending(to: deliver)
                return reading.takeSpeedLoss()
            }
            // Out of the reading's lock: ending the opening closes the device's channel.
            if speedLost { search?.request() }
        }
        var backoff = Duration.milliseconds(50)
        while !Task.isCancelled {
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
                // A source that sent sentences before failing is retried soon again.
                if reading.exclusively({ reading.takeSentencesSinceOpening() }) { backoff = .milliseconds(50) }
                reading.exclusively {
                    reading.lose(reason: "\(error)")
                    reading.deliverPending(to: deliver)
                }
                try? await clock.sleep(for: backoff)
                backoff = min(backoff * 2, maximumBackoff)
            }
        }
        return false
    }
}

/// Ends an opening of a source that finds its speed when its reading finds the line's
/// bytes make no frames, so that the source opens again and finds the speed anew: a
/// receiver back from a power cycle at its saved or default speed, not the one it was
/// switched to (gpsd hunts for the speed again likewise).
private final class SpeedSearch: Sendable {
    private struct State {
        var opening: Task<Void, any Error>?
        var requested = false
    }

    private let state = NIOLockedValueBox(State())

    /// Runs `opening` (the reading of one opening) until it ends: returns or throws as it
    /// does, or throws `lost()` when ``request()`` ended it. Cancelling the calling task
    /// ends it too.
    func run(
        _ opening: @escaping @Sendable () async throws -> Void, lost: () -> DeviceError
    ) async throws {
        let task = Task { try await opening() }
        let requestedAlready = state.withLockedValue { state in
            state.opening = task
            return state.requested
        }
        if requestedAlready { task.cancel() }
        let ended = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
        let requested = state.withLockedValue { state in
            defer { state = State() }
            return state.requested
        }
        switch ended {
        case .success where requested: throw lost()
        case .failure(let error) where requested && error is CancellationError: throw lost()
        // A device that failed as it was stopped failed: its error says why.
        default: try ended.get()
        }
    }

    /// Ends the opening: its reading stops, and ``run(_:lost:)`` throws.
    func request() {
        let opening = state.withLockedValue { state in
            state.requested = true
            return state.opening
        }
        opening?.cancel()
    }
}

/// The device's activity and the silence watch over it, shared by the reading and the
/// watch's timer (which may run on another thread).
///
/// While the device sends, one timer is pending, set for a timeout after the last
/// sentence it knew of; firing, it sets itself again for a timeout after the sentence
/// read since, if any: one wake-up per timeout, none per sentence, and the device is
/// silent exactly a timeout after its last sentence. Once it is silent, and before the
/// first sentence, no timer is pending: the next sentence sets one.
///
/// A source held back by its consumer (``ReadingHold``) is not silent: while it is held,
/// and for a whole timeout after it was last let go, the watch only sets itself again.
/// Nor is one whose bytes wait unread: the device sent, and its reader is late (an event
/// loop that took seconds for one turn under a flood of clients, on a loaded machine), for
/// ``unreadLooksAllowed`` timeouts at most.
private final class Activity: Sendable {
    private struct State {
        var lastSentence = Duration.zero
        /// The pending timer, while the device sends.
        var timer: (any ScheduledTimer)?
        var stopped = false
        /// The hold's release count when the watch last looked.
        var releasesSeen = 0
        /// Timeouts in a row that found bytes waiting and no sentence since.
        var unreadLooks = 0
    }

    /// How many timeouts in a row bytes waiting unread put a silence off: a reader late by
    /// that much is stuck, and bytes that never make a sentence (a wrong speed) are no sign
    /// of life.
    static let unreadLooksAllowed = 3

    /// Time on the provider's clock since the activity began.
    private let elapsed: @Sendable () -> Duration
    private let timers: any TimerScheduler
    let timeout: Duration
    private let reportSilence: @Sendable () -> Void
    /// Touched by the reader's thread and the timers' loop: behind a pthread mutex, which
    /// ThreadSanitizer sees.
    private let state = NIOLockedValueBox(State())
    /// Reported silent, and no sentence since: an atomic, read for every sentence.
    private let silent = Atomic<Bool>(false)
    /// The consumer's hold on a source that can wait; `nil` for one that cannot.
    private let hold: ReadingHold?
    /// Whether the source's bytes wait unread.
    private let hasUnreadInput: @Sendable () -> Bool

    init<C: Clock<Duration>>(
        clock: C, timers: any TimerScheduler, timeout: Duration, hold: ReadingHold?,
        hasUnreadInput: @escaping @Sendable () -> Bool, reportSilence: @escaping @Sendable () -> Void
    ) {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        self.timers = timers
        self.timeout = timeout
        self.hold = hold
        self.hasUnreadInput = hasUnreadInput
        self.reportSilence = reportSilence
    }

    /// Time on the provider's clock since the activity began.
    var now: Duration { elapsed() }

    /// Sentences arrived (called by the reader for each chunk that had some).
    func record() {
        let now = elapsed()
        state.withLockedValue { state in
            state.lastSentence = now
            state.unreadLooks = 0
            if state.timer == nil, !state.stopped { state.timer = arm(in: timeout) }
        }
    }

    /// The event announcing that a silent device sends again, once per silence.
    func takeResumption(of device: String) -> DeviceEvent? {
        guard silent.load(ordering: .relaxed), silent.exchange(false, ordering: .acquiring) else { return nil }
        return DeviceEvent(device: device, kind: .resumed)
    }

    /// Stops the watch: no silence is reported after this.
    func stop() {
        state.withLockedValue { state in
            state.stopped = true
            state.timer?.cancel()
            state.timer = nil
        }
    }

    private func arm(in delay: Duration) -> any ScheduledTimer {
        timers.schedule(in: delay) { [self] in fire() }
    }

    private func fire() {
        let now = elapsed(), held = hold?.isHolding ?? false, releases = hold?.releaseCount ?? 0
        let waiting = hasUnreadInput()
        let isSilent = state.withLockedValue { state -> Bool in
            guard !state.stopped else { return false }
            // A reading held back by its consumer (a lagging client), now or since the
            // last look, is not silence: the time counts from when it was let go. Bytes
            // waiting unread are not either: the time counts from this look.
            let unread = waiting && state.unreadLooks < Self.unreadLooksAllowed && now >= state.lastSentence + timeout
            if unread { state.unreadLooks += 1 }
            let wasHeld = held || unread || releases != state.releasesSeen
            state.releasesSeen = releases
            let deadline = wasHeld ? now + timeout : state.lastSentence + timeout
            if deadline > now {
                state.timer = arm(in: deadline - now)
                return false
            }
            state.timer = nil
            return true
        }
        guard isSilent else { return }
        reportSilence()
        // Only now: a sentence before it would be announced ahead of the silence.
        silent.store(true, ordering: .releasing)
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
    let activity: Activity
    let replies: ReceiverReplies
    /// Whether the source finds its speed, and so is searched again when its bytes stop
    /// making frames.
    let searchesSpeed: Bool
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
    /// The last fix's mode and view, for the NMEA written for a UBX receiver.
    private var lastMode = FixMode.unknown
    private var lastView: SkyView?

    init(
        device: String, line: @escaping @Sendable () -> SerialLine?, sentenceDemand: SentenceDemand,
        decoder: ReceiverStreamDecoder, activity: Activity, replies: ReceiverReplies, searchesSpeed: Bool
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
        guard searchesSpeed else { return }
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
            defer { sentencesSinceFix = 0 }
            guard sentencesSinceFix == 0 else { return }
            for line in FixSentences.sentences(for: fix, satellitesUsed: lastView?.usedCount, hdop: lastView?.hdop) {
                pending.append(.sentence(line))
            }
        case .sky(let sky) where !sky.satellitesReportedEarlier && sentencesSinceFix == 0:
            lastView = sky
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
