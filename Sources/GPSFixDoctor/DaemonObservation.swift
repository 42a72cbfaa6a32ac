import Foundation

/// What the doctor learned from the running daemon: its version, devices, counters and
/// services (`?STATUS;`), and the reports of a few seconds' watch.
public struct DaemonObservation: Sendable {
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
    /// `VERSION`'s release (`gpsfix-0.2.0`).
    public var release: String?
    public var devices: [Device] = []
    /// The services' status lines by name (`mqtt`, `traccar`, `ntrip`, `timeService`,
    /// `nmeaOutput`); absent for those that do not run.
    public var services: [String: String] = [:]
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

    /// Takes one report line of the daemon.
    public mutating func take(_ line: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let kind = object["class"] as? String
        else { return }
        let device = object["device"] as? String ?? devices.first?.path ?? ""
        switch kind {
        case "VERSION":
            release = object["release"] as? String
        case "DEVICES":
            for entry in object["devices"] as? [[String: Any]] ?? [] {
                guard let path = entry["path"] as? String else { continue }
                let bps = entry["bps"] as? Int
                if let index = devices.firstIndex(where: { $0.path == path }) {
                    devices[index].bps = bps ?? devices[index].bps
                } else {
                    devices.append(Device(path: path, bps: bps))
                }
            }
        case "STATUS":
            for entry in object["devices"] as? [[String: Any]] ?? [] {
                guard let path = entry["path"] as? String else { continue }
                if !devices.contains(where: { $0.path == path }) { devices.append(Device(path: path)) }
                let index = devices.firstIndex { $0.path == path }!
                devices[index].online = entry["online"] as? Bool ?? false
                devices[index].sentences = entry["sentences"] as? Int ?? 0
                devices[index].rejected = entry["rejected"] as? Int ?? 0
            }
            for (name, value) in object["services"] as? [String: Any] ?? [:] {
                if let line = value as? String { services[name] = line }
            }
        case "TPV":
            fixes[device, default: 0] += 1
            modes[device] = object["mode"] as? Int
        case "SKY":
            let satellites = object["satellites"] as? [[String: Any]]
            let used = object["uSat"] as? Int ?? satellites?.filter { $0["used"] as? Bool == true }.count ?? 0
            let visible = object["nSat"] as? Int ?? satellites?.count ?? 0
            if satellites != nil || object["uSat"] != nil { self.satellites[device] = (used, visible) }
        case "PPS":
            pulses[device, default: 0] += 1
        case "TOFF":
            let real = (object["real_sec"] as? Double ?? 0) + (object["real_nsec"] as? Double ?? 0) / 1e9
            let clock = (object["clock_sec"] as? Double ?? 0) + (object["clock_nsec"] as? Double ?? 0) / 1e9
            if real > 0 { clockOffsets.append(clock - real) }
        default:
            break
        }
    }
}
