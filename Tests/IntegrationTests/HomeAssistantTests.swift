import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Home Assistant's MQTT discovery, through a real mosquitto broker, read as Home
/// Assistant reads it.
@Suite("Home Assistant discovery through a real mosquitto", .serialized, .enabled(if: installedOrInCI(TestBroker.isUsable), "needs mosquitto and mosquitto-clients"))
struct HomeAssistantTests {
    static func json(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    @Test("retained configs of a tracker and its sensors, the location attributes, republishing when Home Assistant says online, offline after SIGKILL")
    func discovery() throws {
        let folder = try makeTemporaryFolder("ha")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broker = try TestBroker(folder: folder)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", socket, "--log-level", "info", "--mqtt", "mqtt://127.0.0.1:\(broker.port)/fleet/boat",
            "--mqtt-homeassistant",
        ])
        defer { daemon.stop() }
        _ = LineClient.connect(unixPath: socket)

        // Five retained configs: the tracker and four sensors.
        _ = try broker.subscribe("homeassistant/#", count: 5, seconds: 15)
        let configs = try broker.subscribe("homeassistant/#", count: 5, seconds: 10)  // a later subscriber's
        #expect(configs.count == 5 && configs.allSatisfy(\.retained), "\(configs.map(\.topic)) \(daemon.errorText.suffix(300))")
        let tracker = try #require(configs.first { $0.topic.hasPrefix("homeassistant/device_tracker/") }.flatMap { Self.json($0.payload) })
        #expect(tracker["source_type"] as? String == "gps")
        #expect((tracker["unique_id"] as? String)?.hasPrefix("gpsfix_") == true)
        #expect((tracker["json_attributes_topic"] as? String)?.hasPrefix("fleet/boat/") == true)
        #expect(tracker["availability_topic"] as? String != nil && tracker["availability_template"] as? String != nil)
        let device = try #require(tracker["device"] as? [String: Any])
        #expect((device["identifiers"] as? [String])?.first == tracker["unique_id"] as? String)
        #expect(device["manufacturer"] as? String == "GPSFix" && device["sw_version"] as? String != nil)
        let sensors = configs.filter { $0.topic.hasPrefix("homeassistant/sensor/") }.compactMap { Self.json($0.payload) }
        #expect(Set(sensors.compactMap { $0["name"] as? String }) == ["Fix mode", "Satellites used", "Satellites seen", "Horizontal error"])
        #expect(sensors.allSatisfy { ($0["state_topic"] as? String)?.hasPrefix("fleet/boat/") == true && $0["value_template"] != nil })

        // The attributes, as Home Assistant's MQTT device tracker reads them.
        let attributesTopic = try #require(tracker["json_attributes_topic"] as? String)
        let location = try #require(try broker.subscribe(attributesTopic, count: 1, seconds: 15).first.flatMap { Self.json($0.payload) })
        let latitude = try #require(location["latitude"] as? Double), longitude = try #require(location["longitude"] as? Double)
        #expect(abs(latitude) <= 90 && abs(longitude) <= 180 && latitude != 0)
        #expect(Set(location.keys).isSubset(of: ["latitude", "longitude", "gps_accuracy", "altitude", "speed", "course"]))
        // Availability: the retained device state says online, by the config's template's field.
        let availabilityTopic = try #require(tracker["availability_topic"] as? String)
        let state = try #require(try broker.subscribe(availabilityTopic, count: 1, seconds: 10).first.flatMap { Self.json($0.payload) })
        #expect(state["online"] as? Bool == true)

        // Anyone who may publish to the status topic sends a megabyte: not read, counted, logged once.
        let large = folder.appendingPathComponent("large")
        try Data(repeating: UInt8(ascii: "x"), count: 1 << 20).write(to: large)
        _ = try run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "homeassistant/status", "-f", large.path])
        try waitUntil("the daemon logs the message it ignored", within: 10) {
            daemon.errorText.contains("MQTT message of 1048576 bytes on homeassistant/status ignored")
        }

        // Home Assistant restarts: it says online, and the configs come again (not as retained copies).
        let again = try RunningProcess("/usr/bin/mosquitto_sub", [
            "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "homeassistant/+/+/config", "-C", "10", "-W", "15", "-F", "%r %t",
        ])
        // Subscribed once the broker has sent it the retained configs.
        try waitUntil("the retained configs", within: 15) {
            again.outputText.split(separator: "\n").filter { $0.hasPrefix("1 ") }.count >= 5
        }
        _ = try run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "homeassistant/status", "-m", "online"])
        if again.wait(timeout: 20) == nil { again.stop() }
        let fresh = again.outputText.split(separator: "\n").filter { $0.hasPrefix("0 ") }
        #expect(fresh.count >= 5, "\(again.outputText)")

        // The daemon dies: the broker publishes its last will, and the device is unavailable.
        daemon.stop(SIGKILL)
        usleep(500_000)
        let afterDeath = try broker.subscribe(availabilityTopic, count: 1, seconds: 10).first.flatMap { Self.json($0.payload) }
        #expect(afterDeath?["online"] as? Bool == false)
    }

    @Test("where the time service serves the device, a time offset sensor reads its TOFF reports")
    func timeOffsetSensor() throws {
        let folder = try makeTemporaryFolder("ha-time")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broker = try TestBroker(folder: folder)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            "--demo", "--socket", socket, "--time-from-pty", "--no-shm", "--chrony-socket-dir", folder.path,
            "--mqtt", "mqtt://127.0.0.1:\(broker.port)/fleet/boat", "--mqtt-homeassistant",
        ])
        defer { daemon.stop() }
        _ = LineClient.connect(unixPath: socket)
        // The retained configs, once the first TOFF has added the sensor.
        _ = try broker.subscribe("fleet/boat/+/toff", count: 1, seconds: 15)
        let configs = try broker.subscribe("homeassistant/sensor/+/config", count: 5, seconds: 15)
        let sensor = try #require(configs.compactMap { Self.json($0.payload) }.first { $0["name"] as? String == "Time offset" })
        #expect(sensor["unit_of_measurement"] as? String == "ms")
        let topic = try #require(sensor["state_topic"] as? String)
        let toff = try #require(try broker.subscribe(topic, count: 1, seconds: 10).first.flatMap { Self.json($0.payload) })
        #expect(toff["class"] as? String == "TOFF" && toff["real_sec"] as? Int != nil && toff["clock_nsec"] as? Int != nil)
    }
}
