import GPSFix
import GPSFixServer
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import OutputFormats

/// Where positions go, one request each: Traccar's OsmAnd endpoint over HTTP(S)
/// (``HTTPPositionUploader``), or a test's fake.
public protocol PositionUploader: Sendable {
    /// Sends one position's OsmAnd query; returns the HTTP status, throws when no answer came.
    func upload(_ query: String) async throws -> Int
}

/// Positions to a Traccar server, with nothing lost: store and forward.
///
/// Every TPV of the device with a position (at most one per ``Configuration/interval``,
/// and only after ``Configuration/minimumDistance`` of movement when given) joins a queue
/// in memory (``PositionQueue``) that a journal on disk follows (``PositionJournal``), and
/// leaves it only when the server answered 200. An outage, a server restart or the
/// daemon's own SIGKILL loses nothing: the queue is sent in order, oldest first, at most
/// ``Configuration/requestsPerSecond`` a second, when the server answers again. Past
/// ``Configuration/capacity`` positions the oldest are dropped, counted and logged; each
/// position waiting costs about 230 bytes of memory (23 MB at the default 100,000).
///
/// ``receive(_:)`` runs on the server's event loop and touches memory alone: the journal
/// is written, synced (once a second) and rewritten by ``run()``, on SwiftNIO's thread
/// pool (``JournalWriter``), so a slow or full disk never holds up the hub. A disk that
/// refuses a write leaves the positions queued in memory until it takes them again; a
/// position is on disk within moments of being queued, so a SIGKILL loses at most those
/// moments' positions, and a power cut at most the last second's. A journal that cannot
/// be opened or read (a bad block, a file the service user may not open) is left as it is,
/// said in the log and the status line, and the positions are kept in memory alone: Traccar
/// does not keep the daemon from serving.
public final class TraccarForwarder: ReportSubscriber, Sendable {
    public struct Configuration: Sendable {
        /// The OsmAnd endpoint: `http://traccar.example:5055/` (or `https://`).
        public var url: String
        /// The device's identifier in Traccar.
        public var deviceID: String
        /// The daemon's device whose fixes go (the first, when several are read).
        public var device: String
        /// At most one position per interval; `.zero` for every fix.
        public var interval: Duration
        /// Metres the device must move before the next position goes; `nil` for none.
        public var minimumDistance: Double?
        /// Positions kept while the server is away; past it the oldest are dropped.
        public var capacity: Int
        /// Requests a second while a backlog is sent.
        public var requestsPerSecond: Int
        /// The journal's file.
        public var journalPath: String

        public init(
            url: String, deviceID: String, device: String, interval: Duration = .zero, minimumDistance: Double? = nil,
            capacity: Int = 100_000, requestsPerSecond: Int = 20, journalPath: String
        ) {
            self.url = url
            self.deviceID = deviceID
            self.device = device
            self.interval = interval
            self.minimumDistance = minimumDistance
            self.capacity = capacity
            self.requestsPerSecond = requestsPerSecond
            self.journalPath = journalPath
        }
    }

    /// What was done with the positions, for the log and `/metrics`.
    public struct Counters: Sendable, Equatable {
        public var queued = 0
        public var sent = 0
        public var dropped = 0
        /// Requests that failed, by kind: `connection`, `timeout`, `http 500`, ...
        public var failures: [String: Int] = [:]
        /// Whether the last request was answered 200.
        public var reachable = false
        /// Whether the positions waiting are on disk: false while the disk refuses them, and
        /// for the whole run when the journal could not be opened.
        public var journalWritten = true
        /// Writes of the journal the disk refused (about one a second while it refuses).
        public var journalRefusals = 0
    }

    private struct State {
        var counters = Counters()
        var lastQueuedAt: ContinuousClock.Instant?
        var lastQueuedPosition: (latitude: Double, longitude: Double)?
        var hdop: Double?
        var droppingLogged = false
    }

    public let configuration: Configuration
    private let uploader: any PositionUploader
    private let clock: any Clock<Duration>
    private let logger: Logger
    private let state: NIOLockedValueBox<State>
    /// The positions waiting; behind its own lock, which the journal's writer takes too.
    private let queue: NIOLockedValueBox<PositionQueue>
    /// The journal's writer; none when the journal could not be opened.
    private let writer: JournalWriter?
    /// Rung when a position is queued: the sender's.
    private let doorbell: AsyncStream<Void>.Continuation
    private let rings: AsyncStream<Void>
    /// Rung when the queue changed, and once a second: the journal writer's.
    private let journalDoorbell: AsyncStream<Void>.Continuation
    private let journalRings: AsyncStream<Void>

