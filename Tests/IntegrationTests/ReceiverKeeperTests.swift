import Foundation
import GPSFixDevices
import TestSupport
import Testing

/// The daemon's keeper of a `[receiver]` table and `gpsfix ubx`, taking turns at one
/// receiver (a ZED-F9T modelled from u-blox's interface description on a pseudo-terminal):
/// one reconfiguration per reason, never a loop, and flash written once per table.
@Suite("The keeper and the tool take turns", .serialized)
struct ReceiverKeeperTests {
    /// The daemon on `receiver` keeping `table`, with its control socket and its state
    /// directory in `folder`, and `/metrics` on `metrics`; it opens `device` (a link to
    /// the receiver) when given, else the receiver's own path, at the receiver's speed
    /// unless it is to find it (`autobaud`); its state directory is `stateDirectory` when given.
    static func daemon(
        _ receiver: SimulatedUBXReceiver, device: String? = nil, autobaud: Bool = false, table: String, folder: URL, metrics: Int,
        stateDirectory: String? = nil
    ) throws -> (daemon: RunningProcess, control: String) {
        let control = folder.appendingPathComponent("control.sock").path
        let speed = autobaud ? [] : ["--speed", "\(receiver.speed)"]
        let daemon = try RunningProcess(Binaries.gpsfixd, [device ?? receiver.path] + speed + [
            "--socket", folder.appendingPathComponent("gpsfixd.sock").path,
            // Silent past 1.5 s: longer than the receiver's 1 s between solutions, so only
            // the tests' own silences count.
            "--control-socket", control, "--receiver", table, "--silence-timeout", "1.5",
            "--state-directory", stateDirectory ?? folder.path, "--metrics", "127.0.0.1:\(metrics)",
        ])
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        return (daemon, control)
    }

    /// A generation 9 receiver and a daemon keeping `table` on it, in a folder of their own.
    static func keeping(table: String) throws -> Keeping {
        let folder = try makeTemporaryFolder("keeper")
        let receiver = try SimulatedUBXReceiver(.generation9)
        let metrics = freePort()
        let (daemon, control) = try daemon(receiver, table: table, folder: folder, metrics: metrics)
        return Keeping(folder: folder, receiver: receiver, metrics: metrics, daemon: daemon, control: control)
    }

    /// What ``keeping(table:)`` started.
    struct Keeping {
        let folder: URL
        let receiver: SimulatedUBXReceiver
        let metrics: Int
        let daemon: RunningProcess
        let control: String

