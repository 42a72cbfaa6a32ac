import GPSFix

/// What the doctor checks against, beyond what the daemon says: the configuration's
/// devices (when the daemon is not running), the user it runs as, its time service.
public struct DoctorSettings: Sendable {
    /// Devices to check when the daemon names none (the configuration's).
    public var devices: [String] = []
    /// The configuration's kernel PPS devices.
    public var ppsDevices: [String] = []
    /// Where chronyd's SOCK refclock sockets are (`--chrony-socket-dir`).
    public var chronySocketDirectory = "/run"
    /// The user the daemon runs as.
    public var user = "gpsfix"
    /// `chronyc -n sources`' output, when chronyc can be run here; `nil` otherwise.
    public var chronySources: String?
    /// What is wrong with the configuration file (not TOML, or unreadable for another
    /// reason than this user's permissions): the daemon refuses to start with it.
    public var configurationProblem: String?
    /// The configuration file, when it is there but this user may not read it.
    public var unreadableConfiguration: String?
    /// The listeners the configuration asks for beside the socket (gpsd's TCP, HTTP,
    /// NMEA 0183 out), and whether each answered a connection.
    public var listeners: [Listener] = []

    /// A configured listener and whether it answered.
    public struct Listener: Sendable {
        public var name: String
        public var address: String
        public var answered: Bool

        public init(name: String, address: String, answered: Bool) {
            self.name = name
            self.address = address
            self.answered = answered
        }
    }

    public init() {}
}

/// Finds the traps a GPS daemon falls into, and says how to fix each: the daemon, its
/// devices and who else holds them, the receiver, the time service, the services.
public enum Doctor {
    public static func examine(root: SystemRoot, daemon: DaemonObservation, settings: DoctorSettings) -> [Finding] {
        var findings = daemonFindings(daemon) + connectionFindings(daemon)
        if let problem = settings.configurationProblem {
            findings.append(Finding("configuration", .fail, problem, fix: "gpsfixd --config FILE --check-config names the line; the daemon does not start until it is mended"))
        }
        if let path = settings.unreadableConfiguration {
            findings.append(Finding("configuration", .warn, "\(path) cannot be read by this user: its devices are not checked",
                fix: "run the doctor as root (the daemon reads it as gpsfix, whose group may read it)"))
        }
        let processes = root.processes()
        findings += portFindings(root: root, processes: processes)
        let devices = daemon.devices.isEmpty ? settings.devices.map { DaemonObservation.Device(path: $0) } : daemon.devices
        for device in devices where device.path.hasPrefix("/dev/") {
            findings += DeviceChecks.findings(for: device.path, root: root, processes: processes, user: settings.user)
        }
        if daemon.failure == nil {
            for device in devices { findings += receiverFindings(device, daemon) }
        }
        findings += TimeChecks.findings(root: root, daemon: daemon, devices: devices.map(\.path), settings: settings)
        findings += serviceFindings(daemon)
        if daemon.failure == nil { findings += settings.listeners.map(listenerFinding) }
        return findings
    }

    /// How full each side of the listeners is: the network listeners and the local sockets
    /// have a cap each, so a full network side refuses or evicts network clients only.
    static func connectionFindings(_ daemon: DaemonObservation) -> [Finding] {
        guard daemon.failure == nil, !daemon.connectionSides.isEmpty else { return [] }
        let sides = daemon.connectionSides
        let detail = sides.map { "\($0.name) \($0.connections) of \($0.cap)" }.joined(separator: ", ")
            + " connections (each side its own cap)"
        let full = sides.filter { $0.connections >= $0.cap }.map(\.name)
        guard full.isEmpty else {
            return [Finding("clients", .warn, detail + "; full: " + full.joined(separator: " and "),
                fix: "a new client there closes an idle one or is refused: raise max-clients if these clients are wanted")]
        }
        return [Finding("clients", .ok, detail)]
    }

    static func listenerFinding(_ listener: DoctorSettings.Listener) -> Finding {
        listener.answered
            ? Finding(listener.name, .ok, "answers on \(listener.address)")
            : Finding(listener.name, .fail, "nothing answers on \(listener.address), which the configuration names",
                fix: "journalctl -u gpsfixd says why it was not bound (the address may be taken: ss -ltnp)")
    }

