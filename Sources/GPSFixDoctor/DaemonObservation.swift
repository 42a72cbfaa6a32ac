import FoundationEssentials

/// What the doctor learned from the running daemon: its version, devices, counters and
/// services (`?STATUS;`), and the reports of a few seconds' watch.
public struct DaemonObservation: Sendable {
    /// One side of the daemon's listeners (`network`, `local`) as `?STATUS;` counts it:
    /// its connections open and its cap.
    public struct ConnectionSide: Sendable, Equatable {
        public var name: String
        public var connections: Int
        public var cap: Int

        public init(name: String, connections: Int, cap: Int) {
            self.name = name
            self.connections = connections
            self.cap = cap
        }
    }

    /// A device as `DEVICES` and `?STATUS;` describe it.
    public struct Device: Sendable, Equatable {
        public var path: String
        /// The serial speed found or set; `nil` for sources that are not serial lines.
        public var bps: Int?
        public var online = false
        public var sentences = 0
        public var rejected = 0

        public init(path: String, bps: Int? = nil, online: Bool = false, sentences: Int = 0, rejected: Int = 0) {
            self.path = path
            self.bps = bps
            self.online = online
            self.sentences = sentences
            self.rejected = rejected
        }
    }

    /// Where the daemon was asked.
    public var address: String
    /// Why it could not be asked; `nil` when it answered.
    public var failure: String?
    /// Whether the socket refused this user (not root, not in its group): the daemon may
    /// well be running.
    public var permissionDenied = false
    /// `VERSION`'s release (`gpsfix-0.2.0`).
    public var release: String?
    public var devices: [Device] = []
    /// The services' status lines by name (`mqtt`, `traccar`, `ntrip`, `timeService`,
    /// `nmeaOutput`); absent for those that do not run.
    public var services: [String: String] = [:]
    /// The network listeners' and the local sockets' connections, each against its own
    /// cap; empty when the daemon did not say (one older than the separate caps).
    public var connectionSides: [ConnectionSide] = []
    /// Seconds the reports were watched.
    public var window: Double = 0
    /// TPVs seen in the window, by device, and the last one's mode.
    public var fixes: [String: Int] = [:]
    public var modes: [String: Int] = [:]
    /// The last SKY's satellites, used and seen, by device.
    public var satellites: [String: (used: Int, visible: Int)] = [:]
    /// PPS reports in the window, by device.
    public var pulses: [String: Int] = [:]
    /// The system clock minus the receiver's time, seconds, from each TOFF.
    public var clockOffsets: [Double] = []

    public init(address: String, failure: String? = nil) {
        self.address = address
        self.failure = failure
    }

    /// The most devices kept: a daemon serves a handful; one that names more (not
    /// GPSFix) costs no more.
    public static let maximumDevices = 64
    /// The most clock offsets kept: a window of TOFF reports is some hundreds.
    public static let maximumClockOffsets = 4096
    /// Reports past those bounds, read and not counted.
    public var reportsNotKept = 0

    /// Where the device at `path` is in ``devices``, added when new and there is room.
    private mutating func deviceIndex(_ path: String) -> Int? {
        if let index = devices.firstIndex(where: { $0.path == path }) { return index }
        guard devices.count < Self.maximumDevices else { return nil }
        devices.append(Device(path: path))
        return devices.count - 1
    }

    /// Takes one report line of the daemon.
    public mutating func take(_ line: String) {
        guard let report = DaemonReport(line: line) else { return }
        let device = report.device ?? devices.first?.path ?? ""
        // A device not seen before is counted while there is room for it.
        func counts<Value>(_ table: [String: Value]) -> Bool { table[device] != nil || table.count < Self.maximumDevices }
        switch report.class {
        case "VERSION":
            release = report.release
        case "DEVICES":
            for entry in report.devices ?? [] {
                guard let path = entry.path, let index = deviceIndex(path) else { continue }
                devices[index].bps = entry.bps ?? devices[index].bps
            }
        case "STATUS":
            for entry in report.devices ?? [] {
                guard let path = entry.path, let index = deviceIndex(path) else { continue }
                devices[index].online = entry.online ?? false
                devices[index].sentences = entry.sentences ?? 0
                devices[index].rejected = entry.rejected ?? 0
            }
            for (name, value) in report.services ?? [:] {
                if let line = value.text { services[name] = line }
            }
            let sides = [("network", report.clients?.network), ("local", report.clients?.local)]
            connectionSides = sides.compactMap { name, side in
                guard let connections = side?.connections, let cap = side?.cap else { return nil }
                return ConnectionSide(name: name, connections: connections, cap: cap)
            }
        case "TPV" where counts(fixes):
            fixes[device, default: 0] += 1
            modes[device] = report.mode
        case "SKY" where counts(satellites):
            let used = report.uSat ?? report.satellites?.filter { $0.used == true }.count ?? 0
            let visible = report.nSat ?? report.satellites?.count ?? 0
            if report.satellites != nil || report.uSat != nil { satellites[device] = (used, visible) }
        case "PPS" where counts(pulses):
            pulses[device, default: 0] += 1
        case "TOFF" where clockOffsets.count < Self.maximumClockOffsets:
            let real = (report.real_sec ?? 0) + (report.real_nsec ?? 0) / 1e9
            let clock = (report.clock_sec ?? 0) + (report.clock_nsec ?? 0) / 1e9
            if real > 0 { clockOffsets.append(clock - real) }
        case "TPV", "SKY", "PPS", "TOFF":
            reportsNotKept += 1
        default:
            break
        }
    }
}

/// One report line of the daemon (gpsd's JSON), as far as the tool reads it: the doctor's
/// observation and `gpsfix watch`'s compact view. A field of another type than gpsd's
/// makes the line unread.
public struct DaemonReport: Decodable, Sendable {
    /// A device of `DEVICES` or `?STATUS;`.
    public struct Device: Decodable, Sendable {
        public var path: String?
        public var bps: Int?
        public var online: Bool?
        public var sentences: Int?
        public var rejected: Int?
    }

    /// A satellite of `SKY`.
    public struct Satellite: Decodable, Sendable {
        public var used: Bool?
    }

    /// `?STATUS;`'s clients, as far as the doctor reads them: each side's connections
    /// and cap.
    public struct Clients: Decodable, Sendable {
        public struct Side: Decodable, Sendable {
            public var connections: Int?
            public var cap: Int?
        }

        public var network: Side?
        public var local: Side?
    }

    /// A service's status: its line of text, or `nil` for anything else.
    public struct Status: Decodable, Sendable {
        public var text: String?

        public init(from decoder: any Decoder) throws {
            text = try? decoder.singleValueContainer().decode(String.self)
        }
    }

    /// `TPV`, `SKY`, `DEVICE`, `VERSION`, ...
    public var `class`: String
    public var device: String?
    public var release: String?
    public var devices: [Device]?
    public var services: [String: Status]?
    public var clients: Clients?
    public var path: String?
    public var online: Bool?
    public var message: String?
    public var time: String?
    public var mode: Int?
    public var lat: Double?
    public var lon: Double?
    public var altMSL: Double?
    public var speed: Double?
    public var track: Double?
    public var satellites: [Satellite]?
    public var uSat: Int?
    public var nSat: Int?
    public var hdop: Double?
    public var pdop: Double?
    public var real_sec: Double?
    public var real_nsec: Double?
    public var clock_sec: Double?
    public var clock_nsec: Double?

    /// The report of one line; `nil` for a line that is not one.
    public init?(line: String) {
        guard let report = try? JSONDecoder().decode(Self.self, from: Data(line.utf8)) else { return nil }
        self = report
    }
}