        /// Stops the daemon and removes the folder.
        func stop() {
            daemon.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// The value of the metric `name` for `receiver` (0 when absent).
    static func metric(_ name: String, of receiver: SimulatedUBXReceiver, port: Int) -> Int {
        metric(name, device: receiver.path, port: port)
    }

    /// The value of the metric `name` for the device at `path` (0 when absent).
    static func metric(_ name: String, device path: String, port: Int) -> Int {
        let text = (try? WebTests.get("/metrics", port: port).body) ?? ""
        let prefix = "\(name){device=\"\(path)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    @Test("a tool's conversation while the device comes back from silence: one reconfiguration after it, then quiet; two shows in a row succeed")
    func noLoop() throws {
        let kept = try Self.keeping(table: "rate=2")
        defer { kept.stop() }
        let (receiver, daemon, control, metrics) = (kept.receiver, kept.daemon, kept.control, kept.metrics)
        try waitUntil("the table applied", within: 15) { receiver.setting(0x3021_0001) == 500 }
        // The keeper's turn ends after it has read the receiver back, not as the table goes in.
        try waitUntil("the keeper's conversation over", within: 15) {
            Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: metrics) == 1
        }

        // A tool holds the receiver (its turn began: `O`) while the receiver loses power
        // and comes back without its settings: the keeper's turn waits behind the tool's.
        let holder = try LineClient(unixPath: control)
        holder.send(bytes: ControlMessage(type: UInt8(ascii: "H"), payload: Array(receiver.path.utf8)).bytes)
        #expect(holder.readBytes(count: 7, timeout: 5)?.first == UInt8(ascii: "O"))
        receiver.powerCycle(quiet: .seconds(2), batteryEmpty: true)
        try waitUntil("the device back from silence", within: 15) { daemon.errorText.contains("sending again") }
        #expect(receiver.setting(0x3021_0001) == 1000, "the keeper talked during the tool's turn")
        holder.hangUp()

        try waitUntil("the table applied again, once the tool was done", within: 15) { receiver.setting(0x3021_0001) == 500 }
        try waitUntil("the keeper's second conversation over", within: 15) {
            Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: metrics) == 2
        }
        // Nothing more: no conversation starts another.
        let settled = receiver.traffic.framesReceived
        let before = try ThreadWakeUps(ofProcess: "\(daemon.pid)")
        Thread.sleep(forTimeInterval: 3)
        #expect(receiver.traffic.framesReceived == settled, "the receiver was still being talked to")
        // Conversations over, only the event loop wakes for the receiver's solutions: no
        // thread a conversation ran on lingers, nor anything that watches such threads.
        let woken = try ThreadWakeUps(ofProcess: "\(daemon.pid)").since(before)
            .filter { !$0.name.hasPrefix("NIO-SGLTN-") && $0.times > 1 }
        #expect(woken.isEmpty, "\(woken.map { "\($0.name) woke \($0.times) times" })")

        for _ in 0..<2 {
            let shown = try UBXConfigurationToolTests.ubx(["show", receiver.path, "--control-socket", control])
            #expect(shown.status == 0, "\(shown.errors)")
        }
    }

    @Test("one tool waits while another holds the receiver (W, then O when it is free); a third is refused")
    func toolsQueue() throws {
        let kept = try Self.keeping(table: "rate=2")
        defer { kept.stop() }
        let (receiver, control, metrics) = (kept.receiver, kept.control, kept.metrics)
        // The keeper's turn ends after it has read the receiver back, not as the table goes in.
        try waitUntil("the keeper's conversation over", within: 15) {
            Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: metrics) == 1
        }
        let hello = ControlMessage(type: UInt8(ascii: "H"), payload: Array(receiver.path.utf8)).bytes
        let holder = try LineClient(unixPath: control)
        holder.send(bytes: hello)
        #expect(holder.readBytes(count: 7, timeout: 5)?.first == UInt8(ascii: "O"))
        let second = try LineClient(unixPath: control)
        second.send(bytes: hello)
        #expect(second.readBytes(count: 7, timeout: 5) == ControlMessage.waiting(seconds: 60).bytes)
        let third = try UBXConfigurationToolTests.ubx(["show", receiver.path, "--control-socket", control])
        #expect(third.status == 1 && third.errors.contains("waits for"), "\(third.errors)")
        holder.hangUp()
        #expect(second.readBytes(count: 7, timeout: 10)?.first == UInt8(ascii: "O"))
    }

