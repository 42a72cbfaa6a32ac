import GPSDProtocol
import GPSFixServer
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import OutputFormats

/// One device's way to the broker: its reports turned into messages (thinned to the
/// publishing interval), its queue, and the task that hands the queue to its connection.
final class DeviceLink<C: Clock>: Sendable where C.Duration == Duration {
    private enum Kind: Hashable {
        case tpv, sky, ownTracks, location, toff
    }

    private struct State {
        var queue: OutboundQueue
        /// When each kind of report was last queued, for the interval.
        var lastQueued: [Kind: C.Instant] = [:]
        /// The publishing task, waiting for something to send.
        var waiter: CheckedContinuation<Void, Never>?
        var stopping = false
        /// Whether the connection's loss has been logged (once per outage).
        var outageLogged = false
        /// Whether a refusal of the library has been logged (once).
        var refusalLogged = false
        /// Whether a message too long to read has been logged (once).
        var oversizedLogged = false
        /// Whether the time service serves the device (a TOFF came): Home Assistant then
        /// gets its time offset sensor too.
        var timeServed = false
        /// When the discovery configs were last queued for Home Assistant's `online`.
        var discoveryAnsweredAt: C.Instant?

        /// Queues a report's message unless one of its kind was queued less than the
        /// publishing interval ago (`now` is `nil` without an interval). Cycles come a
        /// little early or late: 10% of slack keeps a 1 s interval at every cycle of a
        /// 1 Hz receiver instead of every other one.
        mutating func offer(_ message: MQTTMessage, as kind: Kind, at now: C.Instant?, _ configuration: FleetConfiguration) {
            if let now {
                if let last = lastQueued[kind], last.duration(to: now) < configuration.interval * 0.9 {
                    queue.skip()
                    return
                }
                lastQueued[kind] = now
            }
            queue.enqueue(message)
        }

        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    /// The shortest time between two publications of the discovery configs asked for by
    /// Home Assistant's `online`.
    static var discoveryRepublishInterval: Duration { .seconds(60) }

    let device: String
    let topics: FleetTopics
    private let publisher: any MessagePublisher
    private let configuration: FleetConfiguration
    private let trackerID: String
    private let clock: C
    private let logger: Logger
    /// Home Assistant's discovery for this device, when asked for.
    private let discovery: HomeAssistantDiscovery?
    /// Shared with libmosquitto's own thread (``handle(_:)``): behind a pthread mutex, which
    /// ThreadSanitizer sees, unlike the Synchronization module's futex-based `Mutex`.
    private let state: NIOLockedValueBox<State>

    init(device: String, topics: FleetTopics, publisher: any MessagePublisher, configuration: FleetConfiguration, clock: C,
         logger: Logger) {
        self.device = device
        self.topics = topics
        self.publisher = publisher
        self.configuration = configuration
        self.trackerID = OwnTracksLocation.trackerID(for: topics.name)
        self.clock = clock
        self.logger = logger
        discovery = configuration.homeAssistant.map {
            HomeAssistantDiscovery(
                configuration: $0, topics: topics, hostName: configuration.hostName, devicePath: device, qos: configuration.qos,
                gpsdReportsPublished: configuration.format != .owntracks)
        }
        let queue = OutboundQueue(capacity: configuration.queueCapacity, window: configuration.window, qos: configuration.qos)
        state = NIOLockedValueBox(State(queue: queue))
    }

    var counters: MQTTCounters {
        state.withLockedValue { $0.queue.counters }
    }

    /// The DEVICE report that says the device is gone: the last will, and the last word at shutdown.
    static func offlineReport(of device: String) -> ArraySlice<UInt8> {
        var closed = DeviceInfo(path: device)
        closed.closed = true
        return SessionReport.device(closed, notice: true).dropLast(2)
    }

    /// Turns `report` into its messages and queues them; called on the event loop, so it
    /// only takes a lock, never waits.
    func receive(_ report: PublishedReport) {
        let qos = configuration.qos
        let json = report.json.dropLast(2)  // the sockets' CR LF: a message is one JSON object
        let gpsd = configuration.format != .owntracks
        var ownTracks: [UInt8]?
        var location: MQTTMessage?
        if case .tpv(let fix) = report.content {
            if configuration.format != .gpsd { ownTracks = OwnTracksLocation.payload(for: fix, trackerID: trackerID) }
            location = discovery?.attributes(for: fix)
        }
        let now = configuration.interval > .zero ? clock.now : nil
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            switch report.content {
            case .tpv:
                if gpsd { state.offer(MQTTMessage(topic: topics.tpv, payload: json, qos: qos, retain: true), as: .tpv, at: now, configuration) }
                if let ownTracks {
                    let location = MQTTMessage(topic: topics.ownTracks, payload: ownTracks.dropLast(2), qos: qos, retain: true)
                    state.offer(location, as: .ownTracks, at: now, configuration)
                }
                if let location { state.offer(location, as: .location, at: now, configuration) }
            case .sky:
                if gpsd { state.offer(MQTTMessage(topic: topics.sky, payload: json, qos: qos), as: .sky, at: now, configuration) }
            case .device:
                state.queue.enqueue(MQTTMessage(topic: topics.device, payload: json, qos: qos, retain: true))
            case .time(let time):
                guard let discovery, time.kind == .receiverTime else { break }
                if !state.timeServed {
                    state.timeServed = true
                    for config in discovery.configs(timeServed: true) { state.queue.enqueue(config) }
                }
                state.offer(MQTTMessage(topic: topics.toff, payload: json, qos: qos), as: .toff, at: now, configuration)
            }
            return state.queue.canSend ? state.takeWaiter() : nil
        }
        waiter?.resume()
    }