    static func daemonFindings(_ daemon: DaemonObservation) -> [Finding] {
        if let failure = daemon.failure {
            let fix = daemon.permissionDenied
                ? "the socket is for group gpsfix: sudo adduser $USER gpsfix (then log in again), or sudo gpsfix doctor"
                : "systemctl start gpsfixd.socket gpsfixd.service (journalctl -u gpsfixd says why it stopped)"
            return [Finding("daemon", .fail, failure, fix: fix)]
        }
        // Connections accepted and nothing said: a socket systemd holds while the daemon
        // behind it fails to start, or a daemon stuck.
        guard let release = daemon.release else {
            return [Finding("daemon", .fail, "\(daemon.address) accepts connections, but no daemon answers on it",
                fix: "journalctl -u gpsfixd says why it does not start (gpsfixd --config /etc/gpsfix/gpsfixd.conf --check-config checks its file)")]
        }
        let notKept = daemon.reportsNotKept > 0 ? " (\(daemon.reportsNotKept) reports past the observation's bounds not counted)" : ""
        return [Finding("daemon", .ok, "\(release) answers on \(daemon.address)\(notKept)")]
    }

    /// gpsd, or its socket unit, on gpsd's port 2947; ModemManager probing serial ports.
    static func portFindings(root: SystemRoot, processes: [SystemRoot.Process]) -> [Finding] {
        var findings: [Finding] = []
        let inodes = root.listeningInodes(port: 2947)
        let holders = processes.filter { process in process.socketInodes.contains { inodes.contains($0) } }
        if let holder = holders.first(where: { $0.name != "gpsfixd" }) {
            let what = holder.name == "systemd" ? "systemd (gpsd.socket)" : "\(holder.name) (pid \(holder.id))"
            findings.append(Finding("port 2947", .fail, "\(what) listens on gpsd's port 2947, so gpsd's clients reach it, not gpsfixd",
                fix: "systemctl disable --now gpsd.socket gpsd.service"))
        } else if let holder = holders.first {
            findings.append(Finding("port 2947", .ok, "gpsfixd (pid \(holder.id)) serves gpsd's clients on 2947"))
        }
        if root.exists("/etc/systemd/system/sockets.target.wants/gpsd.socket") {
            findings.append(Finding("gpsd.socket", .warn, "gpsd.socket is enabled: at boot it takes port 2947 and starts gpsd on a client",
                fix: "systemctl disable --now gpsd.socket gpsd.service"))
        }
        if let manager = processes.first(where: { $0.name == "ModemManager" }) {
            findings.append(Finding("ModemManager", .warn, "ModemManager (pid \(manager.id)) probes new serial ports, garbling a receiver's first seconds",
                fix: "systemctl disable --now ModemManager, or tag the receiver ENV{ID_MM_DEVICE_IGNORE}=\"1\" in a udev rule"))
        }
        return findings
    }

    static func receiverFindings(_ device: DaemonObservation.Device, _ daemon: DaemonObservation) -> [Finding] {
        let check = "receiver \(device.path)"
        let fixes = daemon.fixes[device.path] ?? 0
        let seconds = FixedPoint.string(daemon.window, decimals: 0)
        guard device.online, fixes > 0 else {
            let detail = device.sentences == 0
                ? "no sentence read yet" : "\(device.sentences) sentences read, but no report in the last \(seconds) s"
            // Through the daemon, which holds the port: root could open it beside the
            // daemon, share its bytes and lift its exclusive hold on closing. A TCP
            // address is HOST:PORT, which holds no slash; a socket's path holds one.
            let address = daemon.address.contains("/") ? "--socket \(daemon.address)" : "--tcp \(daemon.address)"
            return [Finding(check, .fail, detail,
                fix: "check the cable and the speed: gpsfix watch \(address) --nmea shows the sentences the daemon takes from it")]
        }
        var parts = ["\(fixes) reports in \(seconds) s"]
        if let bps = device.bps { parts.append("\(bps) bps") }
        let mode = daemon.modes[device.path] ?? 0
        parts.append(["no mode", "no fix", "2D fix", "3D fix"][min(max(mode, 0), 3)])
        if let satellites = daemon.satellites[device.path] {
            parts.append("\(satellites.used)/\(satellites.visible) satellites used")
        }
        if device.rejected > 0 { parts.append("\(device.rejected) lines rejected") }
        guard mode >= 2 else {
            return [Finding(check, .warn, parts.joined(separator: ", "), fix: "give the antenna open sky; a cold start takes a few minutes")]
        }
        return [Finding(check, .ok, parts.joined(separator: ", "))]
    }

    static func serviceFindings(_ daemon: DaemonObservation) -> [Finding] {
        let names = [
            ("mqtt", "MQTT"), ("traccar", "Traccar"), ("ntrip", "NTRIP"), ("nmeaOutput", "NMEA 0183 out"),
            ("receivers", "receiver configuration"),
        ]
        return names.compactMap { key, name -> Finding? in
            guard let line = daemon.services[key] else { return nil }
            let troubled = ["retrying", "disconnected", "unreachable", "failed", "not connected", "differs", "not configured"]
                .contains { line.contains($0) }
            return Finding(name, troubled ? .warn : .ok, line,
                fix: troubled ? "see the daemon's log for the reason: journalctl -u gpsfixd -g '\(key)'" : nil)
        }
    }
}