    @Test("save = true: ten openings and returns from silence of the same receiver, a restart among them, write its flash once; /metrics counts it")
    func flashOnce() throws {
        let folder = try makeTemporaryFolder("keeper")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.generation9)
        let port = freePort()
        var reopenings = 0
        for run in 0..<2 {
            let (daemon, control) = try Self.daemon(receiver, table: "rate=2;save=true", folder: folder, metrics: port)
            defer { daemon.stop() }
            reopenings += 1
            try waitUntil("the table applied", within: 15) { receiver.setting(0x3021_0001) == 500 }
            for _ in 0..<4 {
                // The operator tries another rate in RAM; the receiver drops out and comes
                // back: the keeper puts the table back in RAM, and leaves flash alone.
                let set = try UBXConfigurationToolTests.ubx(["set", receiver.path, "--control-socket", control, "--rate", "5"])
                #expect(set.status == 0, "\(set.errors)")
                receiver.pause(for: .seconds(2))
                reopenings += 1
                try waitUntil("the table back", within: 15) { receiver.setting(0x3021_0001) == 500 }
            }
            #expect(Self.metric("gpsfix_receiver_flash_writes_total", of: receiver, port: port) == (run == 0 ? 1 : 0))
        }
        #expect(receiver.traffic.flashWrites == 1, "\(reopenings) openings and returns from silence")
    }

    @Test(
        "save = true: two receivers of one model (the same MON-VER, chips of their own) taking turns on one device path have their flash written once each",
        arguments: [SimulatedUBXReceiver.Generation.generation9, .m8])
    func flashOncePerReceiverOnAPath(_ generation: SimulatedUBXReceiver.Generation) throws {
        let folder = try makeTemporaryFolder("keeper")
        defer { try? FileManager.default.removeItem(at: folder) }
        // One path (as /dev/ttyACM0 is whichever receiver is plugged in), a link to
        // the pseudo-terminal of the receiver plugged in now: the usual one and its spare.
        let device = folder.appendingPathComponent("ttyACM0").path
        let usual = try SimulatedUBXReceiver(generation)
        let spare = try SimulatedUBXReceiver(generation)
        for (turn, receiver) in [usual, spare, usual, spare].enumerated() {
            try? FileManager.default.removeItem(atPath: device)
            try FileManager.default.createSymbolicLink(atPath: device, withDestinationPath: receiver.path)
            let port = freePort()
            let (daemon, _) = try Self.daemon(receiver, device: device, table: "rate=2;save=true", folder: folder, metrics: port)
            defer { daemon.stop() }
            try waitUntil("the keeper's conversation over", within: 15) {
                Self.metric("gpsfix_receiver_table_conversations_total", device: device, port: port) == 1
            }
            #expect(Self.metric("gpsfix_receiver_flash_writes_total", device: device, port: port) == (turn < 2 ? 1 : 0), "turn \(turn)")
        }
        #expect(usual.traffic.flashWrites == 1)
        #expect(spare.traffic.flashWrites == 1, "the spare's flash never written: its table lost at its first power cycle")
    }

    @Test("output = both on a receiver that sends both but none of the messages the daemon reads: the keeper turns them on")
    func outputTurnsMessagesOn() throws {
        let keeping = try Self.keeping(table: "output=both")
        defer { keeping.stop() }
        // NAV-PVT every solution, NAV-TIMELS (the leap second's announcement) every 255th.
        try waitUntil("the messages turned on", within: 15) {
            keeping.receiver.setting(0x2091_0007) == 1 && keeping.receiver.setting(0x2091_0061) == 255
        }
    }

    @Test("a table given again after the operator changed one setting writes that setting alone: a base's survey-in is not written again")
    func onlyWhatDiffers() throws {
        let keeping = try Self.keeping(table: "rate=2;survey-in=300,2")
        defer { keeping.stop() }
        let receiver = keeping.receiver
        // CFG-VALSET's payload: 4 bytes, then each key (4) and its value. The rate's two
        // keys (U2 each) make 16; with the survey-in's mode (E1), duration and limit (U4), 37.
        func valueSets(length: Int) -> Int { receiver.framesReceived(0x068A, length: length) }
        try waitUntil("the table applied", within: 15) { receiver.setting(0x3021_0001) == 500 && receiver.setting(0x2003_0001) == 1 }
        #expect(valueSets(length: 37) == 1)
        let set = try UBXConfigurationToolTests.ubx(["set", receiver.path, "--control-socket", keeping.control, "--rate", "5"])
        #expect(set.status == 0, "\(set.errors)")
        let rateSets = valueSets(length: 16)
        receiver.pause(for: .seconds(2))
        try waitUntil("the rate back", within: 15) { receiver.setting(0x3021_0001) == 500 }
        #expect(valueSets(length: 16) == rateSets + 1)
        #expect(valueSets(length: 37) == 1, "the survey-in written again")
    }

    @Test("save = true on a base already surveying: the table goes to flash once, and the survey-in is not written to RAM again, which would begin the survey anew")
    func saveKeepsTheSurvey() throws {
        let keeping = try Self.keeping(table: "survey-in=300,2")
        defer { keeping.stop() }
        let receiver = keeping.receiver
        // CFG-VALSET's payload: 4 bytes, then the survey-in's mode (4 + 1), duration and
        // accuracy limit (4 + 4 each): 25.
        try waitUntil("the survey-in applied", within: 15) { receiver.setting(0x2003_0001) == 1 }
        #expect(receiver.framesReceived(0x068A, length: 25) == 1)
        keeping.daemon.stop()
        let port = freePort()
        let (daemon, _) = try Self.daemon(receiver, table: "survey-in=300,2;save=true", folder: keeping.folder, metrics: port)
        defer { daemon.stop() }
        try waitUntil("the table saved", within: 30) { receiver.traffic.flashWrites == 1 }
        try waitUntil("the conversation over", within: 15) {
            Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: port) == 1
        }
        // The first write (RAM and battery-backed RAM), then flash's alone.
        #expect(receiver.framesReceived(0x068A, length: 25) == 2, "the survey-in written again: \(daemon.errorText.suffix(1500))")
    }

    @Test("save = true: a conversation that fails before its write to flash (an M8's rate lost on the line) is followed by one that saves; flash and /metrics count that one write")
    func flashAfterAFailedConversation() throws {
        let folder = try makeTemporaryFolder("keeper")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.m8)
        // CFG-RATE's write (a payload of six bytes; its poll has none) lost at each of its
        // three tries: the conversation fails after its polls, before CFG-CFG saves.
        receiver.loseFrames(of: 0x0608, length: 6, count: 3)
        let port = freePort()
        let (daemon, _) = try Self.daemon(receiver, table: "rate=2;save=true", folder: folder, metrics: port)
        defer { daemon.stop() }
        try waitUntil("the failed conversation and the one after it", within: 30) {
            Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: port) == 2
        }
        #expect(receiver.setting(0x3021_0001) == 500)
        #expect(receiver.traffic.flashWrites == 1, "the table never saved: \(daemon.errorText.suffix(1500))")
        #expect(Self.metric("gpsfix_receiver_flash_writes_total", of: receiver, port: port) == 1)
    }

    @Test("save = true with no state directory to remember the save in: the table is applied, never saved, at start after start, and the log says why")
    func noSaveWithoutARecord() throws {
        let folder = try makeTemporaryFolder("keeper")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A file where the state directory's parent should be: it cannot be made.
        let file = folder.appendingPathComponent("a-file")
        try Data().write(to: file)
        let receiver = try SimulatedUBXReceiver(.generation9)
        for start in 0..<2 {
            receiver.powerCycle(batteryEmpty: true)
            try waitUntil("the receiver back at its saved rate") { receiver.setting(0x3021_0001) == 1000 }
            let port = freePort()
            let (daemon, _) = try Self.daemon(
                receiver, table: "rate=2;save=true", folder: folder, metrics: port, stateDirectory: file.appendingPathComponent("state").path)
            defer { daemon.stop() }
            try waitUntil("the table applied", within: 15) { receiver.setting(0x3021_0001) == 500 }
            try waitUntil("the refusal logged") { daemon.errorText.contains("the table is not saved to the receiver's flash") }
            #expect(Self.metric("gpsfix_receiver_flash_writes_total", of: receiver, port: port) == 0, "start \(start)")
        }
        #expect(receiver.traffic.flashWrites == 0, "saved at each start")
    }

    @Test("a conversation that fails is begun again at once, and if that fails too a minute later, not at each return from silence: a receiver deaf to the keeper makes no loop")
    func failuresBackOff() throws {
        let keeping = try Self.keeping(table: "rate=2")
        defer { keeping.stop() }
        let receiver = keeping.receiver, daemon = keeping.daemon
        func conversations() -> Int { Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: keeping.metrics) }
        func silences() -> Int { daemon.errorText.components(separatedBy: "device silent").count - 1 }
        try waitUntil("the first conversation over", within: 15) { conversations() == 1 }
        // Deaf to the keeper from now on: the conversation its return from silence begins
        // fails, and so does the one begun at once after it.
        receiver.loseFrames(1 << 30)
        receiver.pause(for: .milliseconds(2500))
        try waitUntil("two failed conversations", within: 30) {
            conversations() == 3 && daemon.errorText.contains("tried again in 1 min")
        }
        #expect(daemon.errorText.contains("receiver not configured as its table says") && daemon.errorText.contains("tried again now"))
        // Silent and back again: no conversation begins before the minute is over.
        receiver.pause(for: .milliseconds(2500))
        try waitUntil("the second silence", within: 10) { silences() == 2 }
        // A conversation begun at the return is counted once over: 3 s and more, the
        // receiver deaf to its every try.
        let quiet = ContinuousClock.now + .seconds(9)
        while ContinuousClock.now < quiet, conversations() == 3 { Thread.sleep(forTimeInterval: 0.2) }
        #expect(conversations() == 3, "\(daemon.errorText.suffix(1500))")
        #expect(Self.metric("gpsfix_receiver_table_failed_total", of: receiver, port: keeping.metrics) == 2)
    }

    @Test("the host's line on the receiver's other UART: the table's speed is set once (on UART1, which reads back as the table says), the receiver reported answering at its own, and not tried again")
    func speedForTheOtherUART() throws {
        let folder = try makeTemporaryFolder("keeper")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The table names no port, so the keeper sets UART1's speed; the line is UART2.
        let receiver = try SimulatedUBXReceiver(.generation9, hostPort: .uart2)
        let port = freePort()
        let (daemon, _) = try Self.daemon(receiver, autobaud: true, table: "baud=115200", folder: folder, metrics: port)
        defer { daemon.stop() }
        try waitUntil("the receiver reported answering at its own speed", within: 30) { daemon.errorText.contains("answers at 38400") }
        // The try left the line silent while the port listened at the other speed, and the
        // receiver's return from that silence asks for another turn: it finds the table
        // in place. A loop would set the speed again within a few seconds.
        // A CFG-VALSET of the speed alone: a 12-byte payload.
        func speedSettings() -> Int { receiver.framesReceived(0x068A, length: 12) }
        let quiet = ContinuousClock.now + .seconds(8)
        while ContinuousClock.now < quiet, speedSettings() == 1 { Thread.sleep(forTimeInterval: 0.2) }
        #expect(speedSettings() == 1)
        #expect(receiver.setting(0x4052_0001) == 115_200 && receiver.speed == 38400)
    }

    @Test("a speed switched to and not saved, lost with the receiver's power: the daemon finds the receiver again and puts the table back")
    func speedForgotten() throws {
        let folder = try makeTemporaryFolder("keeper")
        defer { try? FileManager.default.removeItem(at: folder) }
        let receiver = try SimulatedUBXReceiver(.m8)
        let port = freePort()
        let (daemon, _) = try Self.daemon(receiver, autobaud: true, table: "baud=115200", folder: folder, metrics: port)
        defer { daemon.stop() }
        try waitUntil("the keeper's conversation over", within: 20) {
            Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: port) == 1
        }
        #expect(receiver.speed == 115_200)
        // No battery: the receiver comes back at its default 9600 bps, which the port,
        // switched to 115,200, reads as noise.
        receiver.powerCycle(batteryEmpty: true)
        try waitUntil("the daemon reading the receiver again, and the table back", within: 30) {
            Self.metric("gpsfix_receiver_table_conversations_total", of: receiver, port: port) == 2
        }
        #expect(receiver.speed == 115_200)
        #expect(daemon.errorText.contains("finding its speed again"), "\(daemon.errorText)")
    }
}
