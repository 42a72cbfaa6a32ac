import GPSDProtocol
import GPSFix
import OutputFormats

/// What Home Assistant's MQTT discovery needs to know (`--mqtt-homeassistant`).
public struct HomeAssistantOptions: Sendable {
    /// The discovery prefix, `homeassistant` unless Home Assistant was told another.
    public var prefix: String
    /// The daemon's release, as the device's software version.
    public var release: String

    public init(prefix: String = "homeassistant", release: String) {
        self.prefix = prefix
        self.release = release
    }
}

/// Home Assistant's MQTT discovery for one device: a `device_tracker` and four sensors
/// that appear in Home Assistant by themselves, with no configuration there. The sensors
/// read the gpsd reports (TPV, SKY), so they are announced only where those are published
/// (`--mqtt-format gpsd` or `both`): an entity that never gets a value is not made.
///
/// - The configs are retained under `PREFIX/device_tracker/ID/config` and
///   `PREFIX/sensor/ID_KEY/config` (`PREFIX` is `homeassistant` unless given), published
///   at each connect and again whenever Home Assistant says `online` on `PREFIX/status`
///   (it restarted).
/// - The tracker's location is the attributes message on `TOPICS/location`:
///   `{"latitude":..,"longitude":..,"gps_accuracy":..,"altitude":..,"speed":..,"course":..}`,
///   `gps_accuracy` the receiver's horizontal error estimate (eph, metres), `speed` in m/s,
///   `course` in degrees true; what the fix does not know is left out.
/// - Availability is the device's retained DEVICE report on `TOPICS/device`, whose
///   `online` the last will turns false when the daemon dies: no second will is needed.
struct HomeAssistantDiscovery: Sendable {
    let configuration: HomeAssistantOptions
    let topics: FleetTopics
    let hostName: String
    let devicePath: String
    let qos: Int
    /// Whether TPV and SKY are published, which the sensors read.
    let gpsdReportsPublished: Bool

    /// Where Home Assistant says `online` when it starts.
    var statusTopic: String { "\(configuration.prefix)/status" }

    /// The id every entity of this device starts with: `gpsfix_HOST_DEVICE`, in the
    /// characters Home Assistant allows in a discovery topic (ASCII letters and digits,
    /// `_` and `-`; any other character, `é` too, becomes `_`).
    var objectID: String {
        let raw = "gpsfix_\(hostName)_\(topics.name)"
        return String(raw.map { $0.isASCII && ($0.isLetter || $0.isNumber) || $0 == "_" || $0 == "-" ? $0 : "_" })
    }

    /// The retained discovery configs: the tracker, then the sensors, and the time offset
    /// sensor where the time service serves the device (`timeServed`).
    func configs(timeServed: Bool) -> [MQTTMessage] {
        var messages = [message(component: "device_tracker", id: objectID) { json in
            json.field("name", string: "Position")
            json.field("source_type", string: "gps")
            json.field("json_attributes_topic", string: topics.location)
        }]
        for sensor in (gpsdReportsPublished ? Self.sensors : []) + (timeServed ? [Self.timeOffset] : []) {
            messages.append(message(component: "sensor", id: "\(objectID)_\(sensor.key)") { json in
                json.field("name", string: sensor.name)
                json.field("state_topic", string: sensor.topic(in: topics))
                json.field("value_template", string: sensor.template)
                if let unit = sensor.unit { json.field("unit_of_measurement", string: unit) }
                if let deviceClass = sensor.deviceClass { json.field("device_class", string: deviceClass) }
                if sensor.unit != nil { json.field("state_class", string: "measurement") }
                json.field("icon", string: sensor.icon)
            })
        }
        return messages
    }

    /// The tracker's attributes for `fix`; `nil` unless it has a position.
    func attributes(for fix: Fix) -> MQTTMessage? {
        HomeAssistantAttributes.payload(for: fix).map { MQTTMessage(topic: topics.location, payload: $0, qos: qos, retain: true) }
    }

    /// A sensor of the device: what it shows and where it reads it.
    struct Sensor: Sendable {
        var key: String
        var name: String
        /// Where it reads its reports.
        var source: Source
        var template: String
        var unit: String?
        var deviceClass: String?
        var icon: String

        enum Source: Sendable { case tpv, sky, toff }

        func topic(in topics: FleetTopics) -> String {
            switch source {
            case .tpv: topics.tpv
            case .sky: topics.sky
            case .toff: topics.toff
            }
        }
    }

    /// The receiver's time against the system clock, in milliseconds, from the time
    /// service's TOFF reports.
    static let timeOffset = Sensor(
        key: "time_offset", name: "Time offset", source: .toff,
        template: "{{ ((value_json.real_sec - value_json.clock_sec) * 1000 + (value_json.real_nsec - value_json.clock_nsec) / 1000000) | round(3) }}",
        unit: "ms", icon: "mdi:clock-check-outline")

    /// A report may leave a value out (a SKY of a view the receiver no longer lists, a TPV
    /// without an error estimate): the sensor then keeps its state.
    static let sensors = [
        Sensor(
            key: "fix_mode", name: "Fix mode", source: .tpv,
            template: "{{ ['unknown', 'no fix', '2D', '3D'][value_json.mode] }}", icon: "mdi:crosshairs-gps"),
        Sensor(
            key: "satellites_used", name: "Satellites used", source: .sky,
            template: "{{ value_json.uSat if value_json.uSat is defined else this.state }}", unit: "satellites",
            icon: "mdi:satellite-variant"),
        Sensor(
            key: "satellites_seen", name: "Satellites seen", source: .sky,
            template: "{{ value_json.nSat if value_json.nSat is defined else this.state }}", unit: "satellites",
            icon: "mdi:satellite-uplink"),
        Sensor(
            key: "horizontal_error", name: "Horizontal error", source: .tpv,
            template: "{{ value_json.eph if value_json.eph is defined else this.state }}", unit: "m",
            deviceClass: "distance", icon: "mdi:map-marker-radius"),
    ]

    /// One retained config: what `body` writes, then availability and the device block.
    private func message(component: String, id: String, _ body: (inout JSONWriter) -> Void) -> MQTTMessage {
        var json = JSONWriter(objectWithCapacity: 768)
        body(&json)
        json.field("unique_id", string: id)
        // The entity's id (object_id before Home Assistant 2025.10, which warns of it).
        json.field("default_entity_id", string: "\(component).\(id)")
        json.field("availability_topic", string: topics.device)
        json.field("availability_template", string: "{{ 'online' if value_json.online else 'offline' }}")
        json.nested("device", open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { device in
            device.nested("identifiers", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { $0.element(string: objectID) }
            device.field("name", string: "GPS \(topics.name) on \(hostName)")
            device.field("manufacturer", string: "GPSFix")
            device.field("model", string: "NMEA 0183 receiver at \(devicePath)")
            device.field("sw_version", string: configuration.release)
        }
        return MQTTMessage(
            topic: "\(configuration.prefix)/\(component)/\(id)/config", payload: json.finish().dropLast(2), qos: qos,
            retain: true)
    }
}
