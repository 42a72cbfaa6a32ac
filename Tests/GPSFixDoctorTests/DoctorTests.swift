import Foundation
import GPSFixDoctor
import TestSupport
import ProcessTable
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fake machine: `/proc`, `/etc`, `/dev` and `/run` under a temporary root.
final class FakeMachine {
    let folder: URL
    var root: SystemRoot { SystemRoot(folder.path) }

    init() throws {
        folder = try makeTemporaryFolder("doctor")
        write("/etc/group", "root:x:0:\ndialout:x:20:gpsfix\ngpsfix:x:998:\n")
        write("/etc/passwd", "root:x:0:0::/root:/bin/sh\ngpsfix:x:998:998::/var/lib/gpsfixd:/usr/sbin/nologin\n")
        write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n")
    }

    private var sockets: [Int32] = []

    deinit {
        sockets.forEach { close($0) }
        try? FileManager.default.removeItem(at: folder)
    }

    func write(_ path: String, _ text: String) {
        let url = URL(fileURLWithPath: root.under(path))
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// A process with `files` open, as `/proc/PID/fd/N` links.
    func process(_ id: Int, _ name: String, files: [String]) {
        write("/proc/\(id)/comm", name + "\n")
        let fd = root.under("/proc/\(id)/fd")
        try? FileManager.default.createDirectory(atPath: fd, withIntermediateDirectories: true)
        for (index, file) in files.enumerated() { symlink(file, "\(fd)/\(index + 3)") }
    }

    /// A character device node (root may make one).
    func characterDevice(_ path: String, mode: mode_t, group: gid_t) {
        try? FileManager.default.createDirectory(atPath: root.under((path as NSString).deletingLastPathComponent), withIntermediateDirectories: true)
        mknod(root.under(path), S_IFCHR | mode, dev_t(1 << 8 | 3))  // major 1, minor 3
        chown(root.under(path), 0, group)
        chmod(root.under(path), mode)
    }

    /// A listening Unix socket at `path`, with `mode`; closed when the machine goes.
    func unixSocket(_ path: String, mode: mode_t) {
        try? FileManager.default.createDirectory(atPath: root.under((path as NSString).deletingLastPathComponent), withIntermediateDirectories: true)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        sockets.append(descriptor)
        var address = LineClient.unixAddress(root.under(path))
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        chmod(root.under(path), mode)
    }

    func examine(_ daemon: DaemonObservation = DaemonObservation(address: "/run/gpsfixd/gpsfixd.sock", failure: "cannot connect"),
                 settings: DoctorSettings = DoctorSettings()) -> [Finding] {
        Doctor.examine(root: root, daemon: daemon, settings: settings)
    }
}

/// `gpsfix doctor`'s findings, each from a fake machine that has (or lacks) the trap.
@Suite("gpsfix doctor")
struct DoctorTests {
    static let isRoot = getuid() == 0

    static func settings(devices: [String], pps: [String] = []) -> DoctorSettings {
        var settings = DoctorSettings()
        settings.devices = devices
        settings.ppsDevices = pps
        return settings
    }

    static func finding(_ findings: [Finding], _ check: String, _ status: CheckStatus) -> Finding? {
        findings.first { $0.check == check && $0.status == status }
    }

    @Test("the daemon not running is a failure, with how to start it; a socket that refuses this user, with how to join its group")
    func daemonDown() throws {
        let machine = try FakeMachine()
        let finding = try #require(Self.finding(machine.examine(), "daemon", .fail))
        #expect(finding.fix?.contains("systemctl start gpsfixd.socket") == true)
        // A socket that refuses this user is no daemon down: starting it again would not help.
        var refused = DaemonObservation(address: "/run/gpsfixd/gpsfixd.sock", failure: "permission denied")
        refused.permissionDenied = true
        let denied = try #require(Self.finding(machine.examine(refused), "daemon", .fail))
        #expect(denied.fix?.contains("adduser $USER gpsfix") == true && denied.fix?.contains("systemctl start") == false)
    }

