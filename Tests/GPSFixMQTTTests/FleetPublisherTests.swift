import Foundation
import GPSDProtocol
import GPSFix
@testable import GPSFixMQTT
import GPSFixServer
import Logging
import TestSupport
import Testing

@Suite("Publishing to a broker (on a fake connection)")
struct FleetPublisherTests {
    @Test("TPV, SKY and DEVICE go to their topics as the sockets' JSON, TPV and DEVICE retained; the will marks the device offline")
    func topicsAndPayloads() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat", qos: 1))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        harness.sendDevice(online: true)
        let fix = movingFix(second: 1)
        harness.send(fix)
        harness.send(SkyView())
        let sent = await fake.waitForSent(3)
        #expect(sent.map(\.topic) == ["gpsfix/boat/ttyUSB0/device", "gpsfix/boat/ttyUSB0/tpv", "gpsfix/boat/ttyUSB0/sky"])
        #expect(sent.map(\.retain) == [true, true, false])
        #expect(sent.allSatisfy { $0.qos == 1 })
        let tpv = GPSDReport.tpv(fix, device: FleetHarness.device)
        #expect(text(sent[1].payload) + "\r\n" == String(decoding: tpv, as: UTF8.self))
        #expect(text(sent[0].payload).contains("\"online\":true"))

