import DriverCASIC
import GPSFix
import GPSFixMQTT
@testable import GPSFixMetrics
@testable import GPSFixServer
import GPSFixTime
import Logging
import NMEA
import ReceiverDrivers
import ReceiverFraming
import TestSupport
import Testing

@Suite("Metrics")
struct MetricsTests {
    /// The exposition's samples by name and labels: `name{labels}` → value.
    static func samples(_ exposition: [UInt8]) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in String(decoding: exposition, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    static func snapshot(sentences: Int, badChecksums: Int, cycles: Int, mode: FixMode?, sinceFix: Duration?) -> ServerSnapshot {
        var counters = DeviceCounters()
        counters.framing.sentences = sentences
        counters.framing[.badChecksum] = badChecksums
        counters.assembly.cycles = cycles
        counters.reconnects = 1
        return ServerSnapshot(
            clients: .init(
                connected: 2, accepted: 5, cutOff: 1, reportsSent: 300, reportsDropped: 12, requestsRefused: 0,
                connections: 3, idleClosed: 4, evicted: 1, refusedAtCap: 0),
            devices: [.init(path: "/dev/ttyUSB0", online: true, counters: counters, mode: mode, satellitesUsed: 9,
                            satellitesVisible: 14, sinceLastFix: sinceFix)])
    }

    @Test("A scrape brings the counters to the daemon's counts and sets the gauges; a restarted count carries on from there")
    func counters() {
        let collector = MetricsCollector()
        collector.record(Self.snapshot(sentences: 120, badChecksums: 2, cycles: 20, mode: nil, sinceFix: nil))
        var samples = Self.samples(collector.exposition())
        #expect(samples[#"gpsfix_sentences_total{device="/dev/ttyUSB0"}"#] == 120)
        #expect(samples[#"gpsfix_lines_rejected_total{device="/dev/ttyUSB0",reason="bad-checksum"}"#] == 2)
        #expect(samples[#"gpsfix_lines_rejected_total{device="/dev/ttyUSB0",reason="too-long"}"#] == 0)
        #expect(samples[#"gpsfix_cycles_total{device="/dev/ttyUSB0"}"#] == 20)
        #expect(samples[#"gpsfix_reconnects_total{device="/dev/ttyUSB0"}"#] == 1)
        #expect(samples[#"gpsfix_fix_mode{device="/dev/ttyUSB0"}"#] == 0)
        #expect(samples[#"gpsfix_satellites_used{device="/dev/ttyUSB0"}"#] == 9)
        #expect(samples[#"gpsfix_satellites_visible{device="/dev/ttyUSB0"}"#] == 14)
        #expect(samples[#"gpsfix_last_fix_age_seconds{device="/dev/ttyUSB0"}"#] == nil)
        #expect(samples["gpsfix_clients_connected"] == 2)
        #expect(samples["gpsfix_clients_cut_off_total"] == 1)
        #expect(samples["gpsfix_reports_sent_total"] == 300)
        #expect(samples["gpsfix_reports_dropped_total"] == 12)

        collector.record(Self.snapshot(sentences: 180, badChecksums: 2, cycles: 30, mode: .threeDimensional, sinceFix: .milliseconds(250)))
        samples = Self.samples(collector.exposition())
        #expect(samples[#"gpsfix_sentences_total{device="/dev/ttyUSB0"}"#] == 180)
        #expect(samples[#"gpsfix_cycles_total{device="/dev/ttyUSB0"}"#] == 30)
        #expect(samples[#"gpsfix_fix_mode{device="/dev/ttyUSB0"}"#] == 3)
        #expect(samples[#"gpsfix_last_fix_age_seconds{device="/dev/ttyUSB0"}"#] == 0.25)

        collector.record(Self.snapshot(sentences: 40, badChecksums: 2, cycles: 30, mode: .threeDimensional, sinceFix: .zero))
        #expect(Self.samples(collector.exposition())[#"gpsfix_sentences_total{device="/dev/ttyUSB0"}"#] == 220)
    }

    @Test("Scrapes asked for at once run one after another: the count each reads is recorded before the next is read, so none is counted twice")
    func concurrentScrapes() async {
        let collector = MetricsCollector()
        // The daemon's count goes up by 10 between any two reads.
        let count = Locked(0)
        await withDiscardingTaskGroup { group in
            for _ in 0..<200 {
                group.addTask {
                    _ = await collector.scrape { collector in
                        let sentences = count.withLock { count in
                            count += 10
                            return count
                        }
                        // Another scrape would read here, between this one's read and its record.
                        await Task.yield()
                        collector.record(Self.snapshot(sentences: sentences, badChecksums: 0, cycles: 0, mode: nil, sinceFix: nil))
                    }
                }
            }
        }
        // Each scrape that read recorded its count: the last is the total.
        let total = count.withLock { $0 }
        #expect(total > 0 && Self.samples(collector.exposition())[#"gpsfix_sentences_total{device="/dev/ttyUSB0"}"#] == Double(total))
    }

    @Test("Scrapes asked while one reads share the one after it: however many are asked, two reads run, so clients that ask and leave, again and again, queue nothing")
    func scrapesShareTheNext() async throws {
        let collector = MetricsCollector()
        let reads = Locked(0)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let read: @Sendable (MetricsCollector) async -> Void = { _ in
            // The first read waits until every scrape below has been asked for.
            if reads.withLock({ count in
                count += 1
                return count == 1
            }) {
                for await _ in released { break }
            }
        }
        let first = collector.scrapeTask(read)
        let deadline = ContinuousClock.now + .seconds(10)
        while reads.withLock({ $0 }) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        try #require(reads.withLock { $0 } == 1, "the first scrape reads")
        let others = (0..<99).map { _ in collector.scrapeTask(read) }
        release.yield()
        for scrape in [first] + others { _ = await scrape.value }
        #expect(reads.withLock { $0 } == 2)
    }

    /// The server with no clients and one online device, `path`, that has counted `counters`.
    static func snapshot(of path: String, _ counters: DeviceCounters) -> ServerSnapshot {
        ServerSnapshot(
            clients: .init(
                connected: 0, accepted: 0, cutOff: 0, reportsSent: 0, reportsDropped: 0, requestsRefused: 0,
                connections: 0, idleClosed: 0, evicted: 0, refusedAtCap: 0),
            devices: [.init(path: path, online: true, counters: counters, mode: nil, satellitesUsed: nil,
                            satellitesVisible: nil, sinceLastFix: nil)])
    }

    @Test("gpsfix_bytes_total counts every byte read from the device: UBX and RTCM 3 frames as well as NMEA text")
    func bytesOfEveryProtocol() {
        // A u-blox receiver's port: 300 bytes of NMEA between binary frames, and 394 bytes
        // of UBX (one epoch's NAV-PVT, NAV-SAT, NAV-DOP and NAV-EOE). The NMEA framer saw
        // only the text; the receiver framer was fed all 694.
        var counters = DeviceCounters()
        counters.framing.sentences = 4
        counters.framing.bytes = 300
        counters.binaryFraming.bytes = 694
        counters.binaryFraming[UBXFrameRule.self].frames = 4
        let collector = MetricsCollector()
        collector.record(Self.snapshot(of: "/dev/ttyACM0", counters))
        #expect(Self.samples(collector.exposition())[#"gpsfix_bytes_total{device="/dev/ttyACM0"}"#] == 694)
    }

    @Test("Each binary protocol's frames, refusals and epochs, labelled by protocol: UBX's and a driver's (CASIC)")
    func framesByProtocol() throws {
        // Run a CASIC epoch through a real decoder, beside one refused frame: a UBX frame
        // whose checksum fails.
        let decoder = ReceiverStreamDecoder(drivers: ReceiverDrivers.all)
        let frame = CASICFrameRule.frame(class: 0x01, id: 0x03, payload: [UInt8](repeating: 0, count: 80))
        let badUBX: [UInt8] = [0xB5, 0x62, 0x01, 0x61, 0x04, 0x00, 1, 2, 3, 4, 0, 0]
        (frame + badUBX + frame).withUnsafeBytes { decoder.feed($0) { _ in } }
        decoder.finish { _ in }
        var counters = DeviceCounters()
        counters.binaryFraming = decoder.framer.binaryStatistics
        decoder.driverStatistics { name, statistics in counters.driverAssembly[name] = statistics }
        let collector = MetricsCollector()
        collector.record(Self.snapshot(of: "/dev/ttyUSB0", counters))
        let samples = Self.samples(collector.exposition())
        #expect(samples[#"gpsfix_frames_total{device="/dev/ttyUSB0",protocol="CASIC"}"#] == 2)
        #expect(samples[#"gpsfix_epochs_total{device="/dev/ttyUSB0",protocol="CASIC"}"#] == 1)
        #expect(samples[#"gpsfix_frames_refused_total{device="/dev/ttyUSB0",protocol="UBX"}"#] == 1)
        #expect(samples[#"gpsfix_frames_total{device="/dev/ttyUSB0",protocol="SiRF"}"#] == nil, "no series for a protocol not sent")
    }

    @Test("The time service's and MQTT's counters, labelled by device, sink and reason")
    func timeAndMQTT() {
        let collector = MetricsCollector()
        var time = TimeServiceCounters()
        time.receiverTimes = 60
        time.sent = ["chrony:/run/chrony.clk.ttyUSB0.sock": 58]
        time.failed = ["chrony:/run/chrony.clk.ttyUSB0.sock": 2]
        time.pulsesDropped = [.late: 3]
        var mqtt = MQTTCounters()
        mqtt.connected = true
        mqtt.published = 120
        mqtt.dropped = 4
        mqtt.ignored = 2
        collector.record(time: [("/dev/ttyUSB0", time)])
        collector.record(mqtt: [("/dev/ttyUSB0", mqtt)])
        let samples = Self.samples(collector.exposition())
        #expect(samples[#"gpsfix_time_receiver_samples_total{device="/dev/ttyUSB0"}"#] == 60)
        #expect(samples[#"gpsfix_time_sent_total{device="/dev/ttyUSB0",sink="chrony:/run/chrony.clk.ttyUSB0.sock"}"#] == 58)
        #expect(samples[#"gpsfix_time_failed_total{device="/dev/ttyUSB0",sink="chrony:/run/chrony.clk.ttyUSB0.sock"}"#] == 2)
        #expect(samples[#"gpsfix_time_pulses_dropped_total{device="/dev/ttyUSB0",reason="late"}"#] == 3)
        #expect(samples[#"gpsfix_mqtt_connected{device="/dev/ttyUSB0"}"#] == 1)
        #expect(samples[#"gpsfix_mqtt_published_total{device="/dev/ttyUSB0"}"#] == 120)
        #expect(samples[#"gpsfix_mqtt_dropped_total{device="/dev/ttyUSB0"}"#] == 4)
        #expect(samples[#"gpsfix_mqtt_ignored_total{device="/dev/ttyUSB0"}"#] == 2)
    }
}
