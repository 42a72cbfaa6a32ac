import GPSFix

/// The time service: chrony's refclocks for the daemon's sockets or shared memory, their
/// sockets writable by the daemon, chrony reaching them, pulses, and the receiver's offset.
enum TimeChecks {
    static func findings(root: SystemRoot, daemon: DaemonObservation, devices: [String], settings: DoctorSettings) -> [Finding] {
        var findings: [Finding] = []
        // A replay serves time only when asked (--time-from-pty): checked then, as its TOFF says.
        let serial = devices.filter { $0.hasPrefix("/dev/") && (!root.resolved($0).hasPrefix("/dev/pts/") || !daemon.clockOffsets.isEmpty) }
        if let configuration = chronyConfiguration(root) {
            let refclocks = configuration.split(separator: "\n").map { $0.split(whereSeparator: \.isWhitespace) }
                .filter { $0.first == "refclock" && $0.count >= 3 }
            for device in serial {
                let base = device.fileName
                let socket = settings.chronySocketDirectory + "/chrony.clk.\(base).sock"
                let sock = refclocks.contains { $0[1] == "SOCK" && $0[2] == socket }
                let shm = refclocks.contains { $0[1] == "SHM" }
                guard sock || shm else {
                    findings.append(Finding("chrony", .warn, "no refclock for \(device) in chrony's configuration",
                        fix: "add to /etc/chrony/conf.d/gpsfix.conf: refclock SOCK \(socket) refid GPS poll 4 (then systemctl restart chrony)"))
                    continue
                }
                findings.append(Finding("chrony", .ok, sock ? "refclock SOCK \(socket)" : "refclock SHM (ntpd's shared memory)"))
                if sock { findings += socketFindings(socket, root: root, user: settings.user) }
            }
            if let sources = settings.chronySources {
                let refclockLines = sources.split(separator: "\n").filter { $0.hasPrefix("#") }
                let reached = refclockLines.contains { line in
                    let fields = line.split(whereSeparator: \.isWhitespace)
                    return fields.count > 4 && fields[4] != "0"
                }
                findings.append(reached
                    ? Finding("chronyc sources", .ok, "chrony reaches a refclock: \(refclockLines.first.map(String.init) ?? "")")
                    : Finding("chronyc sources", .warn, refclockLines.isEmpty ? "chrony lists no refclock" : "chrony has not reached its refclocks yet",
                        fix: "wait a minute after a fix; else check the refclock lines and journalctl -u chrony"))
            }
        } else {
            findings.append(Finding("chrony", .ok, "chrony is not installed (the time service also writes ntpd's shared memory)"))
        }
        for pps in settings.ppsDevices {
            guard let status = root.status(pps), status.isCharacterDevice else {
                findings.append(Finding("pps \(pps)", .fail, "does not exist", fix: "load pps-gpio or pps-ldisc for the receiver's pulse line (ls /dev/pps*)"))
                continue
            }
            // The kernel makes PPS devices root's alone; the package's udev rule gives them to
            // dialout. Reading is enough to fetch pulses.
            let access = DeviceChecks.openable("pps \(pps)", mode: status.mode, group: status.group, needs: 0o4, root: root, user: settings.user,
                rule: #"udevadm trigger --subsystem-match=pps --action=change (the package's rule gives PPS devices to dialout; installed by hand: SUBSYSTEM=="pps", GROUP="dialout", MODE="0660" in /etc/udev/rules.d)"#)
            guard access.status == .ok else {
                findings.append(access)
                continue
            }
            let pulses = daemon.pulses.values.reduce(0, +)
            findings.append(pulses > 0 || daemon.failure != nil
                ? Finding("pps \(pps)", .ok, daemon.failure == nil ? "\(pulses) pulses in \(Int(daemon.window)) s" : "present")
                : Finding("pps \(pps)", .warn, "no pulse in \(Int(daemon.window)) s", fix: "most receivers pulse only with a fix; check the wiring"))
        }
        if !daemon.clockOffsets.isEmpty {
            let sorted = daemon.clockOffsets.sorted()
            let median = sorted[sorted.count / 2]
            let text = (median < 0 ? "" : "+") + FixedPoint.string(median, decimals: 3)
            findings.append(abs(median) < 0.5
                ? Finding("receiver time", .ok, "the clock is \(text) s from the receiver's time")
                : Finding("receiver time", .warn, "the clock is \(text) s from the receiver's time",
                    fix: "if the clock is right, the receiver's sentences lag: give --time-offset \(FixedPoint.string(-median, decimals: 3))"))
        }
        return findings
    }

    /// chrony's configuration with its `confdir` and `sourcedir` files; `nil` without chrony.
    static func chronyConfiguration(_ root: SystemRoot) -> String? {
        guard let main = root.file("/etc/chrony/chrony.conf") ?? root.file("/etc/chrony.conf") else { return nil }
        var text = main
        for directory in ["/etc/chrony/conf.d", "/etc/chrony/sources.d"] {
            for name in root.directory(directory) where name.hasSuffix(".conf") || name.hasSuffix(".sources") {
                text += "\n" + (root.file("\(directory)/\(name)") ?? "")
            }
        }
        return text
    }

    /// The SOCK socket exists (chronyd made it) and the daemon's user may write it.
    static func socketFindings(_ socket: String, root: SystemRoot, user: String) -> [Finding] {
        guard let status = root.status(socket), status.isSocket else {
            return [Finding("chrony socket", .warn, "\(socket) does not exist: chronyd makes it when it starts with the refclock",
                fix: "systemctl restart chrony")]
        }
        let account = root.user(user)
        let writable = status.mode & 0o002 != 0 || (account?.id == status.owner && status.mode & 0o200 != 0)
            || (account?.group == status.group && status.mode & 0o020 != 0) || account?.id == 0
        return [writable
            ? Finding("chrony socket", .ok, "\(socket) is writable by \(user)")
            : Finding("chrony socket", .fail, "\(socket) is not writable by \(user) (mode \(String(status.mode, radix: 8)))",
                fix: "run the daemon in chrony's group (SupplementaryGroups=_chrony), or chmod o+w the socket after chronyd starts")]
    }
}