        #expect(fake.will.topic == "gpsfix/boat/ttyUSB0/device")
        #expect(fake.will.retain)
        #expect(text(fake.will.payload) == #"{"class":"DEVICE","path":"/dev/ttyUSB0","activated":0,"flags":0,"online":false}"#)
        #expect(fake.clientID.hasPrefix("gpsfix-boat-ttyUSB0-"))
    }

    @Test("While the broker is away the newest messages wait, the oldest are dropped and counted; retained state is published again first")
    func brokerAway() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat", queueCapacity: 4))
        defer { harness.task.cancel() }
        let fake = harness.fake
        harness.sendDevice(online: true)
        for second in 0..<10 { harness.send(movingFix(second: second)) }
        #expect(harness.publisher.counters()[0].counters.dropped == 7)
        fake.connect()
        let sent = await fake.waitForSent(5)
        // The device state fell out of the queue, so it goes first; then the 4 newest TPVs.
        #expect(sent.map(\.topic).first == "gpsfix/boat/ttyUSB0/device")
        #expect(sent.dropFirst().map { String(text($0.payload).split(separator: "\"time\":\"")[1].prefix(19)) }
            == (6..<10).map { "2026-11-23T12:00:0\($0)" })
        #expect(sent.count == 5)
    }

    @Test("After a reconnection the retained TPV and device state are published again")
    func republishOnReconnect() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat"))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        harness.sendDevice(online: true)
        harness.send(movingFix(second: 1))
        harness.send(SkyView())
        _ = await fake.waitForSent(3)
        fake.deliverAll()
        fake.drop()
        #expect(harness.publisher.counters()[0].counters.connected == false)
        fake.connect()
        let sent = await fake.waitForSent(5)
        #expect(sent.count == 5)
        #expect(sent[3...].map(\.topic) == ["gpsfix/boat/ttyUSB0/device", "gpsfix/boat/ttyUSB0/tpv"])
        #expect(sent[3].payload == sent[0].payload && sent[4].payload == sent[1].payload)
        #expect(harness.publisher.counters()[0].counters.connects == 2)
    }

    @Test("No more messages than the window wait undelivered in the client library")
    func window() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat", window: 2))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        for second in 0..<5 { harness.send(movingFix(second: second)) }
        _ = await fake.waitForSent(2)
        try await Task.sleep(for: .milliseconds(100))
        #expect(fake.sent.count == 2)
        fake.deliverAll()
        #expect(await fake.waitForSent(4).count == 4)
    }

    @Test("--mqtt-interval publishes one TPV per interval, with 10% of slack for a cycle's jitter; device states always")
    func interval() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat", interval: .seconds(1)))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        // 10 Hz for 2.1 s, cycles 95 to 105 ms apart.
        for cycle in 0...20 {
            harness.send(movingFix(second: cycle / 10, fraction: UInt32(cycle % 10) * 100_000_000))
            harness.clock.advance(by: .milliseconds(cycle.isMultiple(of: 2) ? 95 : 105))
        }
        harness.sendDevice(online: false)
        let sent = await fake.waitForSent(4)
        #expect(sent.filter { $0.topic.hasSuffix("/tpv") }.count == 3)
        #expect(sent.last?.topic == "gpsfix/boat/ttyUSB0/device")
        #expect(harness.publisher.counters()[0].counters.skipped == 18)
    }

    @Test("--mqtt-format owntracks: OwnTracks locations on owntracks/HOST/DEVICE in OwnTracks' units; no SKY; fixes without a position send nothing")
    func ownTracks() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat", format: .owntracks))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        var noFix = Fix()
        noFix.mode = .noFix
        harness.send(noFix)
        harness.send(SkyView())
        harness.send(movingFix(second: 5))
        harness.sendDevice(online: true)
        let sent = await fake.waitForSent(2)
        try await Task.sleep(for: .milliseconds(50))
        #expect(fake.sent.map(\.topic) == ["owntracks/boat/ttyUSB0", "gpsfix/boat/ttyUSB0/device"])
        #expect(sent[0].retain)
        let location = try #require(JSONSerialization.jsonObject(with: Data(sent[0].payload)) as? [String: Any])
        #expect(location["_type"] as? String == "location")
        #expect(location["tid"] as? String == "B0")
        #expect((location["lat"] as? Double).map { abs($0 - 48.1377) < 1e-9 } == true)
        #expect(location["lon"] as? Double == 11.5756)
        #expect(location["tst"] as? Int == 1_795_435_205)  // 2026-11-23T12:00:05Z
        #expect(location["acc"] as? Int == 5)
        #expect(location["alt"] as? Int == 520)
        #expect(location["vel"] as? Int == 36)  // 10 m/s in km/h
        #expect(location["cog"] as? Int == 45)
    }

    @Test("Stopping says the device is offline (retained) and disconnects cleanly")
    func stop() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat"))
        let fake = harness.fake
        fake.connect()
        harness.send(movingFix(second: 1))
        _ = await fake.waitForSent(1)
        harness.task.cancel()
        await harness.task.value
        #expect(fake.stopped)
        #expect(fake.sent.last == fake.will)
    }

    @Test("A problem the client library reports (a failed attempt, a warning) changes no connection state")
    func trouble() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat"))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.trouble("OpenSSL Error[0]: certificate verify failed")
        #expect(harness.publisher.counters()[0].counters.connected == false)
        fake.connect()
        fake.trouble("a warning while connected")
        harness.send(movingFix(second: 1))
        #expect(await fake.waitForSent(1).count == 1)
        #expect(harness.publisher.counters()[0].counters.connected)
    }

    @Test("A message received too long to read is counted, each time")
    func oversizedReceived() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat"))
        defer { harness.task.cancel() }
        harness.fake.connect()
        harness.fake.receiveOversized(on: "homeassistant/status", bytes: 1 << 20)
        harness.fake.receiveOversized(on: "homeassistant/status", bytes: 300)
        #expect(harness.publisher.counters()[0].counters.ignored == 2)
        #expect(harness.publisher.counters()[0].counters.summary.hasSuffix(", ignored 2 (received, too long)"))
    }

    @Test("Home Assistant saying online again and again gets the discovery configs once a minute at most; the device's state is never pushed out")
    func discoveryRepublishedOnceAMinute() async throws {
        let harness = try await FleetHarness(
            configuration: FleetConfiguration(hostName: "boat", homeAssistant: HomeAssistantOptions(release: "test")))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        harness.sendDevice(online: true)
        _ = await fake.waitForSent(6)
        fake.deliverAll()
        let configs = { fake.sent.filter { $0.topic.hasPrefix("homeassistant/") }.count }
        let published = configs()
        #expect(published > 0)
        // A TPV queued after the onlines: once it is sent, so is all queued before it.
        func onlines(then second: Int) async -> Int {
            for _ in 0..<100 { fake.receive(on: "homeassistant/status", "online") }
            harness.send(movingFix(second: second))
            for _ in 0..<500 where !fake.sent.contains(where: { $0.topic.hasSuffix("/tpv") && text($0.payload).contains(":0\(second).") }) {
                try? await Task.sleep(for: .milliseconds(10))
            }
            fake.deliverAll()
            return configs()
        }
        #expect(await onlines(then: 1) == 2 * published, "one set of configs for 100 onlines")
        harness.clock.advance(by: .seconds(60))
        #expect(await onlines(then: 2) == 3 * published, "one set again a minute later")
        #expect(harness.publisher.counters()[0].counters.dropped == 0)
    }

    @Test(
        "Home Assistant's configs: each sensor reads a topic that is published (none of TPV and SKY with --mqtt-format owntracks), ids in the characters Home Assistant allows, default_entity_id and not the deprecated object_id",
        arguments: [FleetConfiguration.Format.gpsd, .owntracks])
    func discoveryConfigs(format: FleetConfiguration.Format) async throws {
        let harness = try await FleetHarness(
            configuration: FleetConfiguration(hostName: "båt", format: format, homeAssistant: HomeAssistantOptions(release: "test")))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        harness.sendDevice(online: true)
        harness.send(movingFix(second: 1))
        harness.send(SkyView())
        try await Task.sleep(for: .milliseconds(200))
        fake.deliverAll()
        let configs = fake.sent.filter { $0.topic.hasPrefix("homeassistant/") }
        #expect(configs.count == (format == .gpsd ? 5 : 1), "\(configs.map(\.topic))")
        let published = Set(fake.sent.map(\.topic))
        for config in configs {
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(config.payload)) as? [String: Any])
            if let stateTopic = payload["state_topic"] as? String {
                #expect(published.contains(stateTopic), "\(config.topic) reads \(stateTopic), which nothing publishes")
            }
            let parts = config.topic.split(separator: "/")
            let id = String(parts[2])
            #expect(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }, "\(config.topic)")
            #expect(payload["object_id"] == nil && payload["default_entity_id"] as? String == "\(parts[1]).\(id)")
        }
    }

    @Test("A message the connection refuses as disconnected goes back to the queue and out once connected")
    func refusedWhileDisconnecting() async throws {
        let harness = try await FleetHarness(configuration: FleetConfiguration(hostName: "boat"))
        defer { harness.task.cancel() }
        let fake = harness.fake
        fake.connect()
        fake.state.withLock { $0.connected = false }  // gone, but not yet reported
        harness.send(movingFix(second: 1))
        try await Task.sleep(for: .milliseconds(50))
        #expect(fake.sent.isEmpty)
        #expect(harness.publisher.counters()[0].counters.connected == false)
        fake.connect()
        #expect(await fake.waitForSent(1).map(\.topic) == ["gpsfix/boat/ttyUSB0/tpv"])
        #expect(harness.publisher.counters()[0].counters.failed == 0)
    }
}