    @Test("gpsd holding the receiver and port 2947, and gpsd.socket enabled", .enabled(if: isRoot))
    func gpsdInTheWay() throws {
        let machine = try FakeMachine()
        machine.characterDevice("/dev/ttyUSB0", mode: 0o660, group: 20)
        machine.process(812, "gpsd", files: ["/dev/ttyUSB0", "socket:[4242]"])
        machine.write("/proc/net/tcp", """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:0B83 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0

            """)
        machine.write("/etc/systemd/system/sockets.target.wants/gpsd.socket", "")
        let findings = machine.examine(settings: Self.settings(devices: ["/dev/ttyUSB0"]))
        let held = try #require(Self.finding(findings, "device /dev/ttyUSB0", .fail))
        #expect(held.detail == "held by gpsd (pid 812)")
        #expect(held.fix == "systemctl disable --now gpsd.socket gpsd.service")
        #expect(Self.finding(findings, "port 2947", .fail)?.detail.contains("gpsd (pid 812)") == true)
        #expect(Self.finding(findings, "gpsd.socket", .warn) != nil)
    }

    @Test("a busy machine: gpsd is named on port 2947 behind 30,000 other sockets (a /proc/net/tcp of 3.4 MB)")
    func busyMachine() throws {
        let machine = try FakeMachine()
        machine.process(812, "gpsd", files: ["socket:[4242]"])
        var table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        for index in 0..<30_000 {
            // Connections closing (st 06, TIME_WAIT) from another server's clients.
            table += "\(index): 0100007F:1F90 0100007F:\(String(index + 10_000, radix: 16, uppercase: true)) 06 00000000:00000000 03:00000F9A 00000000     0        0 0 3 0000000000000000\n"
        }
        table += "30000: 0100007F:0B83 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0\n"
        machine.write("/proc/net/tcp", table)
        #expect(machine.root.listeningInodes(port: 2947) == ["4242"])
        #expect(Self.finding(machine.examine(), "port 2947", .fail)?.detail.contains("gpsd (pid 812)") == true)
    }

    @Test("ModemManager holding the receiver, and running", .enabled(if: isRoot))
    func modemManager() throws {
        let machine = try FakeMachine()
        machine.characterDevice("/dev/ttyACM0", mode: 0o660, group: 20)
        machine.process(400, "ModemManager", files: ["/dev/ttyACM0"])
        let findings = machine.examine(settings: Self.settings(devices: ["/dev/ttyACM0"]))
        #expect(Self.finding(findings, "device /dev/ttyACM0", .fail)?.fix?.contains("ID_MM_DEVICE_IGNORE") == true)
        #expect(Self.finding(findings, "ModemManager", .warn) != nil)
    }

    @Test("the kernel's console and a login prompt on the receiver's UART", .enabled(if: isRoot))
    func serialConsole() throws {
        let machine = try FakeMachine()
        machine.characterDevice("/dev/ttyS0", mode: 0o660, group: 20)
        machine.write("/proc/cmdline", "console=ttyS0,115200 console=tty1 root=/dev/mmcblk0p2\n")
        machine.write("/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service", "")
        let findings = machine.examine(settings: Self.settings(devices: ["/dev/ttyS0"]))
        let failures = findings.filter { $0.check == "device /dev/ttyS0" && $0.status == .fail }
        #expect(failures.contains { $0.detail.contains("kernel's console") && $0.fix?.contains("console=ttyS0") == true })
        #expect(failures.contains { $0.fix == "systemctl disable --now serial-getty@ttyS0.service" })
    }

    @Test("a device that is missing, or not a character device")
    func missingDevice() throws {
        let machine = try FakeMachine()
        machine.write("/dev/ttyFILE", "not a device")
        let findings = machine.examine(settings: Self.settings(devices: ["/dev/ttyUSB9", "/dev/ttyFILE"]))
        #expect(Self.finding(findings, "device /dev/ttyUSB9", .fail)?.detail == "does not exist")
        #expect(Self.finding(findings, "device /dev/ttyFILE", .fail)?.detail == "is not a character device")
    }