    /// Starts the connection and hands it the queue's messages until cancelled; then
    /// says the device is offline and disconnects.
    func run() async {
        if let discovery { publisher.subscribe(to: [discovery.statusTopic]) }
        do {
            // On SwiftNIO's thread pool, not on the event loop the daemon's tasks run on:
            // libmosquitto looks the broker's name up with a blocking getaddrinfo, seconds
            // long while DNS does not answer.
            try await NIOThreadPool.singleton.runIfActive { [self] in try publisher.start { [self] event in handle(event) } }
        } catch {
            if !Task.isCancelled { logger.error("MQTT publishing is off: \(error)", metadata: ["device": "\(device)"]) }
            return
        }
        while let message = await nextMessage() {
            do {
                _ = try publisher.publish(message)
                state.withLockedValue { $0.queue.handedOver() }
            } catch {
                let firstRefusal = state.withLockedValue { state in
                    state.queue.refused(message, connectionLost: error.connectionLost)
                    defer { if !error.connectionLost { state.refusalLogged = true } }
                    return !error.connectionLost && !state.refusalLogged
                }
                if firstRefusal {
                    logger.warning("MQTT message refused (counted, logged once): \(error)", metadata: ["device": "\(device)"])
                }
            }
        }
        if state.withLockedValue({ $0.queue.connected }),
            (try? publisher.publish(MQTTMessage(topic: topics.device, payload: Self.offlineReport(of: device), qos: configuration.qos, retain: true))) != nil
        {
            state.withLockedValue { $0.queue.handedOver() }
        }
        // Off the loop too: stopping waits for libmosquitto's thread, which may be in the
        // middle of a reconnect. In a task of its own, which the pool does not refuse as
        // cancelled (the singleton pool is never shut down).
        await Task { [publisher] in try? await NIOThreadPool.singleton.runIfActive { publisher.stop() } }.value
    }

    private func handle(_ event: MessagePublisherEvent) {
        let (waiter, log) = state.withLockedValue { state -> (CheckedContinuation<Void, Never>?, (() -> Void)?) in
            var log: (() -> Void)?
            switch event {
            case .connected:
                state.queue.connectionChanged(connected: true)
                state.outageLogged = false
                // Retained, but published at each connect: a broker may have lost them.
                for config in discovery?.configs(timeServed: state.timeServed) ?? [] { state.queue.enqueue(config) }
                let queued = state.queue.queued
                log = { [logger, device] in logger.info("MQTT connected", metadata: ["device": "\(device)", "queued": "\(queued)"]) }
            case .disconnected(let reason), .trouble(let reason):
                if case .disconnected = event { state.queue.connectionChanged(connected: false) }
                if !state.outageLogged, !state.queue.connected, !state.stopping {
                    state.outageLogged = true
                    let capacity = configuration.queueCapacity
                    log = { [logger, device] in
                        logger.warning(
                            "MQTT broker not connected: \(reason); reconnecting, keeping the newest \(capacity) messages meanwhile",
                            metadata: ["device": "\(device)"])
                    }
                }
            case .delivered:
                state.queue.delivered()
            case .oversized(let topic, let bytes):
                state.queue.ignoreReceived()
                if !state.oversizedLogged {
                    state.oversizedLogged = true
                    log = { [logger, device] in
                        logger.warning(
                            "MQTT message of \(bytes) bytes on \(topic) ignored (counted, logged once): the daemon reads at most \(MessagePublisherEvent.maximumReceivedPayload)",
                            metadata: ["device": "\(device)"])
                    }
                }
            case .received(let topic, let payload):
                // Home Assistant restarted: it asks for the configs again this way. Answered
                // once a minute at most: the configs are retained, so a Home Assistant
                // restarted again reads them anyway, and whoever may publish on its status
                // topic must not fill the queue with them (pushing out the device's state)
                // or the log.
                let now = clock.now
                if let discovery, topic == discovery.statusTopic, payload == Array("online".utf8),
                    state.discoveryAnsweredAt.map({ $0.duration(to: now) >= Self.discoveryRepublishInterval }) ?? true
                {
                    state.discoveryAnsweredAt = now
                    for config in discovery.configs(timeServed: state.timeServed) { state.queue.enqueue(config) }
                    log = { [logger, device] in
                        logger.info("Home Assistant is online: discovery published again", metadata: ["device": "\(device)"])
                    }
                }
            }
            return (state.queue.canSend ? state.takeWaiter() : nil, log)
        }
        log?()
        waiter?.resume()
    }

    /// The next message to publish, once there is one and the connection takes it; `nil`
    /// once the task is cancelled.
    private func nextMessage() async -> MQTTMessage? {
        while true {
            let (message, stopping) = state.withLockedValue { ($0.queue.next(), $0.stopping) }
            if let message { return message }
            if stopping || Task.isCancelled { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLockedValue { state in
                        guard !state.queue.canSend, !state.stopping else { return true }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                state.withLockedValue { state in
                    state.stopping = true
                    return state.takeWaiter()
                }?.resume()
            }
        }
    }
}