@Suite("MQTT addresses and topic names")
struct BrokerAddressTests {
    @Test func fullAddress() throws {
        let broker = try MQTTBroker(url: "mqtts://fleet:s%40cr%3At@broker.example.org:8884/vehicles/van7")
        #expect(broker == {
            var expected = try! MQTTBroker(url: "mqtts://broker.example.org")
            expected.port = 8884
            expected.username = "fleet"
            expected.password = "s@cr:t"
            expected.prefix = "vehicles/van7"
            return expected
        }())
        #expect(broker.usesTLS)
        #expect(broker.description == "mqtts://fleet@broker.example.org:8884")
        #expect(broker.with(password: "from-file").password == "from-file")
        #expect(broker.with(password: nil).password == "s@cr:t")
    }

    @Test("two devices whose names share their first 50 characters get two client ids, each within 64 bytes: no broker drops one for the other")
    func distinctClientIDs() throws {
        let devices = ["A", "B"].map { "/dev/serial/by-id/usb-Silicon_Labs_CP2102N_USB_to_UART_Bridge_Controller_\($0)-if00-port0" }
        let ids = Locked<[String]>([])
        _ = try FleetPublisher(
            devices: devices, configuration: FleetConfiguration(hostName: "raspberrypi"), clock: ManualClock(), logger: Logger(label: "test")
        ) { clientID, will throws(MQTTError) in
            ids.withLock { $0.append(clientID) }
            return FakePublisher(clientID: clientID, will: will)
        }
        let made = ids.withLock { $0 }
        #expect(made.count == 2 && Set(made).count == 2, "\(made)")
        #expect(made.allSatisfy { $0.utf8.count <= 64 && $0.hasPrefix("gpsfix-raspberrypi-usb-Silicon_Labs") }, "\(made)")
        // Cut between characters, never through one.
        let accented = FleetPublisher<ManualClock>.clientID("gpsfix-" + String(repeating: "é", count: 40))
        #expect(accented.utf8.count <= 64 && !accented.contains("\u{FFFD}"), "\(accented)")
    }

    @Test func defaults() throws {
        let plain = try MQTTBroker(url: "mqtt://127.0.0.1")
        #expect(plain.port == 1883 && !plain.usesTLS && plain.username == nil && plain.prefix == nil)
        #expect(try MQTTBroker(url: "mqtts://[::1]").port == 8883)
        #expect(try MQTTBroker(url: "mqtts://[::1]").host == "::1")
        #expect(try MQTTBroker(url: "mqtt://user@host:1884/").username == "user")
        #expect(FleetConfiguration(hostName: "vm").prefix == "gpsfix/vm")
        #expect(FleetConfiguration(prefix: "a/b", hostName: "vm").prefix == "a/b")
    }

    @Test(arguments: ["http://host", "mqtt://", "mqtt://host:0", "mqtt://host:99999", "mqtt://host:x", "mqtt://host/a/#", "mqtt://u:p@[::1"])
    func refused(_ url: String) {
        #expect(throws: MQTTAddressError.self) { try MQTTBroker(url: url) }
    }

    @Test("an address refused for any reason is named in the error without its password")
    func errorsHideThePassword() {
        for url in [
            "mqtt://fleet:hunter2@host:99999", "mqtt://fleet:hun/ter2@[::1", "mqtt://fleet:hunter2@host/a/#", "mqtt://fleet:hunter2@",
            "mqtt://fleet:hun/ter2@host:x", "mqtt://fleet:hun@ter2@",
            // Without `://` (a scheme forgotten, a slash dropped) it is still an address.
            "fleet:hunter2@host", "mqtt:/fleet:hunter2@host", "mqtt:fleet:hunter2@host",
        ] {
            do {
                _ = try MQTTBroker(url: url)
                Issue.record("\(url) was accepted")
            } catch {
                #expect(!error.description.contains("hunter2") && !error.description.contains("ter2"), "\(error.description)")
            }
        }
    }

    @Test func topicNames() {
        #expect(FleetConfiguration.topicName(forDevice: "/dev/ttyUSB0") == "ttyUSB0")
        #expect(FleetConfiguration.topicName(forDevice: "/dev/pts/3") == "pts3")
        #expect(FleetConfiguration.topicName(forDevice: "/dev/serial/by-id/usb-u-blox_GNSS-if00") == "usb-u-blox_GNSS-if00")
        #expect(FleetConfiguration.topicName(forDevice: "gpsd://10.0.0.2:2947") == "10.0.0.2:2947")
        // No wildcard: the broker refuses a topic holding one, and the will set with it.
        #expect(FleetConfiguration.topicName(forDevice: "/dev/serial/by-id/usb-GPS#1+2-if00") == "usb-GPS_1_2-if00")
    }
}
