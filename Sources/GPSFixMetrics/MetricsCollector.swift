import CoreMetrics
import GPSFix
import GPSFixDevices
import GPSFixMQTT
import GPSFixNTRIP
import GPSFixServer
import GPSFixTime
import GPSFixTraccar
import NIOConcurrencyHelpers
import NMEA
import Prometheus
import ReceiverFraming

/// The daemon's counters as Prometheus metrics, through swift-metrics.
///
/// Nothing on the readers' path counts twice: the daemon already counts everything
/// (``DeviceCounters``, the server's snapshot, the time service's and MQTT's counters),
/// so a scrape reads those once and brings the swift-metrics counters up to them (by the
/// difference since the last scrape) and sets the gauges. Between scrapes this costs
/// nothing, and no timer wakes the daemon.
///
/// Scrapes go through ``scrape(_:)``, one after another: two at once would read the
/// daemon's counts in one order and record them in the other, and a count that seemed
/// to go down would be taken for a restarted source and counted again.
public final class MetricsCollector: Sendable {
    /// The registry the metrics are written to: the text ``exposition()`` returns.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Behind a pthread mutex, which ThreadSanitizer sees (scrapes run on any thread).
    private let state = NIOLockedValueBox(State())
    private let scrapes = NIOLockedValueBox(Scrapes())

    /// The scrape reading now (or last), and the one waiting for it to end. A scrape
    /// asked for while one waits shares it: it has not read yet, so what it reads is
    /// newer than the asking. At most two, however often clients ask.
    private struct Scrapes {
        var current: Task<[UInt8], Never>?
        var next: Task<[UInt8], Never>?
    }

    private struct State {
        /// The last value each counter was brought to, by name and labels.
        var counted: [String: Int] = [:]
        var counters: [String: CoreMetrics.Counter] = [:]
        var gauges: [String: CoreMetrics.Gauge] = [:]
    }