    /// Opens the journal, whose positions left from an earlier run are sent first. The
    /// journal's syncs, the backoffs and the pace sleep on `clock`.
    public init(
        configuration: Configuration, uploader: any PositionUploader, clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.clock = clock
        self.uploader = uploader
        self.logger = logger
        let opened: (journal: PositionJournal, waiting: [PositionJournal.Entry])?
        do {
            opened = try PositionJournal.open(path: configuration.journalPath)
        } catch {
            opened = nil
            logger.error(
                "Traccar: the journal cannot be opened (\(error)); it is left as it is, and this run keeps positions in memory alone, up to \(configuration.capacity)")
        }
        // A journal of GPSFix 0.2.0 kept each position's id and a timestamp Traccar refuses.
        let waiting = (opened?.waiting ?? []).map { PositionJournal.Entry(sequence: $0.sequence, position: OsmAndPosition.fields(journaled: $0.position)) }
        let queue = PositionQueue(
            capacity: configuration.capacity, waiting: waiting,
            acknowledged: opened?.journal.acknowledgedThrough ?? 0, lastSequence: opened?.journal.writtenThrough ?? 0)
        var initial = State()
        initial.counters.queued = queue.count
        initial.counters.dropped = queue.dropped
        initial.counters.journalWritten = opened != nil
        state = NIOLockedValueBox(initial)
        let queued = NIOLockedValueBox(queue)
        self.queue = queued
        writer = opened.map { JournalWriter(journal: $0.journal, queue: queued, logger: logger) }
        (rings, doorbell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (journalRings, journalDoorbell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        if queue.count > 0 {
            logger.info("Traccar: positions from before are sent first", metadata: ["queued": "\(queue.count)"])
        }
        if let journal = opened?.journal, journal.malformedLines > 0 {
            logger.warning(
                "Traccar: the journal's malformed lines were skipped (a power cut?); the positions on them are lost",
                metadata: ["journal": "\(configuration.journalPath)", "lines": "\(journal.malformedLines)"])
        }
    }

    public func receive(_ report: PublishedReport) {
        guard report.device == configuration.device else { return }
        switch report.content {
        case .sky(let sky):
            if let hdop = sky.hdop { state.withLockedValue { $0.hdop = hdop } }
        case .tpv(let fix):
            queue(fix)
        case .device, .time:
            break
        }
    }

    private func queue(_ fix: Fix) {
        let now = ContinuousClock.now
        let configuration = self.configuration
        let position = state.withLockedValue { state -> String? in
            guard let latitude = fix.latitude, let longitude = fix.longitude else { return nil }
            // The interval and the distance first: the fields are formatted only for a position that goes.
            if let last = state.lastQueuedAt, last.duration(to: now) < configuration.interval * 0.9 { return nil }
            if let minimum = configuration.minimumDistance, let last = state.lastQueuedPosition,
                let moved = Geodesy.inverse(from: (last.latitude, last.longitude), to: (latitude, longitude))?.distance,
                moved < minimum
            {
                return nil
            }
            guard let position = OsmAndPosition.fields(for: fix, hdop: state.hdop) else { return nil }
            state.lastQueuedAt = now
            state.lastQueuedPosition = (latitude, longitude)
            return position
        }
        guard let position else { return }
        let (dropped, count) = queue.withLockedValue { ($0.append(position), $0.count) }
        let logDropping = state.withLockedValue { state in
            state.counters.queued = count
            state.counters.dropped += dropped
            defer { if dropped > 0 { state.droppingLogged = true } }
            return dropped > 0 && !state.droppingLogged
        }
        if logDropping {
            logger.warning("Traccar: queue full, the oldest positions are dropped (counted)", metadata: ["capacity": "\(configuration.capacity)"])
        }
        doorbell.yield()
        journalDoorbell.yield()
    }

    /// Sends the queue's positions until the task is cancelled, and keeps the journal (when
    /// it could be opened) up with the queue on SwiftNIO's thread pool, synced once a
    /// second; at the end, it is brought up to date and synced a last time.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.send() }
            guard let writer = self.writer else { return }
            group.addTask {
                for await _ in self.journalRings {
                    self.count(try? await NIOThreadPool.singleton.runIfActive { writer.write() })
                }
            }
            group.addTask {
                while (try? await self.clock.sleep(for: .seconds(1))) != nil { self.journalDoorbell.yield() }
            }
        }
        // Not in the cancelled task: the pool would refuse its work.
        if let writer {
            count(await Task { try? await NIOThreadPool.singleton.runIfActive { writer.write(final: true) } }.value)
        }
        doorbell.finish()
        journalDoorbell.finish()
    }

