import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A stream the test only drains: every byte read and dropped, occurrences of `marker` counted.
private final class Drain {
    let client: LineClient
    private let marker: [UInt8]
    private var tail: [UInt8] = []
    private(set) var bytes = 0
    private(set) var count = 0

    init(_ client: LineClient, counting marker: String) {
        self.client = client
        self.marker = Array(marker.utf8)
    }

    /// Reads what is there now, without waiting.
    func read(into buffer: inout [UInt8]) {
        while true {
            let read = buffer.withUnsafeMutableBytes { recv(client.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard read > 0 else { return }
            bytes += read
            // The marker may straddle two reads: the last bytes of one are kept for the next.
            let window = tail + buffer[0..<read]
            var index = 0
            while index + marker.count <= window.count {
                if window[index] == marker[0], window[index..<index + marker.count].elementsEqual(marker) {
                    count += 1
                    index += marker.count
                } else {
                    index += 1
                }
            }
            tail = Array(window.suffix(marker.count - 1))
        }
    }
}

/// The daemon over a long, fast replay with every output on: its memory must stay flat.
@Suite("Soak: every output on, memory flat", .serialized)
struct SoakTests {
    /// Fixes before memory is measured: buffers, pools and queues reach their sizes.
    static let warmUp = 5_000
    /// Fixes measured after the warm-up.
    static let measured = 20_000

    @Test(
        "20,000 fixes at 600 a second to a gpsd watcher, the event stream, NMEA out, MQTT with Home Assistant and Traccar: its own memory grows by at most 1 MB after the warm-up",
        .enabled(if: installedOrInCI(TestBroker.isUsable) && !Binaries.isSanitized, "needs mosquitto; a sanitizer's memory is not the daemon's"))
    func everyOutput() throws {
        let folder = try makeTemporaryFolder("soak")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broker = try TestBroker(folder: folder)
        let endpoint = try OsmAndEndpoint(folder: folder)
        let (http, nmea) = (freePort(), freePort())
        let daemon = try DaemonUnderTest(speed: 600, extra: [
            "--http", "127.0.0.1:\(http)", "--nmea-tcp", "127.0.0.1:\(nmea)",
            "--mqtt", "mqtt://127.0.0.1:\(broker.port)/fleet/soak", "--mqtt-homeassistant",
            // Ten positions a second, half of what it sends: a pace it keeps up with.
            "--traccar", "http://127.0.0.1:\(endpoint.port)/", "--traccar-id", "soak", "--traccar-interval", "0.1",
            "--state-directory", folder.appendingPathComponent("state").path,
        ])
        let watcher = Drain(try daemon.client(), counting: #""class":"TPV""#)
        watcher.client.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        let events = Drain(try #require(LineClient.connect(tcpPort: http)), counting: "event: tpv")
        events.client.send("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let sentences = Drain(try #require(LineClient.connect(tcpPort: nmea)), counting: "RMC,")

        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var samples: [(fixes: Int, kilobytes: Int)] = []
        var baseline: Int?
        var nextSample = Date()
        let deadline = Date().addingTimeInterval(90)
        while watcher.count < Self.warmUp + Self.measured, Date() < deadline {
            var descriptors = [watcher, events, sentences].map { pollfd(fd: $0.client.descriptor, events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            for drain in [watcher, events, sentences] { drain.read(into: &buffer) }
            if Date() >= nextSample {
                nextSample += 1
                samples.append((watcher.count, daemon.anonymousKilobytes))
                if baseline == nil, watcher.count >= Self.warmUp { baseline = samples.last?.kilobytes }
            }
        }
        samples.append((watcher.count, daemon.anonymousKilobytes))
        let report = samples.map { "\($0.fixes): \($0.kilobytes) kB" }.joined(separator: ", ")
        #expect(watcher.count >= Self.warmUp + Self.measured, "fixes within 90 s: \(report)")
        // Every output was on and fed.
        #expect(events.count > Self.measured / 2 && sentences.count > Self.measured / 2, "events \(events.count), RMC \(sentences.count)")
        #expect(!endpoint.positions.isEmpty)
        #expect(try !broker.subscribe("fleet/soak/+/tpv", count: 1, seconds: 5).isEmpty)
        #expect(try !broker.subscribe("homeassistant/#", count: 1, seconds: 5).isEmpty)
        let base = try #require(baseline, "\(report)")
        let growth = (samples.last?.kilobytes ?? 0) - base
        #expect(growth <= 1024, "grew \(growth) kB after \(Self.warmUp) fixes: \(report)")
    }
}