    @Test("group dialout: the device's group and mode, and the daemon's user in it", .enabled(if: isRoot))
    func dialout() throws {
        let machine = try FakeMachine()
        machine.write("/etc/group", "root:x:0:\ndialout:x:20:\ngpsfix:x:998:\n")
        machine.characterDevice("/dev/ttyUSB0", mode: 0o600, group: 0)
        machine.characterDevice("/dev/ttyUSB1", mode: 0o660, group: 20)
        var findings = machine.examine(settings: Self.settings(devices: ["/dev/ttyUSB0", "/dev/ttyUSB1"]))
        #expect(Self.finding(findings, "device /dev/ttyUSB0", .fail)?.fix?.contains("GROUP=\"dialout\", MODE=\"0660\"") == true)
        #expect(Self.finding(findings, "device /dev/ttyUSB1", .fail)?.fix == "adduser gpsfix dialout")
        machine.write("/etc/group", "root:x:0:\ndialout:x:20:gpsfix\ngpsfix:x:998:\n")
        findings = machine.examine(settings: Self.settings(devices: ["/dev/ttyUSB1"]))
        #expect(Self.finding(findings, "device /dev/ttyUSB1", .ok) != nil)
        #expect(!findings.contains { $0.check == "device /dev/ttyUSB1" && $0.status != .ok })
    }

    @Test("a kernel PPS device the daemon's user cannot open (the kernel makes them root's, 0600) fails, with the rule that fixes it", .enabled(if: isRoot))
    func ppsAccess() throws {
        let machine = try FakeMachine()
        machine.characterDevice("/dev/pps0", mode: 0o600, group: 0)
        machine.characterDevice("/dev/pps1", mode: 0o640, group: 20)  // read-only is enough to fetch
        let findings = machine.examine(settings: Self.settings(devices: [], pps: ["/dev/pps0", "/dev/pps1"]))
        let refused = try #require(Self.finding(findings, "pps /dev/pps0", .fail))
        #expect(refused.detail.contains("not readable by group dialout"))
        #expect(refused.fix?.contains("udevadm trigger --subsystem-match=pps") == true)
        #expect(refused.fix?.contains(#"SUBSYSTEM=="pps", GROUP="dialout", MODE="0660""#) == true)
        #expect(!findings.contains { $0.check == "pps /dev/pps1" && $0.status == .fail })
        #expect(Self.finding(findings, "pps /dev/pps1", .ok) != nil)
    }

    @Test("chrony: no refclock, then a refclock whose socket the daemon cannot write, then one it can", .enabled(if: isRoot))
    func chrony() throws {
        let machine = try FakeMachine()
        machine.characterDevice("/dev/ttyUSB0", mode: 0o660, group: 20)
        machine.write("/etc/chrony/chrony.conf", "pool 2.debian.pool.ntp.org iburst\nconfdir /etc/chrony/conf.d\n")
        let settings = Self.settings(devices: ["/dev/ttyUSB0"])
        var findings = machine.examine(settings: settings)
        #expect(Self.finding(findings, "chrony", .warn)?.fix?.contains("refclock SOCK /run/chrony.clk.ttyUSB0.sock") == true)

        machine.write("/etc/chrony/conf.d/gpsfix.conf", "refclock SOCK /run/chrony.clk.ttyUSB0.sock refid GPS\n")
        findings = machine.examine(settings: settings)
        #expect(Self.finding(findings, "chrony", .ok) != nil)
        #expect(Self.finding(findings, "chrony socket", .warn)?.detail.contains("does not exist") == true)

        machine.unixSocket("/run/chrony.clk.ttyUSB0.sock", mode: 0o600)
        findings = machine.examine(settings: settings)
        #expect(Self.finding(findings, "chrony socket", .fail)?.detail.contains("not writable by gpsfix") == true)
        chmod(machine.root.under("/run/chrony.clk.ttyUSB0.sock"), 0o666)
        var reached = settings
        reached.chronySources = """
            MS Name/IP address         Stratum Poll Reach LastRx Last sample
            ===============================================================================
            #* GPS                           0   4   377    14   +123us[ +130us] +/-  101ms

            """
        findings = machine.examine(settings: reached)
        #expect(Self.finding(findings, "chrony socket", .ok) != nil)
        #expect(Self.finding(findings, "chronyc sources", .ok) != nil)
    }

