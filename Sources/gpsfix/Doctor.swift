import ArgumentParser
import ChildProcesses
import FoundationEssentials
import Glibc
import GPSFixDoctor
import ProcessTable
import TOMLReader

/// `gpsfix doctor`: the usual traps of a GPS daemon, checked, with the fix for each.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the daemon, its receivers, the time service and the services; say how to fix what is wrong.",
        discussion: """
            A checklist: ok, warn or fail, with the fix in one line. It asks the running daemon \
            (its devices, counters and services, and a few seconds of its reports) and reads the \
            system (/proc, /etc, /dev): who else holds a receiver (gpsd, ModemManager, a login, the \
            kernel's console), gpsd's port and socket unit, group dialout, chrony's refclocks. \
            Exits 1 when a check fails.
            """
    )

    @OptionGroup var address: DaemonAddress

    @Option(help: "The daemon's configuration file, for its devices and time service when it is not running.")
    var config = "/etc/gpsfix/gpsfixd.conf"

    @Option(help: "Read the system under this root instead of / (a copy of /proc, /sys, /etc, /dev).")
    var root = "/"

    @Option(help: "Seconds to watch the daemon's reports.")
    var seconds: Double = 3

    @Flag(help: "Print the findings as JSON.")
    var json = false

    func validate() throws {
        guard (0.5...60).contains(seconds) else { throw ValidationError("--seconds \(seconds): give 0.5 to 60") }
    }

    func run() throws {
        let system = SystemRoot(root)
        var settings = DoctorSettings()
        readConfiguration(system.under(config), into: &settings)
        if root == "/", access("/usr/bin/chronyc", X_OK) == 0 {
            settings.chronySources = Self.output(of: "/usr/bin/chronyc", ["-n", "sources"])
        }
        let findings = Doctor.examine(root: system, daemon: observeDaemon(), settings: settings)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try writeLine(String(decoding: try encoder.encode(findings), as: UTF8.self))
        } else {
            try writeLine(findings.checklist)
        }
        if findings.worst == .fail { throw ExitCode(1) }
    }

    /// The daemon's answers and a few seconds of its reports.
    private func observeDaemon() -> DaemonObservation {
        let where_ = address.tcp ?? address.socket
        let connection: DaemonConnection
        do {
            connection = try DaemonConnection(address)
            try connection.send(#"?WATCH={"enable":true,"json":true,"pps":true};?STATUS;"# + "\n")
        } catch {
            var failed = DaemonObservation(address: where_, failure: "\(error)")
            failed.permissionDenied = (error as? ConnectionError)?.permissionDenied == true
            return failed
        }
        var observation = DaemonObservation(address: where_)
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        do {
            while let line = try connection.nextLine(before: deadline) { observation.take(line) }
            observation.window = seconds
            // The counters again at the end, so that what was read meanwhile counts: 2 s
            // for the answer, among the reports that keep coming; a daemon that is not
            // GPSFix (gpsd itself) answers ERROR.
            if (try? connection.send("?STATUS;\n")) != nil {
                let answerDeadline = ContinuousClock.now + .seconds(2)
                while let line = try connection.nextLine(before: answerDeadline) {
                    observation.take(line)
                    if line.contains(#""class":"STATUS""#) || line.contains(#""class":"ERROR""#) { break }
                }
            }
        } catch {
            return DaemonObservation(address: where_, failure: "\(error)")
        }
        return observation
    }

    /// The devices, PPS devices and chrony socket directory of the configuration file.
    private func readConfiguration(_ path: String, into settings: inout DoctorSettings) {
        let text: String
        switch SmallFile.bytes(at: path, anyFile: true) {
        case .success(let bytes): text = String(decoding: bytes, as: UTF8.self)
        case .failure(.system(ENOENT)): return  // none: the daemon's defaults
        case .failure(.system(EACCES)), .failure(.system(EPERM)):
            settings.unreadableConfiguration = config
            return
        case .failure(let reason):
            settings.configurationProblem = "\(config) cannot be read (\(reason))"
            return
        }
        let table: TOMLTable
        do throws(TOMLError) {
            table = try TOMLTable(parsing: text)
        } catch {
            settings.configurationProblem = "\(config):\(error.line): \(error.message)"
            return
        }
        settings.devices = table["devices"]?.array?.compactMap { $0.string } ?? []
        settings.ppsDevices = table["pps"]?.array?.compactMap { $0.string } ?? []
        if let directory = table["chrony-socket-dir"]?.string { settings.chronySocketDirectory = directory }
        for (key, name) in [("tcp", "gpsd TCP"), ("http", "HTTP"), ("metrics", "metrics"), ("nmea-tcp", "NMEA 0183 out")] {
            guard let address = table[key]?.string else { continue }
            settings.listeners.append(.init(name: name, address: address, answered: Self.answers(address)))
        }
    }

    /// Whether a TCP connection to HOST:PORT (NMEA 0183 out's port may be left out) is accepted.
    static func answers(_ address: String) -> Bool {
        var host = Substring(address), port = "10110"
        if let colon = address.lastIndex(of: ":"), !address.hasSuffix("]") {
            host = address[..<colon]
            port = String(address[address.index(after: colon)...])
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard let number = UInt16(port), let descriptor = try? DaemonConnection.connect(host: String(host), port: number, name: address)
        else { return false }
        close(descriptor)
        return true
    }

    /// A program's standard output, or `nil` when it fails or takes over 5 s.
    static func output(of executable: String, _ arguments: [String]) -> String? {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { return nil }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let child = try? ChildProcess.spawn(executable, arguments, output: .descriptor(pipe[1]))
        close(pipe[1])
        defer { close(pipe[0]) }
        guard let child else { return nil }
        // Read until the child closes its end, for at most 5 s and 1 MB.
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(5)
        var ended = false, failed = false
        while !ended, !failed, ContinuousClock.now < deadline, output.count < 1 << 20 {
            var ready = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) >= 0 || errno == EINTR else { break }
            guard ready.revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(pipe[0], $0.baseAddress, $0.count) }
            if count > 0 { output += buffer[..<count] } else if count == 0 { ended = true } else if errno != EINTR { failed = true }
        }
        // Its exit, within the same deadline; past it, it is killed.
        var status: Int32 = 0
        var exited = false
        while !exited, ContinuousClock.now < deadline {
            exited = waitpid(child, &status, WNOHANG) == child
            if !exited { usleep(10_000) }
        }
        if !exited {
            kill(child, SIGKILL)
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
        }
        // Read to its end, and exited (not signalled) with status 0.
        return ended && exited && status & 0x7F == 0 && (status >> 8) & 0xFF == 0 ? String(decoding: output, as: UTF8.self) : nil
    }
}
