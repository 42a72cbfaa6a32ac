#if canImport(Glibc)
import Glibc
#endif
import GPSDProtocol
import GPSFixServer
import Logging

/// How fixes go to the broker.
public struct FleetConfiguration: Sendable {
    /// What is published for each TPV.
    public enum Format: String, CaseIterable, Sendable {
        /// gpsd's JSON on `PREFIX/DEVICE/tpv`, `sky`, `device`.
        case gpsd
        /// OwnTracks' location on `owntracks/HOSTNAME/DEVICE` (and the device state as gpsd JSON).
        case owntracks
        case both
    }

    /// Topics start with it: `gpsfix/HOSTNAME` unless the address names another.
    public var prefix: String
    /// The machine's name, for OwnTracks' topic and the client ids.
    public var hostName: String
    public var format: Format
    /// At most one TPV (and one SKY) per device per interval; `.zero` for every cycle.
    public var interval: Duration
    /// 0 (at most once) or 1 (at least once).
    public var qos: Int
    /// Messages kept per device while the broker is away or slow; past it the oldest go.
    public var queueCapacity: Int
    /// Messages handed to the client library and not yet delivered, per device.
    public var window: Int
    /// Home Assistant's MQTT discovery, when asked for.
    public var homeAssistant: HomeAssistantOptions?

    public init(prefix: String? = nil, hostName: String = FleetConfiguration.hostName(), format: Format = .gpsd,
                interval: Duration = .zero, qos: Int = 0, queueCapacity: Int = 256, window: Int = 32,
                homeAssistant: HomeAssistantOptions? = nil) {
        self.prefix = prefix ?? "gpsfix/\(hostName)"
        self.hostName = hostName
        self.format = format
        self.interval = interval
        self.qos = qos
        self.queueCapacity = queueCapacity
        self.window = window
        self.homeAssistant = homeAssistant
    }

    /// This machine's host name (`gethostname`).
    public static func hostName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "localhost" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The name a device's topics use: its path's last component (`/dev/ttyUSB0` →
    /// `ttyUSB0`), joined to the one before when it is only a number (`/dev/pts/3` → `pts3`),
    /// with MQTT's wildcards (`+`, `#`) and NUL, which no topic published to may hold (udev
    /// lets them into a `/dev/serial/by-id` name), as `_`.
    public static func topicName(forDevice path: String) -> String {
        let components = path.split(separator: "/")
        guard let last = components.last else { return path }
        let name = components.count > 1 && last.allSatisfy(\.isNumber) ? "\(components[components.count - 2])\(last)" : String(last)
        return String(name.map { $0 == "+" || $0 == "#" || $0 == "\0" ? "_" : $0 })
    }
}

/// Publishes every device's reports to an MQTT broker: the ``ReportSubscriber`` the
/// server hands its TPV, SKY and DEVICE reports to.
///
/// Each device has its own connection (``MessagePublisher``), so that its last will, an
/// offline DEVICE report retained on `PREFIX/DEVICE/device`, marks exactly that device
/// offline when the daemon dies. Reports wait in a bounded queue per device, never on the
/// event loop; see ``OutboundQueue`` for what happens while the broker is away.
public final class FleetPublisher<C: Clock>: ReportSubscriber where C.Duration == Duration {
    private let links: [String: DeviceLink<C>]
    private let orderedLinks: [DeviceLink<C>]

    /// `connect` makes one device's connection, with the client id and last will given.
    public init(
        devices: [String], configuration: FleetConfiguration, clock: C, logger: Logger,
        connect: (_ clientID: String, _ will: MQTTMessage) throws(MQTTError) -> any MessagePublisher
    ) throws(MQTTError) {
        var links: [DeviceLink<C>] = []
        for device in devices {
            let topics = FleetTopics(device: device, configuration: configuration)
            let will = MQTTMessage(topic: topics.device, payload: DeviceLink<C>.offlineReport(of: device), qos: configuration.qos, retain: true)
            let publisher = try connect(Self.clientID("gpsfix-\(configuration.hostName)-\(topics.name)-\(getpid())"), will)
            links.append(DeviceLink(device: device, topics: topics, publisher: publisher, configuration: configuration,
                                    clock: clock, logger: logger))
        }
        orderedLinks = links
        self.links = Dictionary(links.map { ($0.device, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// `name` when it is at most 64 bytes (what every broker takes); otherwise its first
    /// 55 bytes and a hash of the whole: cut short alone, two devices whose paths share
    /// their beginning (`/dev/serial/by-id/usb-...`) would share an id, and a broker drops
    /// the older of two connections with one.
    static func clientID(_ name: String) -> String {
        guard name.utf8.count > 64 else { return name }
        let hash = name.utf8.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 }  // FNV-1a
        let hex = String(hash, radix: 16)
        // Cut between characters: a character cut through would become U+FFFD, 3 bytes.
        var bytes = 0
        let head = name.unicodeScalars.prefix { scalar in
            bytes += scalar.utf8.count
            return bytes <= 55
        }
        return String(String.UnicodeScalarView(head)) + "-" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    public func receive(_ report: PublishedReport) {
        links[report.device]?.receive(report)
    }

    /// Connects every device's publisher and publishes until the task is cancelled; then
    /// marks each device offline (retained) and disconnects cleanly.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for link in orderedLinks { group.addTask { await link.run() } }
        }
    }

    /// Each device's counters, in the order the devices were configured.
    public func counters() -> [(device: String, counters: MQTTCounters)] {
        orderedLinks.map { ($0.device, $0.counters) }
    }

    /// For the status line: `mqtt: connected, 1200 published`.
    public var status: String {
        let all = counters().map(\.counters)
        let connected = all.filter(\.connected).count
        let state = connected == all.count ? "connected" : connected == 0 ? "not connected" : "\(connected)/\(all.count) connected"
        return "mqtt: \(state), \(all.reduce(0) { $0 + $1.published }) published"
    }
}

/// The topics of one device.
struct FleetTopics: Sendable {
    var name: String
    var tpv: String
    var sky: String
    var device: String
    var ownTracks: String
    /// Home Assistant's tracker attributes.
    var location: String
    /// The time service's TOFF reports, for Home Assistant's time offset sensor.
    var toff: String

    init(device path: String, configuration: FleetConfiguration) {
        name = FleetConfiguration.topicName(forDevice: path)
        tpv = "\(configuration.prefix)/\(name)/tpv"
        sky = "\(configuration.prefix)/\(name)/sky"
        device = "\(configuration.prefix)/\(name)/device"
        location = "\(configuration.prefix)/\(name)/location"
        toff = "\(configuration.prefix)/\(name)/toff"
        ownTracks = "owntracks/\(configuration.hostName)/\(name)"
    }
}