    /// Counts what a write of the journal did.
    private func count(_ outcome: JournalWriter.Outcome?) {
        guard let outcome, outcome != .waiting else { return }
        state.withLockedValue { state in
            state.counters.journalWritten = outcome == .written
            if outcome == .refused { state.counters.journalRefusals += 1 }
        }
    }

    private func send() async {
        var backoff = Duration.seconds(1)
        var outage: String?
        var bell = rings.makeAsyncIterator()
        let pace = Duration.milliseconds(1000 / max(1, configuration.requestsPerSecond))
        while !Task.isCancelled {
            guard let entry = queue.withLockedValue({ $0.oldest }) else {
                // Until the next position (the wait ends when the task is cancelled).
                guard await bell.next() != nil else { return }
                continue
            }
            let failure: String?
            do {
                // The id is the one configured now, whenever the position was queued.
                let status = try await uploader.upload(OsmAndPosition.query(id: configuration.deviceID, fields: entry.position))
                failure = status == 200 ? nil : "HTTP \(status)"
            } catch is CancellationError {
                return  // stopped: no outage
            } catch {
                failure = Self.kind(of: error)
            }
            if let failure {
                state.withLockedValue { state in
                    state.counters.failures[failure, default: 0] += 1
                    state.counters.reachable = false
                }
                // Once per outage and kind of failure: the backoff bounds how often it changes.
                if outage != failure {
                    let queued = queue.withLockedValue { $0.count }
                    logger.warning(
                        "\(Self.describe(failure)); positions are kept and sent when it takes them", metadata: ["queued": "\(queued)"])
                }
                outage = failure
                try? await clock.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(30))
                continue
            }
            // The position has left the queue, whether or not the journal can say so yet.
            let left = queue.withLockedValue { queue in
                queue.remove(entry.sequence)
                return queue.count
            }
            journalDoorbell.yield()
            state.withLockedValue { state in
                state.counters.sent += 1
                state.counters.queued = left
                state.counters.reachable = true
                state.droppingLogged = false
            }
            if outage != nil {
                logger.info("Traccar server answers again", metadata: ["queued": "\(left)"])
                outage = nil
            }
            backoff = .seconds(1)
            if left > 0 { try? await clock.sleep(for: pace) }
        }
    }

    /// A failure as the log says it: a refusal (Traccar answers 400 for a device it does not
    /// know; a proxy in front of it may answer another 4xx), the server's own error, or no
    /// answer at all.
    static func describe(_ failure: String) -> String {
        if failure == "HTTP 400" {
            return "Traccar server refuses the positions (HTTP 400): does it know this device's --traccar-id?"
        }
        if failure.hasPrefix("HTTP 4") { return "Traccar server refuses the positions (\(failure))" }
        return failure.hasPrefix("HTTP ") ? "Traccar server answers \(failure)" : "Traccar server not reached: \(failure)"
    }

    /// A failed request's kind, for the counters: no secret, no address.
    static func kind(of error: any Error) -> String {
        let text = String(describing: error).lowercased()
        if text.contains("timeout") || text.contains("timedout") { return "timeout" }
        if text.contains("tls") || text.contains("ssl") || text.contains("certificate") { return "tls" }
        return "connection"
    }

    public var counters: Counters { state.withLockedValue { $0.counters } }

    /// For the status line: `traccar: 3 queued, 1200 sent`, and `, journal not written`
    /// while the positions are in memory alone.
    public var status: String {
        let counters = self.counters
        return "traccar: \(counters.queued) queued, \(counters.sent) sent"
            + (counters.dropped > 0 ? ", \(counters.dropped) dropped" : "")
            + (counters.journalWritten ? "" : ", journal not written")
    }
}