    public init() {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Prometheus' text exposition format (version 0.0.4) of everything recorded.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    /// One scrape: `read` reads the daemon's counts and records them (the `record`
    /// methods), then the exposition is taken. Scrapes run one after another, so each
    /// reads its counts after the one before it recorded its own: no count ever seems to
    /// go down, and none is counted twice. Those asked for while one reads share the one
    /// after it (its `read` runs, the others' do not), so a client that asks again and
    /// again, leaving each time, queues no work.
    public func scrape(_ read: @escaping @Sendable (MetricsCollector) async -> Void) async -> [UInt8] {
        await scrapeTask(read).value
    }

    /// The scrape that answers a request made now: the waiting one, or a new one.
    func scrapeTask(_ read: @escaping @Sendable (MetricsCollector) async -> Void) -> Task<[UInt8], Never> {
        scrapes.withLockedValue { scrapes -> Task<[UInt8], Never> in
            if let next = scrapes.next { return next }
            let previous = scrapes.current
            let next = Task { [self] in
                _ = await previous?.value
                // Reading from here on: a scrape asked for now waits for this one.
                self.scrapes.withLockedValue { scrapes in
                    scrapes.current = scrapes.next
                    scrapes.next = nil
                }
                await read(self)
                return exposition()
            }
            scrapes.next = next
            return next
        }
    }

    /// The clients and every device: sentences, rejections by reason, cycles, reconnects,
    /// fix mode, satellites, the last fix's age, a base's survey-in.
    public func record(_ snapshot: ServerSnapshot) {
        let clients = snapshot.clients
        set("gpsfix_clients_connected", to: Double(clients.connected))
        count("gpsfix_clients_accepted_total", to: clients.accepted)
        count("gpsfix_clients_cut_off_total", to: clients.cutOff)
        count("gpsfix_reports_sent_total", to: clients.reportsSent)
        count("gpsfix_reports_dropped_total", to: clients.reportsDropped)
        count("gpsfix_requests_refused_total", to: clients.requestsRefused)
        set("gpsfix_connections", to: Double(clients.connections))
        count("gpsfix_connections_idle_closed_total", to: clients.idleClosed)
        count("gpsfix_connections_evicted_total", to: clients.evicted)
        count("gpsfix_connections_refused_total", to: clients.refusedAtCap)
        for device in snapshot.devices {
            let labels = [("device", device.path)]
            let counters = device.counters
            count("gpsfix_sentences_total", labels, to: counters.framing.sentences)
            for reason in FramerRejection.allCases {
                count("gpsfix_lines_rejected_total", labels + [("reason", reason.description)], to: counters.framing[reason])
            }
            count("gpsfix_sentences_undecodable_total", labels, to: counters.assembly.decodingErrors)
            count("gpsfix_sentences_unknown_total", labels, to: counters.assembly.unknownSentences)
            count("gpsfix_values_out_of_range_total", labels, to: counters.valuesOutOfRange)
            count("gpsfix_cycles_total", labels, to: counters.assembly.cycles)
            count("gpsfix_reconnects_total", labels, to: counters.reconnects)
            count("gpsfix_bytes_total", labels, to: counters.bytes)
            for (name, frames) in counters.binaryFraming.protocols where frames.frames + frames.refused > 0 {
                let protocolLabels = labels + [("protocol", name)]
                count("gpsfix_frames_total", protocolLabels, to: frames.frames)
                count("gpsfix_frames_refused_total", protocolLabels, to: frames.refused)
                if let assembly = name == UBXFrameRule.name ? counters.ubxAssembly : counters.driverAssembly[name] {
                    count("gpsfix_epochs_total", protocolLabels, to: assembly.epochs)
                    count("gpsfix_frames_undecodable_total", protocolLabels, to: assembly.decodingErrors)
                }
            }
            set("gpsfix_device_online", labels, to: device.online ? 1 : 0)
            set("gpsfix_fix_mode", labels, to: Double(device.mode?.rawValue ?? 0))
            set("gpsfix_satellites_used", labels, to: Double(device.satellitesUsed ?? 0))
            set("gpsfix_satellites_visible", labels, to: Double(device.satellitesVisible ?? 0))
            if let age = device.sinceLastFix { set("gpsfix_last_fix_age_seconds", labels, to: age / .seconds(1)) }
            if let survey = counters.survey {
                set("gpsfix_survey_duration_seconds", labels, to: Double(survey.duration))
                set("gpsfix_survey_accuracy_metres", labels, to: survey.accuracy)
                set("gpsfix_survey_observations", labels, to: Double(survey.observations))
                set("gpsfix_survey_valid", labels, to: survey.isValid ? 1 : 0)
                set("gpsfix_survey_active", labels, to: survey.isActive ? 1 : 0)
            }
        }
        if let caster = snapshot.caster {
            set("gpsfix_caster_streams", to: Double(caster.streams))
            count("gpsfix_caster_streams_total", to: caster.streamsServed)
            count("gpsfix_caster_unauthorized_total", to: caster.unauthorized)
            count("gpsfix_caster_frames_sent_total", to: caster.framesSent)
            count("gpsfix_caster_frames_dropped_total", to: caster.framesDropped)
            count("gpsfix_caster_base_frames_total", to: caster.baseFrames)
            count("gpsfix_caster_relayed_frames_total", to: caster.relayedFrames)
            count("gpsfix_caster_relay_dropped_total", to: caster.relayDropped)
            count("gpsfix_caster_other_receivers_frames_total", to: caster.framesOfOthers)
            count("gpsfix_caster_source_tables_total", to: caster.sourceTables)
            count("gpsfix_caster_busy_total", to: caster.busy)
        }
    }

    /// What the time service did per device: samples, pulses, deliveries per sink.
    public func record(time: [(device: String, counters: TimeServiceCounters)]) {
        for (device, counters) in time {
            let labels = [("device", device)]
            count("gpsfix_time_receiver_samples_total", labels, to: counters.receiverTimes)
            count("gpsfix_time_receiver_samples_dropped_total", labels, to: counters.receiverTimesDropped)
            count("gpsfix_time_pulses_total", labels, to: counters.pulsesSeen)
            for (reason, dropped) in counters.pulsesDropped {
                count("gpsfix_time_pulses_dropped_total", labels + [("reason", reason.description)], to: dropped)
            }
            for (sink, sent) in counters.sent { count("gpsfix_time_sent_total", labels + [("sink", sink)], to: sent) }
            for (sink, failed) in counters.failed { count("gpsfix_time_failed_total", labels + [("sink", sink)], to: failed) }
        }
    }

    /// What each device's broker connection did.
    public func record(mqtt: [(device: String, counters: MQTTCounters)]) {
        for (device, counters) in mqtt {
            let labels = [("device", device)]
            set("gpsfix_mqtt_connected", labels, to: counters.connected ? 1 : 0)
            count("gpsfix_mqtt_connects_total", labels, to: counters.connects)
            count("gpsfix_mqtt_published_total", labels, to: counters.published)
            count("gpsfix_mqtt_delivered_total", labels, to: counters.delivered)
            count("gpsfix_mqtt_dropped_total", labels, to: counters.dropped)
            count("gpsfix_mqtt_skipped_total", labels, to: counters.skipped)
            count("gpsfix_mqtt_failed_total", labels, to: counters.failed)
            count("gpsfix_mqtt_ignored_total", labels, to: counters.ignored)
        }
    }

    /// Traccar's forwarding: positions queued now, sent, dropped, failed requests by kind,
    /// whether the journal is written and how often the disk refused it.
    public func record(traccar counters: TraccarForwarder.Counters) {
        set("gpsfix_traccar_queued", to: Double(counters.queued))
        set("gpsfix_traccar_reachable", to: counters.reachable ? 1 : 0)
        set("gpsfix_traccar_journal_written", to: counters.journalWritten ? 1 : 0)
        count("gpsfix_traccar_journal_refusals_total", to: counters.journalRefusals)
        count("gpsfix_traccar_sent_total", to: counters.sent)
        count("gpsfix_traccar_dropped_total", to: counters.dropped)
        for (kind, failures) in counters.failures { count("gpsfix_traccar_failures_total", [("kind", kind)], to: failures) }
    }

    /// RTK corrections: bytes and frames from the caster (frames by message type), frames
    /// written to the receiver and dropped (by reason), the newest correction's age,
    /// reconnects, and the latency from a frame's arrival to its write.
    public func record(ntrip counters: NTRIPClient.Counters) {
        set("gpsfix_ntrip_connected", to: counters.connected ? 1 : 0)
        count("gpsfix_ntrip_received_bytes_total", to: counters.bytesReceived)
        for (type, frames) in counters.framesByType { count("gpsfix_ntrip_frames_total", [("type", String(type))], to: frames) }
        count("gpsfix_ntrip_frames_written_total", to: counters.framesWritten)
        count("gpsfix_ntrip_dropped_total", [("reason", "bad_crc")], to: counters.badCRC)
        count("gpsfix_ntrip_dropped_total", [("reason", "queue_full")], to: counters.droppedQueueFull)
        count("gpsfix_ntrip_dropped_total", [("reason", "stale")], to: counters.droppedStale)
        count("gpsfix_ntrip_dropped_total", [("reason", "write_failed")], to: counters.failedWrites)
        count("gpsfix_ntrip_skipped_bytes_total", to: counters.bytesSkipped)
        count("gpsfix_ntrip_reconnects_total", to: counters.reconnects)
        count("gpsfix_ntrip_positions_sent_total", to: counters.positionsSent)
        count("gpsfix_ntrip_positions_dropped_total", to: counters.positionsDropped)
        if let age = counters.newestCorrectionAge { set("gpsfix_ntrip_correction_age_seconds", to: age) }
        if let median = counters.latencyMedian, let p99 = counters.latency99 {
            set("gpsfix_ntrip_write_latency_seconds", [("quantile", "0.5")], to: Self.seconds(median))
            set("gpsfix_ntrip_write_latency_seconds", [("quantile", "0.99")], to: Self.seconds(p99))
        }
    }

    /// The base's frames pushed to casters, by caster (its address, without the password):
    /// whether one takes the stream, frames and bytes sent, frames dropped, streams
    /// accepted, refusals.
    public func record(ntripServers: [NTRIPServer]) {
        for server in ntripServers {
            let labels = [("caster", server.configuration.caster.description)], counters = server.counters
            set("gpsfix_ntrip_server_connected", labels, to: counters.connected ? 1 : 0)
            count("gpsfix_ntrip_server_frames_sent_total", labels, to: counters.framesSent)
            count("gpsfix_ntrip_server_bytes_sent_total", labels, to: counters.bytesSent)
            count("gpsfix_ntrip_server_frames_dropped_total", labels, to: counters.framesDropped)
            count("gpsfix_ntrip_server_connections_total", labels, to: counters.connections)
            count("gpsfix_ntrip_server_refusals_total", labels, to: counters.refusals)
        }
    }

    /// Each serial receiver the daemon can write to: its conversations by who held them
    /// (as each began), requests folded into one already waiting, turns taken away at their
    /// deadline, what its writer refused for waiting room, gave up after waiting for the
    /// port and dropped for a turn over, and the answers a conversation had no room for;
    /// with a `[receiver]` table, the keeper's conversations (as each ended), the table's
    /// applications, its flash writes and the differences left.
    public func record(receivers: [(device: String, control: ReceiverControl, table: ReceiverTableCounters?)]) {
        for (device, control, table) in receivers {
            let labels = [("device", device)]
            let conversations = control.conversations.counters
            let writes = control.writer.counters
            for reason in ConversationReason.allCases {
                count("gpsfix_receiver_conversations_total", labels + [("holder", reason.metricName)], to: conversations.turns[reason] ?? 0)
            }
            count("gpsfix_receiver_conversations_folded_total", labels, to: conversations.folded)
            count("gpsfix_receiver_conversations_expired_total", labels, to: conversations.expired)
            count("gpsfix_receiver_writes_refused_total", labels, to: writes.refusedWaiting)
            count("gpsfix_receiver_writes_expired_total", labels, to: writes.expiredWaiting)
            count("gpsfix_receiver_writes_turn_over_total", labels, to: writes.droppedTurnOver)
            count("gpsfix_receiver_replies_dropped_total", labels, to: control.replies.dropped)
            guard let table else { continue }
            count("gpsfix_receiver_table_conversations_total", labels, to: table.conversations)
            count("gpsfix_receiver_table_applied_total", labels, to: table.applied)
            count("gpsfix_receiver_table_failed_total", labels, to: table.failed)
            count("gpsfix_receiver_flash_writes_total", labels, to: table.flashWrites)
            count("gpsfix_receiver_table_differences_kept_total", labels, to: table.differencesKept)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Brings the counter up to `value`; a value below the last (a restarted source)
    /// counts from zero again.
    private func count(_ name: String, _ labels: [(String, String)] = [], to value: Int) {
        let key = Self.key(name, labels)
        let (counter, increment) = state.withLockedValue { state -> (CoreMetrics.Counter, Int) in
            let counter = state.counters[key] ?? CoreMetrics.Counter(label: name, dimensions: labels, factory: factory)
            state.counters[key] = counter
            let last = state.counted[key] ?? 0
            state.counted[key] = value
            return (counter, value >= last ? value - last : value)
        }
        counter.increment(by: increment)
    }

    private func set(_ name: String, _ labels: [(String, String)] = [], to value: Double) {
        let key = Self.key(name, labels)
        let gauge = state.withLockedValue { state in
            let gauge = state.gauges[key] ?? CoreMetrics.Gauge(label: name, dimensions: labels, factory: factory)
            state.gauges[key] = gauge
            return gauge
        }
        gauge.record(value)
    }

    private static func key(_ name: String, _ labels: [(String, String)]) -> String {
        labels.reduce(name) { "\($0)|\($1.0)=\($1.1)" }
    }
}
