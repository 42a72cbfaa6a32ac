import GPSFix
import GPSFixServer
import Logging
import NIOConcurrencyHelpers
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
/// and only after ``Configuration/minimumDistance`` of movement when given) goes into a
/// ``PositionJournal`` on disk before anything is sent, and leaves it only when the server
/// answered 200. An outage, a server restart or the daemon's own SIGKILL loses nothing:
/// the journal is sent in order, oldest first, at most
/// ``Configuration/requestsPerSecond`` a second, when the server answers again. Past
/// ``Configuration/capacity`` positions the oldest are dropped, counted and logged.
///
/// ``receive(_:)`` runs on the server's event loop and only appends to the journal (a
/// `write(2)` to the page cache); the requests and the journal's `fdatasync` run in ``run()``.
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
    }

    private struct State {
        var journal: PositionJournal
        var counters = Counters()
        var lastQueuedAt: ContinuousClock.Instant?
        var lastQueuedPosition: (latitude: Double, longitude: Double)?
        var hdop: Double?
        var droppingLogged = false
        var journalFailureLogged = false
    }

    public let configuration: Configuration
    private let uploader: any PositionUploader
    private let logger: Logger
    private let state: NIOLockedValueBox<State>
    private let doorbell: AsyncStream<Void>.Continuation
    private let rings: AsyncStream<Void>

    /// Opens the journal, whose positions left from an earlier run are sent first.
    public init(configuration: Configuration, uploader: any PositionUploader, logger: Logger) throws(JournalError) {
        self.configuration = configuration
        self.uploader = uploader
        self.logger = logger
        let journal = try PositionJournal(path: configuration.journalPath)
        var initial = State(journal: journal)
        initial.counters.queued = journal.count
        state = NIOLockedValueBox(initial)
        (rings, doorbell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        if journal.count > 0 {
            logger.info("Traccar: positions from before are sent first", metadata: ["queued": "\(journal.count)"])
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
        let (configuration, logger) = (self.configuration, self.logger)
        let queued = state.withLockedValue { state -> Bool in
            guard let query = OsmAndPosition.query(for: fix, id: configuration.deviceID, hdop: state.hdop),
                let latitude = fix.latitude, let longitude = fix.longitude
            else { return false }
            if let last = state.lastQueuedAt, last.duration(to: now) < configuration.interval * 0.9 { return false }
            if let minimum = configuration.minimumDistance, let last = state.lastQueuedPosition,
                let moved = Geodesy.inverse(from: (last.latitude, last.longitude), to: (latitude, longitude))?.distance,
                moved < minimum
            {
                return false
            }
            do {
                try state.journal.append(query)
                while state.journal.count > configuration.capacity {
                    try state.journal.removeOldest()
                    state.counters.dropped += 1
                    if !state.droppingLogged {
                        state.droppingLogged = true
                        logger.warning("Traccar: queue full, the oldest positions are dropped (counted)", metadata: ["capacity": "\(configuration.capacity)"])
                    }
                }
            } catch {
                state.counters.dropped += 1
                if !state.journalFailureLogged {
                    state.journalFailureLogged = true
                    logger.error("Traccar: a position could not be queued (counted): \(error)")
                }
                return false
            }
            state.lastQueuedAt = now
            state.lastQueuedPosition = (latitude, longitude)
            state.counters.queued = state.journal.count
            return true
        }
        if queued { doorbell.yield() }
    }

    /// Sends the journal's positions until the task is cancelled, and makes the journal
    /// durable once a second.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.send() }
            group.addTask {
                while (try? await Task.sleep(for: .seconds(1))) != nil {
                    self.state.withLockedValue { state in
                        state.journal.sync()
                        try? state.journal.compactIfWorthIt()
                    }
                }
            }
        }
        state.withLockedValue { $0.journal.sync() }
        doorbell.finish()
    }

    private func send() async {
        var backoff = Duration.seconds(1)
        var outage: String?
        var bell = rings.makeAsyncIterator()
        let pace = Duration.milliseconds(1000 / max(1, configuration.requestsPerSecond))
        while !Task.isCancelled {
            guard let entry = state.withLockedValue({ $0.journal.oldest }) else {
                // Until the next position (the wait ends when the task is cancelled).
                guard await bell.next() != nil else { return }
                continue
            }
            let failure: String?
            do {
                let status = try await uploader.upload(entry.query)
                failure = status == 200 ? nil : "HTTP \(status)"
            } catch {
                failure = Self.kind(of: error)
            }
            if let failure {
                state.withLockedValue { state in
                    state.counters.failures[failure, default: 0] += 1
                    state.counters.reachable = false
                }
                if outage == nil {
                    let queued = state.withLockedValue { $0.journal.count }
                    logger.warning(
                        "Traccar server not reached: \(failure); positions are kept and sent when it answers",
                        metadata: ["queued": "\(queued)"])
                }
                outage = failure
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(30))
                continue
            }
            let left = state.withLockedValue { state -> Int in
                if state.journal.oldest?.sequence == entry.sequence { try? state.journal.removeOldest() }
                state.counters.sent += 1
                state.counters.queued = state.journal.count
                state.counters.reachable = true
                state.droppingLogged = false
                return state.journal.count
            }
            if outage != nil {
                logger.info("Traccar server answers again", metadata: ["queued": "\(left)"])
                outage = nil
            }
            backoff = .seconds(1)
            if left > 0 { try? await Task.sleep(for: pace) }
        }
    }

    /// A failed request's kind, for the counters: no secret, no address.
    static func kind(of error: any Error) -> String {
        let text = String(describing: error).lowercased()
        if text.contains("timeout") || text.contains("timedout") { return "timeout" }
        if text.contains("tls") || text.contains("ssl") || text.contains("certificate") { return "tls" }
        return "connection"
    }

    public var counters: Counters { state.withLockedValue { $0.counters } }

    /// For the status line: `traccar: 3 queued, 1200 sent`.
    public var status: String {
        let counters = self.counters
        return "traccar: \(counters.queued) queued, \(counters.sent) sent\(counters.dropped > 0 ? ", \(counters.dropped) dropped" : "")"
    }
}