    @Test("the receiver: silent, without a fix, then fixed; PPS missing; the clock off by a second")
    func receiverAndTime() throws {
        let machine = try FakeMachine()
        var daemon = DaemonObservation(address: "/run/gpsfixd/gpsfixd.sock")
        daemon.release = "gpsfix-0.2.0"
        daemon.window = 3
        daemon.devices = [.init(path: "file:/tmp/log", online: true, sentences: 40)]
        var findings = machine.examine(daemon, settings: Self.settings(devices: [], pps: ["/dev/pps0"]))
        #expect(Self.finding(findings, "daemon", .ok)?.detail == "gpsfix-0.2.0 answers on /run/gpsfixd/gpsfixd.sock")
        let silent = try #require(Self.finding(findings, "receiver file:/tmp/log", .fail))
        #expect(silent.detail.contains("40 sentences read, but no report"))
        // The daemon holds the port (root may open it anyway, and take its bytes): what
        // it reads is seen through it.
        #expect(silent.fix?.contains("gpsfix watch --socket /run/gpsfixd/gpsfixd.sock --nmea") == true)
        #expect(silent.fix?.contains("gpsfix record") == false)
        #expect(Self.finding(findings, "pps /dev/pps0", .fail) != nil)

        for line in [#"{"class":"TPV","device":"file:/tmp/log","mode":1}"#, #"{"class":"SKY","device":"file:/tmp/log","uSat":0,"nSat":7}"#] {
            daemon.take(line)
        }
        findings = machine.examine(daemon)
        #expect(Self.finding(findings, "receiver file:/tmp/log", .warn)?.detail.contains("no fix, 0/7 satellites used") == true)

        daemon.take(#"{"class":"TPV","device":"file:/tmp/log","mode":3}"#)
        for offset in [1.02, 1.01, 1.03] {
            daemon.take(#"{"class":"TOFF","device":"file:/tmp/log","real_sec":1000,"real_nsec":0,"clock_sec":1001,"clock_nsec":\#(Int((offset - 1) * 1e9))}"#)
        }
        findings = machine.examine(daemon)
        #expect(Self.finding(findings, "receiver file:/tmp/log", .ok)?.detail.contains("2 reports in 3 s, 3D fix") == true)
        let time = try #require(Self.finding(findings, "receiver time", .warn))
        #expect(time.fix?.contains("--time-offset -1.020") == true)
    }

    @Test("what a daemon that is not GPSFix sends costs the observation no more than its bounds: devices and clock offsets")
    func observationBounded() {
        var daemon = DaemonObservation(address: "127.0.0.1:2947")
        for index in 0..<1000 {
            daemon.take(#"{"class":"TPV","device":"/dev/gps\#(index)","mode":3}"#)
            daemon.take(#"{"class":"STATUS","devices":[{"path":"/dev/gps\#(index)","online":true}]}"#)
        }
        for _ in 0..<10_000 { daemon.take(#"{"class":"TOFF","device":"/dev/gps0","real_sec":1,"real_nsec":0,"clock_sec":1,"clock_nsec":5}"#) }
        #expect(daemon.devices.count == DaemonObservation.maximumDevices)
        #expect(daemon.fixes.count == DaemonObservation.maximumDevices && daemon.fixes["/dev/gps0"] == 1)
        #expect(daemon.clockOffsets.count == DaemonObservation.maximumClockOffsets)
        #expect(daemon.reportsNotKept == 1000 - DaemonObservation.maximumDevices + 10_000 - DaemonObservation.maximumClockOffsets)
    }

    @Test("a socket that accepts connections while no daemon answers on it (systemd's, the daemon failing to start) is a failure")
    func acceptedButUnanswered() throws {
        let machine = try FakeMachine()
        let daemon = DaemonObservation(address: "/run/gpsfixd/gpsfixd.sock")
        let finding = try #require(Self.finding(machine.examine(daemon), "daemon", .fail))
        #expect(finding.detail == "/run/gpsfixd/gpsfixd.sock accepts connections, but no daemon answers on it")
        #expect(finding.fix?.contains("journalctl -u gpsfixd") == true)
    }

    @Test("Unix listeners in the kernel's table: by path or by file name, not a connection's socket; an unreadable table may hide one")
    func unixListeners() throws {
        let machine = try FakeMachine()
        let table = ProcessTable(root: machine.folder.path)
        #expect(table.mayBeListening(onUnixPath: "/run/gpsfixd/gpsfixd.sock"), "no table: anything may listen")
        machine.write("/proc/net/unix", """
            Num       RefCount Protocol Flags    Type St Inode Path
            0000000094733839: 00000002 00000000 00010000 0001 01 8603182 /run/my socket/live.sock
            000000007525b5e7: 00000003 00000000 00000000 0001 03 1275 /run/gpsfixd/accepted.sock
            000000007525b5e8: 00000002 00000000 00010000 0001 01 1276 @abstract
            000000007525b5e9: 00000002 00000000 00010000 0001 01 1277 relative.sock

            """)
        #expect(table.mayBeListening(onUnixPath: "/run/my socket/live.sock"))
        #expect(table.mayBeListening(onUnixPath: "/var/run/elsewhere/relative.sock"), "a bound path may be relative, or through a link")
        #expect(!table.mayBeListening(onUnixPath: "/run/gpsfixd/accepted.sock"), "a connection's socket is no listener")
        #expect(!table.mayBeListening(onUnixPath: "/run/gpsfixd/gpsfixd.sock"))
    }

    @Test("listeners the configuration names: one that answers, one that does not")
    func listeners() throws {
        let machine = try FakeMachine()
        var settings = DoctorSettings()
        settings.listeners = [.init(name: "gpsd TCP", address: "127.0.0.1:2947", answered: true),
                              .init(name: "HTTP", address: "127.0.0.1:8047", answered: false)]
        let findings = machine.examine(DaemonObservation(address: "s"), settings: settings)
        #expect(Self.finding(findings, "gpsd TCP", .ok)?.detail == "answers on 127.0.0.1:2947")
        #expect(Self.finding(findings, "HTTP", .fail)?.fix?.contains("journalctl -u gpsfixd") == true)
        #expect(!machine.examine(settings: settings).contains { $0.check == "HTTP" }, "not checked while the daemon is down")
    }

    @Test("clients: each side's connections against its own cap; a full network side is a warning, the local side still open")
    func connectionSides() throws {
        let machine = try FakeMachine()
        func status(network: Int) -> String {
            #"{"class":"STATUS","clients":{"connections":4,"network":{"connections":"# + "\(network)"
                + #","cap":192,"perListener":128},"local":{"connections":2,"cap":192,"perListener":128}},"devices":[],"services":{}}"#
        }
        var daemon = DaemonObservation(address: "s")
        daemon.take(status(network: 2))
        #expect(Self.finding(machine.examine(daemon), "clients", .ok)?.detail == "network 2 of 192, local 2 of 192 connections (each side its own cap)")
        daemon.take(status(network: 192))
        let full = try #require(Self.finding(machine.examine(daemon), "clients", .warn))
        #expect(full.detail.hasSuffix("full: network") && full.fix?.contains("max-clients") == true)
    }

    @Test("services: a caster the daemon retries is a warning with where to look")
    func services() throws {
        let machine = try FakeMachine()
        var daemon = DaemonObservation(address: "s")
        daemon.take(#"{"class":"STATUS","clients":{},"devices":[],"services":{"timeService":null,"mqtt":"mqtt: connected","traccar":null,"ntrip":"ntrip: ntrip://u@c:2101/M retrying (401)","nmeaOutput":null}}"#)
        let findings = machine.examine(daemon)
        #expect(Self.finding(findings, "MQTT", .ok)?.detail == "mqtt: connected")
        #expect(Self.finding(findings, "NTRIP", .warn)?.fix?.contains("journalctl -u gpsfixd") == true)
        #expect(!findings.contains { $0.check == "Traccar" })
        #expect(findings.checklist.contains("warn  NTRIP"))
    }
}
