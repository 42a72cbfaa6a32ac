import Foundation
import GPSFixDevices
import ReceiverFraming
import TestSupport
import Testing

/// `gpsfix ubx` and the daemon's `[receiver]` table against receivers modelled from
/// u-blox's interface descriptions: a ZED-F9T (protocol 27.31) and a NEO-M8T (protocol 18).
@Suite("u-blox receivers configured by intent", .serialized)
struct UBXConfigurationToolTests {
    typealias Generation = SimulatedUBXReceiver.Generation

    /// Runs `gpsfix ubx ARGUMENTS` to its end: its status, output and errors.
    static func ubx(_ arguments: [String]) throws -> (status: Int32?, output: String, errors: String) {
        let process = try RunningProcess(Binaries.gpsfix, ["ubx"] + arguments)
        let status = process.wait(timeout: 30)
        if status == nil { process.stop(SIGKILL) }
        return (status, process.outputText, process.errorText)
    }

    /// The iTOW of each NAV-PVT the receiver sends within `seconds`, read at `speed`.
    static func solutionTimes(of receiver: SimulatedUBXReceiver, speed: Int, seconds: Double) throws -> [UInt32] {
        let link = try SerialReceiverLink(path: receiver.path, speed: speed)
        defer { link.close() }
        let framer = ReceiverFramer()
        var times: [UInt32] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            try link.receive(timeout: .milliseconds(100)).withUnsafeBytes { bytes in
                framer.feed(bytes) { frame in
                    guard case .ubx(let ubx) = frame, ubx.message == 0x0107 else { return }
                    times.append(ubx.payload.loadUnaligned(as: UInt32.self))
                }
            }
        }
        return times
    }

    @Test("show, then set every setting, then show again: as asked, and the stream at the new rate", arguments: [Generation.generation9, .m8])
    func showSetShow(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let speed = "\(receiver.speed)"
        let before = try Self.ubx(["show", receiver.path, "--speed", speed, "--json"])
        #expect(before.status == 0, "\(before.errors)")
        let identity = try #require(before.output.json)
        #expect(identity["module"] as? String == (generation == .m8 ? "NEO-M8T-0" : "ZED-F9T"))
        #expect(identity["protocol"] as? Double == (generation == .m8 ? 18 : 27.31))
        #expect(identity["rate"] as? Double == 1)

        let set = try Self.ubx([
            "set", receiver.path, "--speed", speed, "--rate", "5", "--gnss", "gps,galileo", "--output", "ubx", "--baud", "115200",
            "--timepulse", "1,0.2,locked", "--survey-in", "300,2", "--save",
        ])
        #expect(set.status == 0, "\(set.output) \(set.errors)")
        #expect(receiver.speed == 115_200)

        // No speed given: the tool finds 115200, the fourth speed it tries.
        let after = try #require(try Self.ubx(["show", receiver.path, "--json"]).output.json)
        #expect(after["rate"] as? Double == 5)
        #expect(after["gnss"] as? [String] == ["gps", "galileo"])
        #expect(after["output"] as? String == "ubx" && after["baud"] as? Int == 115_200)
        #expect((after["timePulse"] as? [String: Any])?["lengthWithoutFix"] as? Double == 0)
        #expect((after["timingMode"] as? [String: Any])?["mode"] as? String == "survey-in")

        // Saved: a power cycle keeps it; and the receiver sends five solutions a second.
        receiver.powerCycle()
        let times = try Self.solutionTimes(of: receiver, speed: 115_200, seconds: 1.5)
        #expect(times.count >= 4, "\(times)")
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 - $1 == 200 }, "\(times)")

        let fixed = try Self.ubx(["set", receiver.path, "--speed", "115200", "--fixed-position", "52.1234567891,4.9876543219,12.3456"])
        #expect(fixed.status == 0, "\(fixed.errors)")
        let position = try #require(try Self.ubx(["show", receiver.path, "--speed", "115200", "--json"]).output.json?["timingMode"] as? [String: Any])
        // To 1e-9° and 0.1 mm (CFG-TMODE3, the configuration interface); an M8T's CFG-TMODE2
        // keeps 1e-7° and cm.
        let (latitude, height) = generation == .m8 ? (52.1234568, 12.35) : (52.123456789, 12.3456)
        #expect(position["latitude"] as? Double == latitude && position["height"] as? Double == height, "\(position)")
    }

    @Test("a refusal and a silent receiver each end with a clear message and status 1; a dry run sends nothing")
    func failures() throws {
        let receiver = try SimulatedUBXReceiver(.generation9)
        let refused = try Self.ubx(["set", receiver.path, "--speed", "38400", "--rate", "40"])
        #expect(refused.status == 1 && refused.errors.contains("the receiver refused --rate"), "\(refused.errors)")

        let answered = receiver.acknowledgements
        let dry = try Self.ubx(["set", receiver.path, "--speed", "38400", "--rate", "5", "--dry-run"])
        #expect(dry.status == 0 && dry.output.contains("CFG-VALSET to RAM: CFG-RATE-MEAS=200, CFG-RATE-NAV=1"), "\(dry.output)")
        #expect(receiver.acknowledgements == answered && receiver.setting(0x3021_0001) == 1000)

        let silent = try SimulatedUBXReceiver(.m8, silent: true)
        let unanswered = try Self.ubx(["show", silent.path, "--speed", "9600", "--timeout", "0.3"])
        #expect(unanswered.status == 1 && unanswered.errors.contains("did not answer MON-VER"), "\(unanswered.errors)")
    }

    @Test("the daemon applies its receiver table at start and again after the receiver lost power; the doctor sees a refusal")
    func daemonKeepsTheReceiver() throws {
        let folder = try makeTemporaryFolder("ubx")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.m8)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let configuration = folder.appendingPathComponent("gpsfixd.conf").path
        try "[receiver]\nrate = 2\ngnss = [\"gps\", \"glonass\"]\noutput = \"both\"\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        do {
            // Silent past 1.5 s: longer than the receiver's 1 s between solutions, so only
            // the power cut counts as a silence (at 0.5 s a 1 Hz receiver flaps).
            let daemon = try RunningProcess(Binaries.gpsfixd, [
                receiver.path, "--speed", "9600", "--socket", socket, "--config", configuration, "--silence-timeout", "1.5",
            ])
            defer { daemon.stop() }
            // Each conversation is over once logged (its first write, the rate, comes well
            // before: a power cut then would cut the conversation short).
            let configured = "receiver configured as its table says: rate: 1 Hz, not 2 Hz"
            func conversations() -> Int { daemon.errorText.components(separatedBy: configured).count - 1 }
            try waitUntil("the table applied", within: 15) { conversations() >= 1 }
            #expect(receiver.setting(0x3021_0001) == 500)
            #expect(receiver.setting(0x1031_0021) == 0 && receiver.setting(0x1031_0025) == 1)
            // Power lost, and the backup battery empty: the table is gone, and the daemon
            // puts it back.
            receiver.powerCycle(quiet: .seconds(2), batteryEmpty: true)
            #expect(receiver.setting(0x3021_0001) == 1000)
            try waitUntil("the table applied again", within: 15) { conversations() >= 2 }
            #expect(receiver.setting(0x3021_0001) == 500, "\(daemon.errorText)")
        }

        // A table the receiver refuses: said in the log once, and by the doctor; tried once
        // more after a silence, then not asked of the same receiver again.
        // CFG-RATE with its 6 bytes is the write it refuses (a poll of it is empty).
        let rateWrites = receiver.framesReceived(0x0608, length: 6)
        let metrics = freePort()
        let refusing = try RunningProcess(Binaries.gpsfixd, [
            receiver.path, "--speed", "9600", "--socket", socket + "2", "--receiver", "rate=40", "--silence-timeout", "1.5",
            "--metrics", "127.0.0.1:\(metrics)",
        ])
        defer { refusing.stop() }
        _ = LineClient.connect(unixPath: socket + "2")
        try waitUntil("the refusal", within: 15) { refusing.errorText.contains("the receiver refused --rate") }
        for silence in 1...3 {
            receiver.pause(for: .seconds(2))
            // The first silence brings the second try; each after it, a conversation that leaves the table.
            try waitUntil("the conversation after silence \(silence)", within: 15) {
                let text = (try? WebTests.get("/metrics", port: metrics).body) ?? ""
                return text.contains("gpsfix_receiver_table_conversations_total{device=\"\(receiver.path)\"} \(silence + 1)")
                    && (silence == 1 || text.contains("gpsfix_receiver_table_differences_kept_total{device=\"\(receiver.path)\"} \(silence - 1)"))
            }
        }
        #expect(receiver.framesReceived(0x0608, length: 6) == rateWrites + 2, "the table was given again to the receiver that refused it twice")
        let findings = DoctorLiveTests.findings(try run(Binaries.gpsfix, ["doctor", "--socket", socket + "2", "--json", "--seconds", "1"]))
        let finding = try #require(findings.first { $0["check"] as? String == "receiver configuration" })
        #expect(finding["status"] as? String == "warn" && (finding["detail"] as? String)?.contains("refused --rate") == true, "\(finding)")
    }

    @Test("reset: the receiver restarts and answers again; unsaved settings are gone, and --factory clears the saved ones")
    func reset() throws {
        let receiver = try SimulatedUBXReceiver(.m8)
        #expect(try Self.ubx(["set", receiver.path, "--speed", "9600", "--rate", "2", "--save"]).status == 0)
        #expect(try Self.ubx(["set", receiver.path, "--speed", "9600", "--dynamic-model", "sea"]).status == 0)
        let cold = try Self.ubx(["reset", receiver.path, "--speed", "9600", "--cold"])
        #expect(cold.status == 0, "\(cold.errors)")
        #expect(receiver.setting(0x3021_0001) == 500 && receiver.setting(0x2011_0021) == 0)
        let factory = try Self.ubx(["reset", receiver.path, "--speed", "9600", "--factory"])
        #expect(factory.status == 0, "\(factory.errors)")
        #expect(receiver.setting(0x3021_0001) == 1000)
    }

    @Test("through the running daemon: show and set over its control socket (0600), a new speed followed by the daemon, which serves on",
          arguments: [Generation.generation9, .m8])
    func throughTheDaemon(_ generation: Generation) throws {
        let folder = try makeTemporaryFolder("ubx")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(generation)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("control.sock").path
        // The speed given: a pseudo-terminal keeps what was sent before the port was opened,
        // which a UART does not, and autobaud would take those bytes for the speed tried.
        let daemon = try RunningProcess(
            Binaries.gpsfixd, [receiver.path, "--speed", "\(receiver.speed)", "--socket", socket, "--control-socket", control])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        var info = stat()
        #expect(stat(control, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let shown = try Self.ubx(["show", receiver.path, "--control-socket", control, "--json"])
        #expect(shown.status == 0 && shown.output.json?["module"] as? String == (generation == .m8 ? "NEO-M8T-0" : "ZED-F9T"), "\(shown.errors)")
        let set = try Self.ubx([
            "set", receiver.path, "--control-socket", control, "--rate", "5", "--output", "ubx", "--baud", "115200", "--gnss", "gps,glonass",
            "--timepulse", "1,0.2,locked", "--fixed-position", "52.1,4.9,12.5", "--save",
        ])
        #expect(set.status == 0, "\(set.output) \(set.errors)")
        #expect(receiver.speed == 115_200 && receiver.setting(0x3021_0001) == 200)
        let after = try #require(try Self.ubx(["show", receiver.path, "--control-socket", control, "--json"]).output.json)
        #expect(after["gnss"] as? [String] == ["gps", "glonass"] && after["baud"] as? Int == 115_200, "\(after)")
        #expect((after["timingMode"] as? [String: Any])?["mode"] as? String == "fixed", "\(after)")

        // The daemon reads on at the new speed: TPVs five a second, from UBX.
        watcher.send("?WATCH={\"enable\":true,\"json\":true};\n")
        var times: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while times.count < 10, Date() < deadline, let line = watcher.readLine(timeout: 5) {
            if let report = line.json, report["class"] as? String == "TPV", let time = report["time"] as? String { times.append(time) }
        }
        #expect(times.count == 10, "\(times)")
        let milliseconds = times.compactMap { Int($0.dropLast().suffix(3)) }
        #expect(zip(milliseconds.dropFirst(), milliseconds).allSatisfy { ($0 - $1 + 1000) % 1000 == 200 }, "\(times)")
        // The port's new speed is the daemon's now, in DEVICES and after a reopening.
        watcher.send("?DEVICES;\n")
        let devices = watcher.readLines(until: { $0.contains(#""class":"DEVICES""#) })?.last?.json?["devices"] as? [[String: Any]]
        #expect(devices?.first?["bps"] as? Int == 115_200, "\(devices ?? [])")

        // (One conversation per receiver at a time: ReceiverKeeperTests.)
        // A receiver the daemon does not serve is opened by the tool itself.
        guard generation == .generation9 else { return }
        let other = try SimulatedUBXReceiver(.m8)
        let direct = try Self.ubx(["show", other.path, "--control-socket", control, "--speed", "9600", "--json"])
        #expect(direct.status == 0 && direct.output.json?["module"] as? String == "NEO-M8T-0", "\(direct.errors)")
    }

    @Test("a speed set through the daemon on a port given its speed, not saved and lost with the receiver's power: the daemon finds the receiver again at the speed it was given")
    func speedSetThroughTheDaemonLost() throws {
        let folder = try makeTemporaryFolder("ubx")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.m8)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("control.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            receiver.path, "--speed", "9600", "--socket", socket, "--control-socket", control, "--silence-timeout", "1.5",
        ])
        defer { daemon.stop() }
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        let set = try Self.ubx(["set", receiver.path, "--control-socket", control, "--baud", "115200"])
        #expect(set.status == 0 && receiver.speed == 115_200, "\(set.errors)")
        // No battery: the receiver comes back at its default 9600 bps, which the port,
        // switched to 115,200, reads as noise.
        receiver.powerCycle(batteryEmpty: true)
        let watcher = try #require(LineClient.connect(unixPath: socket))
        func bps() -> Int? {
            watcher.send("?DEVICES;\n")
            let devices = watcher.readLines(until: { $0.contains(#""class":"DEVICES""#) })?.last?.json?["devices"] as? [[String: Any]]
            return devices?.first?["bps"] as? Int
        }
        try waitUntil("the daemon reading the receiver at 9600 bps again", within: 30) { bps() == 9600 }
        #expect(daemon.errorText.contains("finding its speed again"), "\(daemon.errorText)")
        watcher.send("?WATCH={\"enable\":true,\"json\":true};\n")
        #expect(watcher.readLines(until: { $0.contains(#""class":"TPV""#) && $0.contains(#""mode":3"#) }, timeout: 10) != nil)
    }

    @Test("the control socket serves root and the daemon's user only, even when its mode would let another in", .enabled(if: getuid() == 0))
    func otherUsersRefused() throws {
        let folder = try makeTemporaryFolder("ubx")
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o755)
        let receiver = try SimulatedUBXReceiver(.m8)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("control.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [receiver.path, "--socket", socket, "--control-socket", control])
        defer { daemon.stop() }
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        chmod(control, 0o666)
        let process = try RunningProcess("/usr/bin/setpriv", [
            "--reuid=65534", "--regid=65534", "--clear-groups", Binaries.gpsfix, "ubx", "show", receiver.path, "--control-socket", control,
        ])
        #expect(process.wait(timeout: 20) == 1)
        #expect(process.errorText.contains("only root and the daemon's user"), "\(process.errorText)")
        #expect(receiver.acknowledgements == (0, 0))
    }

    @Test("a conversation that floods frames, asks two speeds at once, or declares a message past the limit is refused at once, saying why")
    func floodOfFrames() throws {
        let folder = try makeTemporaryFolder("ubx")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.m8)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("control.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [receiver.path, "--speed", "9600", "--socket", socket, "--control-socket", control])
        defer { daemon.stop() }
        // The control socket is there before the port is open: a fix says the daemon reads it.
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send("?WATCH={\"enable\":true,\"json\":true};\n")
        try #require(watcher.readLines(until: { $0.contains(#""class":"TPV""#) }) != nil, "no fix from the receiver: \(daemon.errorText)")
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        let hello = ControlMessage(type: UInt8(ascii: "H"), payload: Array(receiver.path.utf8)).bytes
        // Twenty polls of MON-VER in one write.
        let monitorPoll = ControlMessage(type: UInt8(ascii: "F"), payload: [0xB5, 0x62, 0x0A, 0x04, 0x00, 0x00, 0x0E, 0x34])
        // Two speed changes in one write: the first is not answered yet when the second comes.
        let speed = ControlMessage(type: UInt8(ascii: "S"), payload: [0, 0, 0x25, 0x80]).bytes
        for (sent, refusal) in [
            ((0..<20).flatMap { _ in monitorPoll.bytes }, "more than 4 frames waiting"),
            (speed + speed, "one S message at a time"),
            // A header declaring 65535 bytes, and none of them.
            ([UInt8(ascii: "F"), 0xFF, 0xFF], "a message over the limit"),
        ] {
            let client = try LineClient(unixPath: control)
            client.send(bytes: hello + sent)
            let messages = Self.messages(until: client)
            let said = messages.first { $0.type == UInt8(ascii: "E") }.map { String(decoding: $0.payload, as: UTF8.self) }
            #expect(said?.contains(refusal) == true, "\(messages.map { UnicodeScalar($0.type) }) \(said ?? "")")
        }
    }

    /// The messages `client` receives until the daemon closes it, or for 5 s.
    static func messages(until client: LineClient) -> [ControlMessage] {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            var poller = pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 500) > 0 else { continue }
            let count = read(client.descriptor, &buffer, buffer.count)
            guard count > 0 else { break }  // closed
            answer += buffer[0..<count]
        }
        var messages: [ControlMessage] = []
        while let message = ControlMessage.take(from: &answer) { messages.append(message) }
        return messages
    }
}
