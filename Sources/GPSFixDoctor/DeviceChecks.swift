
/// A serial device: it exists, is a character device the daemon's user may open, and
/// nothing else holds it (gpsd, ModemManager, a login or the kernel's console).
enum DeviceChecks {
    static func findings(for device: String, root: SystemRoot, processes: [SystemRoot.Process], user: String) -> [Finding] {
        let check = "device \(device)"
        let real = root.resolved(device)
        guard let status = root.status(device) else {
            return [Finding(check, .fail, "does not exist", fix: "plug the receiver in, or name it as ls -l /dev/serial/by-id/ shows it")]
        }
        guard status.isCharacterDevice else {
            return [Finding(check, .fail, "is not a character device", fix: "name the receiver's serial port (/dev/ttyUSB0, /dev/ttyACM0, /dev/serial/by-id/...)")]
        }
        guard !real.hasPrefix("/dev/pts/") else {
            return [Finding(check, .ok, "a pseudo-terminal: a replay (gpsfix replay, the demo), not a receiver")]
        }
        var findings = [
            openable(check, mode: status.mode, group: status.group, needs: 0o6, root: root, user: user,
                rule: "a udev rule: SUBSYSTEM==\"tty\", KERNEL==\"\(real.fileName)\", GROUP=\"dialout\", MODE=\"0660\"")
        ]
        for holder in processes where holder.name != "gpsfixd" && holder.openFiles.contains(where: { $0 == real || $0 == device }) {
            let fix = switch holder.name {
            case "gpsd": "systemctl disable --now gpsd.socket gpsd.service"
            case "ModemManager": "systemctl disable --now ModemManager, or ENV{ID_MM_DEVICE_IGNORE}=\"1\" in a udev rule for the receiver"
            case "agetty", "getty", "login": "systemctl disable --now serial-getty@\(real.fileName).service"
            default: "stop \(holder.name) (pid \(holder.id)), or point it elsewhere"
            }
            findings.append(Finding(check, .fail, "held by \(holder.name) (pid \(holder.id))", fix: fix))
        }
        let name = real.fileName
        let consoles = (root.file("/proc/cmdline") ?? "").split(whereSeparator: \.isWhitespace)
            .filter { $0.hasPrefix("console=") }.map { $0.dropFirst("console=".count).prefix { $0 != "," } }
        if consoles.contains(where: { $0 == name }) {
            findings.append(Finding(check, .fail, "the kernel's console writes to \(name) (console= on the kernel command line)",
                fix: "remove console=\(name)... from the kernel command line (raspi-config: no login shell over serial)"))
        }
        if root.exists("/etc/systemd/system/getty.target.wants/serial-getty@\(name).service") {
            findings.append(Finding(check, .fail, "a login prompt (serial-getty@\(name)) is enabled on it",
                fix: "systemctl disable --now serial-getty@\(name).service"))
        }
        return findings
    }

    /// Whether the daemon's `user` may open a device with `mode` and `group`: the access
    /// it `needs` (4 read, 6 read and write) for group dialout with the user in it, or for
    /// all. A failure's fix is the udev `rule` that gives the device to dialout, or adding
    /// the user to the group.
    static func openable(_ check: String, mode: UInt32, group: UInt32, needs: UInt32, root: SystemRoot, user: String, rule: String) -> Finding {
        let dialout = root.group("dialout")
        let account = root.user(user)
        let allowedToGroup = mode & (needs << 3) == needs << 3 && group == dialout?.id
        let allowedToAll = mode & needs == needs
        let inDialout = account.map { $0.group == dialout?.id } == true || dialout?.members.contains(user) == true
        if !allowedToAll && !allowedToGroup {
            let access = needs == 0o6 ? "readable and writable" : "readable"
            return Finding(check, .fail, "not \(access) by group dialout (mode \(String(mode, radix: 8)))", fix: rule)
        }
        if account != nil, !inDialout, !allowedToAll {
            return Finding(check, .fail, "\(user) is not in group dialout, so the daemon cannot open it", fix: "adduser \(user) dialout")
        }
        return Finding(check, .ok, "a character device the daemon's user may open")
    }
}
