import Foundation
import GPSFix
@testable import GPSFixDevices
import NIOPosix
import ReceiverFraming
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Devices", .serialized)
struct DeviceTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures")

    func collect(_ provider: NMEALocationProvider, until done: @escaping @Sendable ([LocationUpdate]) -> Bool) async -> [LocationUpdate] {
        var updates: [LocationUpdate] = []
        for await update in provider.updateStream() {
            updates.append(update)
            if done(updates) { break }
        }
        return updates
    }

    @Test("a fixture written into a pseudo-terminal and read through SerialPort gives the fixes FileSource gives")
    func ptyMatchesFile() async throws {
        let path = Self.fixtures.appendingPathComponent("glonass-fix.nmea").path
        let fromFile = await collect(NMEALocationProvider(source: FileSource(path: path))) { _ in false }
        // A log read to its end holds no fix any more, and says so.
        var decayed = Fix()
        decayed.mode = .noFix
        #expect(Array(fromFile.suffix(2)) == [.fix(decayed), .device(DeviceEvent(device: path, kind: .ended))])
        let expectedFixes = fromFile.dropLast(2).compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
        #expect(expectedFixes.count == 5)

        let terminal = try PseudoTerminal()
        let provider = NMEALocationProvider(source: SerialPort(path: terminal.path, settings: SerialSettings(speed: 38400)))
        let reading = Task {
            await collect(provider) { updates in updates.filter { if case .fix = $0 { true } else { false } }.count >= 4 }
        }
        try await Task.sleep(for: .milliseconds(200))
        let replayer = Replayer(log: try FileSource(path: path).load(), speed: nil)
        try await replayer.play(into: terminal, loop: false)
        let deadline = Task {  // a stream that stops short fails the test instead of hanging it
            try await Task.sleep(for: .seconds(20))
            reading.cancel()
        }
        let fromPty = await reading.value
        deadline.cancel()
        let fixes = fromPty.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
        // The pty stays open, so the last cycle is sent when the ending sentence is learned
        // (from the third cycle on): the first four match exactly.
        #expect(Array(fixes.prefix(4)) == Array(expectedFixes.prefix(4)))
        // The activation states the line as set.
        let line = SerialLine(bps: 38400, parity: "N", stopBits: 1)
        #expect(fromPty.first == .device(DeviceEvent(device: terminal.path, kind: .activated, line: line, receiver: ReceiverIdentity(driver: "NMEA0183"))))
    }

    @Test("unplugging: a pty that closes mid-sentence is lost, one at the same link is read again; no descriptor leaks")
    func unplugAndReplug() async throws {
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-unplug-\(getpid())").path
        let cycle = Array(try String(contentsOf: Self.fixtures.appendingPathComponent("glonass-fix.nmea"), encoding: .utf8)
            .split(whereSeparator: \.isNewline).filter { $0.hasPrefix("$") }.prefix(6).joined(separator: "\r\n").utf8) + [13, 10]
        let receiver = try PluggableTerminal(link: link)
        // The follower ends of the terminals unplugged: the provider must close each.
        var unplugged: Set<String> = []
        let provider = NMEALocationProvider(source: SerialPort(path: link), maximumBackoff: .milliseconds(200))
        let seen = Locked<[DeviceEvent.Kind]>([])
        let events = Task {
            for await update in provider.updateStream() {
                if case .device(let event) = update { seen.withLock { $0.append(event.kind) } }
            }
        }
        defer { events.cancel() }  // when a round fails
        /// Waits until `count` events of the kind have been seen; false after ten seconds.
        func waitFor(_ count: Int, _ matches: @escaping (DeviceEvent.Kind) -> Bool) async throws -> Bool {
            for _ in 0..<1000 {
                if seen.withLock({ $0.filter(matches).count }) >= count { return true }
                try await Task.sleep(for: .milliseconds(10))
            }
            return false
        }
        let isLost: (DeviceEvent.Kind) -> Bool = { if case .lost = $0 { true } else { false } }
        for round in 0..<21 {
            if round > 0 { try receiver.plugIn() }  // a new one at the same link
            // (No reference to the terminal is kept: unplugging must close it.)
            try await receiver.terminal!.write(cycle)
            try await receiver.terminal!.write(Array("$GPGGA,0814".utf8))  // cut mid-sentence
            // Each round waits for the device to come back before unplugging it again,
            // however slowly the machine runs.
            let back = round == 0 ? try await waitFor(1) { $0 == .activated } : try await waitFor(round) { $0 == .recovered }
            try #require(back, "round \(round): \(seen.withLock { $0 })")
            if round < 20 {
                unplugged.insert(receiver.terminal!.path)
                receiver.unplug()  // the master closes
                try #require(try await waitFor(round + 1, isLost), "round \(round): \(seen.withLock { $0 })")
            }
        }
        let kinds = seen.withLock { $0 }
        #expect(kinds.first == .activated)
        #expect(kinds.filter { $0 == .recovered }.count == 20)
        #expect(kinds.filter(isLost).count == 20)
        events.cancel()  // the provider closes the port it reads, on its reading thread
        await events.value
        // None of the unplugged terminals is still open here (a number the kernel gave the
        // last terminal again is that terminal's). Only these paths are counted: whatever
        // else the test process holds is not this provider's.
        unplugged.remove(try #require(receiver.terminal).path)
        try waitUntil("the descriptors of the 20 unplugged terminals closed") {
            unplugged.isDisjoint(with: openDescriptorTargets())
        }
    }

    /// What this process's open descriptors refer to, one entry a descriptor.
    func openDescriptorTargets() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
    }

    @Test("a missing device and one without permission give clear typed errors")
    func openErrors() throws {
        #expect(throws: DeviceError.notFound(path: "/dev/ttyGPSFIX-none")) { try SerialPort(path: "/dev/ttyGPSFIX-none").open() }
        #expect(DeviceError.permissionDenied(path: "/dev/ttyUSB0").description
            == "Permission denied on /dev/ttyUSB0: add the service user to the dialout group")
        #expect(throws: DeviceError.self) { try SerialPort(path: "/etc/hostname").open() }
        // A device cgroup (systemd's DevicePolicy=closed) answers EPERM: not the dialout group's business.
        #expect(DeviceError.from(errno: EPERM, path: "/dev/rfcomm0", call: "open") == .notAllowed(path: "/dev/rfcomm0"))
        #expect(DeviceError.from(errno: EACCES, path: "/dev/ttyUSB0", call: "open") == .permissionDenied(path: "/dev/ttyUSB0"))
    }

    @Test("a port is opened exclusive: the kernel's flag is set on it, and others are refused")
    func exclusive() throws {
        let terminal = try PseudoTerminal()
        let port = SerialPort(path: terminal.path)
        // Root may open a TIOCEXCL port anyway (CI runs as root), so the flag itself is
        // asked for, through the slave the pty keeps open.
        let probe = open(terminal.path, O_RDWR | O_NOCTTY)
        defer { close(probe) }
        #expect(Self.isExclusive(probe) == false)
        let first = try port.open()
        defer { close(first.descriptor) }
        #expect(Self.isExclusive(probe) == true)
        if getuid() != 0 {
            #expect(throws: DeviceError.busy(path: terminal.path)) { try port.open() }
        }
    }

    @Test("a port its reader closes is let go by the writer's copy too, and is no longer exclusive: a copy left does not keep a reopening out")
    func closedPortLetGo() async throws {
        let terminal = try PseudoTerminal()
        let probe = open(terminal.path, O_RDWR | O_NOCTTY)
        defer { close(probe) }
        // The probe's, and the one the pseudo-terminal keeps.
        let before = copies(of: terminal.path)
        let port = SerialPort(path: terminal.path, settings: SerialSettings(speed: 38400))
        let writer = ReceiverWriter(eventLoop: MultiThreadedEventLoopGroup.singleton.next(), port: port)
        let provider = NMEALocationProvider(source: port)
        let activated = Locked(false)
        let reading = Task {
            for await update in provider.updateStream() {
                if case .device(let event) = update, event.kind == .activated { activated.withLock { $0 = true } }
            }
        }
        defer { reading.cancel() }  // when the test fails first
        // The receiver talks until the port is open and its sentences read.
        let sentence = Array("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n".utf8)
        let talking = Task {
            while !activated.withLock({ $0 }) {
                try await terminal.write(sentence)
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { talking.cancel() }
        try waitUntil("the port opened", within: 10) { activated.withLock { $0 } }
        // The writer's channel on its copy of the port is open once it has written a frame.
        writer.send(Array("$PGPSFIX,1*00\r\n".utf8))
        try waitUntil("the frame written", within: 10) { writer.counters.written == 1 }
        // A pulse source's copy, which waits in the kernel and may not be let go at once.
        let pulseCopy = try #require(port.duplicateOpenDescriptor())
        defer { close(pulseCopy) }
        #expect(copies(of: terminal.path) == before + 3)  // the reader's, the writer's, the pulses'
        reading.cancel()
        await reading.value
        try waitUntil("the writer's copy closed with the reader's", within: 10) { copies(of: terminal.path) == before + 1 }
        #expect(Self.isExclusive(probe) == false, "the copy left keeps the port exclusive")
    }

    @Test("a port whose speed was searched for is left not exclusive when closed, whatever copy of it lives on")
    func speedTrialLetGo() async throws {
        let terminal = try PseudoTerminal()
        // A copy that outlives the trial's, as a pulse source's does.
        let probe = open(terminal.path, O_RDWR | O_NOCTTY)
        defer { close(probe) }
        let sentence = Array("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n".utf8)
        let talking = Task {
            while !Task.isCancelled {
                try await terminal.write(sentence)
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        defer { talking.cancel() }
        for try await _ in SerialPort(path: terminal.path).chunkStream() { break }
        // The reading thread closes the port once the consumer has gone.
        try waitUntil("the port closed and let go", within: 10) { Self.isExclusive(probe) == false }
    }

    /// How many of this process's open descriptors refer to `path`.
    func copies(of path: String) -> Int { openDescriptorTargets().count { $0 == path } }

    /// The terminal's exclusive-mode flag (`TIOCGEXCL`, Linux 3.8 and later).
    static func isExclusive(_ descriptor: Int32) -> Bool? {
        let getExclusive: UInt = 0x8004_5440  // _IOR('T', 0x40, int)
        var flag: Int32 = 0
        return ioctl(descriptor, getExclusive, &flag) == 0 ? flag != 0 : nil
    }

    @Test("device names parse to their sources", arguments: [
        ("/dev/ttyUSB0", DeviceName.serial(path: "/dev/ttyUSB0")),
        ("file:log.nmea", .file(path: "log.nmea")),
        ("gpsd://localhost:2948/dev/ttyS0", .gpsd(host: "localhost", port: 2948, device: "/dev/ttyS0")),
        ("gpsd://127.0.0.1", .gpsd(host: "127.0.0.1", port: 2947, device: nil)),
        ("gpsd://[::1]:2947", .gpsd(host: "::1", port: 2947, device: nil)),
        ("gpsd://[::1]", .gpsd(host: "::1", port: 2947, device: nil)),
        ("gpsd://[fe80::1%eth0]:2948/dev/ttyACM0", .gpsd(host: "fe80::1%eth0", port: 2948, device: "/dev/ttyACM0")),
    ])
    func deviceNames(text: String, name: DeviceName) {
        #expect(DeviceName(text) == name)
        // Written back as it was given, with the port.
        #expect(DeviceName(name.description) == name)
        // A gpsd source names itself so too: its name in the log and DEVICES reads back.
        if case .gpsd = name { #expect(DeviceName(name.source().name) == name, "\(name.source().name)") }
        #expect(DeviceName("ttyUSB0") == nil)
    }

    @Test("a gpsd device name with a broken IPv6 host or port is none", arguments: [
        "gpsd://[::1", "gpsd://[::1]x", "gpsd://[::1]:0", "gpsd://[]:2947", "gpsd://:2947", "gpsd://host:99999",
    ])
    func malformedGPSDNames(text: String) {
        #expect(DeviceName(text) == nil)
    }

    @Test("the replayer cuts a log into cycles paced by its times")
    func replayPlan() throws {
        let log = try FileSource(path: Self.fixtures.appendingPathComponent("glonass-fix.nmea").path).load()
        let plan = Replayer(log: log, speed: 2)
        #expect(plan.cycles.count == 5)
        #expect(plan.cycles.dropLast().allSatisfy { $0.pause == .milliseconds(500) })
        #expect(plan.cycles.flatMap(\.bytes) == log.payload)
    }

    @Test("a retimed u-blox cycle decodes to the new time, its frames checksummed anew")
    func retimeUBX() throws {
        let path = Self.fixtures.appendingPathComponent("gpsd-ubx/ublox-zed-f9p-rtk.log").path
        let log = try FileSource(path: path).load()
        let plan = Replayer(log: log, speed: 1)
        let target = GPSTime(millisecondsSince1970: 1_795_694_400_000)  // 2026-11-26T12:00:00Z
        var fixes: [Fix] = []
        let decoder = ReceiverStreamDecoder()
        for (index, cycle) in plan.cycles.prefix(4).enumerated() {
            let stamped = Retimer.retime(cycle: cycle.bytes, to: GPSTime(millisecondsSince1970: 1_795_694_400_000 + index * 1000))
            #expect(stamped.count == cycle.bytes.count)
            stamped.withUnsafeBytes { decoder.feed($0) { if case .fix(let fix) = $0 { fixes.append(fix) } } }
        }
        decoder.finish { if case .fix(let fix) = $0 { fixes.append(fix) } }
        #expect(decoder.framer.binaryStatistics[UBXFrameRule.self].refused == 0, "a retimed frame failed its checksum")
        #expect(fixes.count >= 3)
        #expect(fixes.first?.time == target, "\(fixes.map(\.time))")
        #expect(fixes.compactMap(\.time).map(\.secondsSince1970) == (0..<fixes.count).map { target.secondsSince1970 + Double($0) })
    }

    @Test("a u-blox capture is cut into its navigation epochs, paced by their time of week, byte for byte")
    func replayPlanUBX() throws {
        // NEO-M8N at 5 Hz: NAV-PVT every 200 ms.
        let path = Self.fixtures.appendingPathComponent("gpsd-ubx/ublox-neo-m8n.log").path
        let log = try FileSource(path: path).load()
        let plan = Replayer(log: log, speed: 1)
        #expect(plan.cycles.count >= 20)
        #expect(plan.cycles.dropLast().allSatisfy { $0.pause == .milliseconds(200) })
        #expect(plan.cycles.flatMap(\.bytes) == log.payload)
    }

    @Test("a u-blox receiver's counters count every byte it sent, its UBX frames as well as its NMEA")
    func countersCountEveryByte() async throws {
        let path = Self.fixtures.appendingPathComponent("gpsd-ubx/ublox-neo-m8n.log").path
        let payload = try FileSource(path: path).load().payload
        let updates = await collect(NMEALocationProvider(source: FileSource(path: path))) { _ in false }
        let last = try #require(updates.compactMap { if case .counters(let counters) = $0 { counters } else { nil } }.last)
        #expect(last.binaryFraming[UBXFrameRule.self].frames > 0)
        #expect(last.framing.bytes < payload.count, "the NMEA framer sees only the text between frames")
        #expect(last.bytes == payload.count)
    }
}

@Suite("Autobaud")
struct AutobaudTests {
    static let sentences = Array(
        ("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n"
            + "$GNRMC,081412.000,A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A*7F\r\n").utf8)

    /// A fake receiver that sends `bytes`, making sense only at `line`: noise at any other.
    static func receiver(at line: SerialLine, sending bytes: [UInt8] = sentences) -> (SerialLine, ([UInt8]) -> Bool) -> [UInt8] {
        { trial, _ in
            guard trial == line else {
                var generator = SystemRandomNumberGenerator()
                return (0..<400).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            return bytes
        }
    }

    @Test("finds the speed at which valid sentences arrive", arguments: [38400, 4800, 921_600])
    func findsSpeed(speed: Int) throws {
        var tried: [SerialLine] = []
        let found = Autobaud.detect { trial, enough in
            tried.append(trial)
            return Self.receiver(at: SerialLine(bps: speed))(trial, enough)
        }
        #expect(found?.line == SerialLine(bps: speed))
        #expect(found?.bytes == Self.sentences)
        #expect(tried.map(\.bps) == Array(SerialSettings.commonSpeeds.prefix { $0 != speed }) + [speed])
    }

    @Test("after 8N1 at every common speed, TSIP's 9600 8O1 is tried, and a Trimble receiver found there")
    func findsOddParity() throws {
        // A 0x8F-AB primary timing packet as a Resolution SMT 360 sends it (from gpsd's
        // capture), twice: TSIP alone, no NMEA.
        let packet: [UInt8] = [
            0x10, 0x8F, 0xAB, 0x00, 0x03, 0xA9, 0x25, 0x08, 0x1C, 0x00, 0x12, 0x00, 0x1D, 0x26, 0x12, 0x16, 0x0A, 0x07,
            0xE3, 0x10, 0x03,
        ]
        let timing = SerialLine(bps: 9600, parity: "O")
        #expect(Autobaud.lines.prefix(SerialSettings.commonSpeeds.count).allSatisfy { $0.parity == "N" })
        #expect(Autobaud.lines.contains(timing))
        let found = Autobaud.detect(listen: Self.receiver(at: timing, sending: packet + packet))
        #expect(found?.line == timing)
    }

    @Test("noise at every speed finds nothing")
    func noise() {
        #expect(Autobaud.detect(listen: Self.receiver(at: SerialLine(bps: 1))) == nil)
    }

    @Test("a port opened without a speed autobauds on a pty, losing none of the bytes heard while listening", .timeLimit(.minutes(1)))
    func autobaudOnPty() async throws {
        let terminal = try PseudoTerminal()
        let port = SerialPort(path: terminal.path)
        let reading = Task {
            var bytes: [UInt8] = []
            for try await chunk in port.chunkStream() {
                bytes += chunk.bytes
                if bytes.count >= Self.sentences.count * 3 { break }
            }
            return bytes
        }
        for _ in 0..<3 {
            try await terminal.write(Self.sentences)
            try await Task.sleep(for: .milliseconds(100))
        }
        let bytes = try await reading.value
        #expect(bytes == Self.sentences + Self.sentences + Self.sentences)
        #expect(port.detectedSpeed == 9600)  // a pty accepts the first speed tried
    }

    @Test("a speed search opens the port once, setting each trial's speed on that opening, and reads on from it", .timeLimit(.minutes(1)))
    func speedSearchOpensOnce() async throws {
        let terminal = try PseudoTerminal()
        // A speed no trial sets, in place of a pty's own 38400 bps.
        var unused = termios()
        #expect(tcgetattr(terminal.master, &unused) == 0)
        cfsetispeed(&unused, speed_t(B1200))
        cfsetospeed(&unused, speed_t(B1200))
        #expect(tcsetattr(terminal.master, TCSANOW, &unused) == 0)
        // Every closing of the port drops DTR (HUPCL) and lets another program open it.
        let events = try OpeningsAndClosings(path: terminal.path)
        let port = SerialPort(path: terminal.path)
        let reading = Task {
            var bytes: [UInt8] = []
            for try await chunk in port.chunkStream() {
                bytes += chunk.bytes
                // Counted while the port is open: the reading's own end closes it.
                if bytes.count >= Self.sentences.count * 3 { return (bytes, events.counts) }
            }
            return (bytes, events.counts)
        }
        // The receiver talks at 38400 bps, the third speed tried (what the port's reader
        // set is what the master reads back: a pty's master reports its follower's
        // settings), until the reading has what it waits for.
        let talking = Task {
            while !Task.isCancelled {
                var attributes = termios()
                if tcgetattr(terminal.master, &attributes) == 0, cfgetispeed(&attributes) == speed_t(B38400) {
                    try await terminal.write(Self.sentences)
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        defer { talking.cancel() }
        let (bytes, counts) = try await reading.value
        #expect(bytes.starts(with: Self.sentences))
        #expect(port.detectedSpeed == 38400)
        #expect(counts.openings == 1 && counts.closings == 0, "\(counts)")
    }

    /// Counts the openings and closings of a file from now on (inotify's `IN_OPEN` and
    /// `IN_CLOSE`). inotify merges an event into an identical one still unread, so two
    /// openings with no closing between them count as one.
    final class OpeningsAndClosings: Sendable {
        private let descriptor: Int32
        private let seen = Mutex((openings: 0, closings: 0))

        init(path: String) throws {
            descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0, inotify_add_watch(descriptor, path, UInt32(IN_OPEN | IN_CLOSE)) >= 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
        }

        deinit { close(descriptor) }

        /// The openings and closings so far.
        var counts: (openings: Int, closings: Int) {
            seen.withLock { seen in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    guard count > 0 else { return seen }
                    var offset = 0
                    while offset + MemoryLayout<inotify_event>.size <= count {
                        let event = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self) }
                        if event.mask & UInt32(IN_OPEN) != 0 { seen.openings += 1 }
                        if event.mask & UInt32(IN_CLOSE) != 0 { seen.closings += 1 }
                        offset += MemoryLayout<inotify_event>.size + Int(event.len)
                    }
                }
            }
        }
    }

    @Test("a device read faster than it is consumed waits in the kernel: nothing is read while the consumer holds a chunk, and nothing is lost", .timeLimit(.minutes(1)))
    func readingIsBounded() async throws {
        let terminal = try PseudoTerminal()
        let payload = (0..<2_000_000).map { UInt8(0x20 + $0 % 95) }
        let port = SerialPort(path: terminal.path, settings: SerialSettings(speed: 38400))
        // The consumer holds on to its first chunk until the test lets go.
        let letGo = DispatchSemaphore(value: 0)
        // However the test ends, the reading thread is let go.
        defer { letGo.signal() }
        let received = Locked<(bytes: [UInt8], chunks: Int)>(([], 0))
        let reading = Task {
            try await port.chunks().forEach(onReadingThread: { chunk in
                let first = received.withLock { state -> Bool in
                    state.bytes += chunk.bytes
                    state.chunks += 1
                    return state.chunks == 1
                }
                if first { letGo.wait() }
            })
        }
        // Write without blocking until the pty takes no more.
        let flags = fcntl(terminal.master, F_GETFL)
        _ = fcntl(terminal.master, F_SETFL, flags | O_NONBLOCK)
        var accepted = 0
        var idleSince = ContinuousClock.now
        while ContinuousClock.now - idleSince < .milliseconds(500), accepted < payload.count {
            let written = payload.withUnsafeBytes { write(terminal.master, $0.baseAddress! + accepted, payload.count - accepted) }
            if written > 0 {
                accepted += written
                idleSince = .now
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        // The reader may have started after the pty filled: it takes its first chunk then.
        try waitUntil("the first chunk taken") { received.withLock { $0.chunks } >= 1 }
        // One chunk of at most 4 KiB taken; the rest waits in the pty's buffers.
        #expect(accepted < 512 * 1024, "the reader kept reading: \(accepted) bytes taken")
        #expect(received.withLock { $0.chunks } == 1)
        #expect(received.withLock { $0.bytes.count } <= 4096)
        letGo.signal()
        _ = fcntl(terminal.master, F_SETFL, flags)
        let rest = Array(payload[accepted...])
        try await terminal.write(rest)
        try waitUntil("the whole payload read") { received.withLock { $0.bytes.count } >= payload.count }
        #expect(received.withLock { $0.bytes } == payload)
        reading.cancel()
        try await reading.value
    }
}
