import Foundation
import TestSupport
import Testing

/// `--config`: the TOML file the service reads, with the command line over it.
@Suite("The configuration file")
struct ConfigurationTests {
    static let packagedDefault = Binaries.fixtures.deletingLastPathComponent().appendingPathComponent("systemd/gpsfixd.conf").path

    static func write(_ text: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("gpsfixd.conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `gpsfixd ARGUMENTS` to its end: its status and standard error.
    static func check(_ arguments: [String]) throws -> (status: Int32?, output: String, errors: String) {
        let process = try RunningProcess(Binaries.gpsfixd, arguments)
        let status = process.wait(timeout: 20)
        return (status, process.outputText, process.errorText)
    }

    @Test("--check-config prints every option as it takes effect: the file's, the command line's over it, passwords masked")
    func effectiveConfiguration() throws {
        let folder = try makeTemporaryFolder("config")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.write("""
            # a comment
            devices = ["/dev/ttyUSB0", "file:/tmp/log.nmea"]
            tcp = "127.0.0.1:2947"
            mqtt = "mqtt://fleet:Secret-99@broker.local"
            mqtt-interval = 5
            pps = ["/dev/pps0"]
            no-shm = true
            """, in: folder)
        let (status, output, errors) = try Self.check(["--config", path, "--check-config", "--tcp", "127.0.0.1:3000", "--pps", "/dev/pps1"])
        #expect(status == 0, "\(errors)")
        let lines = Set(output.split(separator: "\n").map(String.init))
        #expect(lines.contains(#"devices = ["/dev/ttyUSB0", "file:/tmp/log.nmea"]"#))
        #expect(lines.contains(#"tcp = "127.0.0.1:3000""#), "the command line overrides the file")
        #expect(lines.contains(#"pps = ["/dev/pps1"]"#), "a list on the command line replaces the file's")
        #expect(lines.contains("mqtt-interval = 5") && lines.contains("no-shm = true"))
        #expect(lines.contains(#"mqtt = "mqtt://fleet:***@broker.local""#))
        #expect(lines.contains("ntrip-gga-interval = 10.0"), "options the file leaves out keep their defaults")
        #expect(!output.contains("Secret-99") && !errors.contains("Secret-99"))
    }

    @Test("values beginning with a minus (a time offset, a southern position) are taken; what --check-config prints reads back the same")
    func negativeValuesAndRoundTrip() throws {
        let folder = try makeTemporaryFolder("config")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.write("""
            devices = ["/dev/ttyUSB0"]
            time-offset = -0.05
            ntrip = "ntrip://rover@caster.example.net:2101/MOUNT"
            ntrip-position = "-33.9,151.2"
            traccar = "http://traccar.example:5055/"
            traccar-id = "0042"
            """, in: folder)
        let (status, output, errors) = try Self.check(["--config", path, "--check-config"])
        #expect(status == 0, "\(errors)")
        let lines = Set(output.split(separator: "\n").map(String.init))
        #expect(lines.isSuperset(of: ["time-offset = -0.05", #"ntrip-position = "-33.9,151.2""#]), "\(output)")
        // The device's identifier is Traccar's only credential: printed masked, as a password.
        #expect(lines.contains(#"traccar-id = "***""#) && !output.contains("0042"), "\(output)")

        let printed = folder.appendingPathComponent("printed.conf").path
        try output.write(toFile: printed, atomically: true, encoding: .utf8)
        let again = try Self.check(["--config", printed, "--check-config"])
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output == output)
    }

    @Test("devices on the command line replace the file's")
    func devicesOverridden() throws {
        let folder = try makeTemporaryFolder("config")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.write(#"devices = ["/dev/ttyUSB0"]"#, in: folder)
        let (status, output, _) = try Self.check(["--config", path, "/dev/ttyACM0", "--check-config"])
        #expect(status == 0)
        #expect(output.contains(#"devices = ["/dev/ttyACM0"]"#))
    }

    @Test(
        "an unknown key, a value out of range, a wrong kind or bad TOML: an error naming the line, non-zero status",
        arguments: [
            ("tcp = \"127.0.0.1:2947\"\nmqtt-intervall = 5\n", 2, "unknown key 'mqtt-intervall'"),
            ("devices = [\"/dev/x\"]\n\nsilence-timeout = 9999\n", 3, "out of range"),
            ("devices = [\"/dev/x\"]\nno-shm = \"yes\"\n", 2, "no-shm is true or false"),
            ("devices = [\"/dev/x\"]\n[mqtt]\nurl = \"x\"\n", 2, "[mqtt] is a table"),
            ("tcp = 127.0.0.1\n", 1, "write text in quotes"),
            // The line of the option the message names, not of one whose name begins it.
            ("devices = [\"/dev/x\"]\nntrip = \"ntrip://caster.example/M\"\nntrip-timeout = 9999\n", 3, "ntrip-timeout"),
            ("devices = [\"/dev/x\"]\n[receiver]\ngnss = [\"gps\", true]\n", 2, "a list of strings and numbers"),
        ])
    func refused(text: String, line: Int, words: String) throws {
        let folder = try makeTemporaryFolder("config")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.write(text, in: folder)
        let (status, _, errors) = try Self.check(["--config", path, "--check-config"])
        #expect(status != 0 && status != nil)
        #expect(errors.contains("\(path):\(line):"), "\(errors)")
        #expect(errors.contains(words), "\(errors)")
    }

    @Test(
        "--ntrip-position is finite and in range: inf, nan and a latitude past the pole are refused, naming the option",
        arguments: ["52,4,inf", "52,4,nan", "91,4", "52,4,1e17"])
    func ntripPositionOutOfRange(position: String) throws {
        let (status, _, errors) = try Self.check([
            "/dev/ttyACM0", "--ntrip", "ntrip://rover@caster.example.net:2101/MOUNT", "--ntrip-position", position,
            "--check-config",
        ])
        #expect(status != 0 && status != nil, "\(errors)")
        #expect(errors.contains("--ntrip-position '\(position)'"), "\(errors)")
    }

    @Test(
        "IPv6 loopback is loopback: --nmea-tcp [::1] and ::1 (port 10110), [::1]:PORT for --nmea-tcp and --tcp",
        arguments: [
            ["--nmea-tcp", "[::1]"], ["--nmea-tcp", "::1"], ["--nmea-tcp", "[::1]:10111"], ["--tcp", "[::1]:2948"],
            ["gpsd://[::1]:2947"],
        ])
    func ipv6Loopback(arguments: [String]) throws {
        let (status, output, errors) = try Self.check(["--demo"] + arguments + ["--check-config"])
        #expect(status == 0, "\(errors)")
        #expect(output.contains("::1"), "\(output)")
    }

    @Test("the packaged default passes its own check")
    func packagedDefault() throws {
        let (status, output, errors) = try Self.check(["--config", Self.packagedDefault, "--check-config"])
        #expect(status == 0, "\(errors)")
        #expect(output.contains(#"devices = ["/dev/gps0"]"#))
    }

    @Test("the daemon serves what its file says: the device and the socket")
    func serves() throws {
        let folder = try makeTemporaryFolder("config")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let link = folder.appendingPathComponent("gps0").path
        let replay = try RunningProcess(Binaries.gpsfix, [
            "replay", Binaries.fixtures.appendingPathComponent("gpsd/cat-ms352.log").path, "--link", link, "--loop",
        ])
        defer { replay.stop() }
        try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
        let path = try Self.write("devices = [\"\(link)\"]\nsocket = \"\(socket)\"\nlog-level = \"warning\"\n", in: folder)
        let daemon = try RunningProcess(Binaries.gpsfixd, ["--config", path])
        defer { daemon.stop() }
        let client = try #require(LineClient.connect(unixPath: socket))
        client.send("?WATCH={\"enable\":true,\"json\":true}\n")
        let lines = try #require(client.readLines(until: { $0.contains("\"class\":\"TPV\"") }, timeout: 20))
        #expect(lines.contains { $0.contains("\"class\":\"DEVICES\"") && $0.contains(link) })
    }
}
