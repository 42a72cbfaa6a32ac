import Foundation
import GPSFix
@testable import GPSFixDevices
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How sources read: without waking when idle, files in bounded chunks, a gpsd's refusal
/// reported, and replays that keep their blocking writes off Swift's cooperative pool.
@Suite("Reading", .serialized, .timeLimit(.minutes(1)))
struct ReadingTests {
    @Test("raw mode sets VMIN and VTIME by their names and leaves the other control characters alone")
    func controlCharacters() throws {
        let terminal = try PseudoTerminal()
        let descriptor = open(terminal.path, O_RDWR | O_NOCTTY)
        defer { close(descriptor) }
        var before = termios()
        tcgetattr(descriptor, &before)
        try Termios.apply(SerialSettings(speed: 9600), to: descriptor, path: terminal.path)
        var after = termios()
        tcgetattr(descriptor, &after)
        let (old, new) = (Self.controls(of: before), Self.controls(of: after))
        #expect(new[Int(VMIN)] == 1)
        #expect(new[Int(VTIME)] == 0)
        // cfmakeraw changes none of them: every slot but VMIN and VTIME is as it was.
        for index in old.indices where index != Int(VMIN) && index != Int(VTIME) {
            #expect(new[index] == old[index], "c_cc[\(index)]")
        }
    }

    static func controls(of attributes: termios) -> [UInt8] {
        withUnsafeBytes(of: attributes.c_cc) { Array($0) }
    }

    @Test("an idle device's reading thread sleeps: no wake-ups while nothing arrives")
    func idleReaderSleeps() async throws {
        let terminal = try PseudoTerminal()
        var iterator = SerialPort(path: terminal.path, settings: SerialSettings(speed: 9600)).chunkStream().makeAsyncIterator()
        try await terminal.write(Array("$GPTXT,01,01,02,hello*2F\r\n".utf8))
        _ = try await iterator.next()  // the thread is up and waiting
        let before = try ThreadWakeUps()
        try #require(before.threads.values.contains { $0.name == DeviceThread.name }, "no thread named \(DeviceThread.name)")
        try await Task.sleep(for: .seconds(1))
        for thread in try ThreadWakeUps().since(before) where thread.name == DeviceThread.name {
            // It slept in poll() for the whole second: at most one switch for the start of the wait.
            #expect(thread.times <= 1, "thread \(thread.id) woke \(thread.times) times")
        }
        withExtendedLifetime(iterator) {}
    }

    @Test("a log is streamed in chunks of at most 64 KiB, comment lines left out, the payload whole")
    func fileStreams() async throws {
        let folder = try makeTemporaryFolder("stream")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("big.log").path
        var bytes = Array("# Name: streamed\n# Delay-Cookie: | 0.5\n".utf8)
        let cycle = Array("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n|".utf8)
        for index in 0..<5000 {
            bytes += cycle
            if index % 997 == 0 { bytes += Array("# a comment in the middle\n".utf8) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var chunks: [[UInt8]] = []
        for try await chunk in FileSource(path: path).chunkStream() { chunks.append(chunk.bytes) }
        #expect(chunks.count >= 5)
        #expect(chunks.allSatisfy { $0.count <= 1 << 16 })
        #expect(chunks.flatMap { $0 } == CaptureLog(bytes).payload)
        #expect(!chunks.flatMap { $0 }.contains(UInt8(ascii: "|")))
    }

    @Test("a log read on the calling thread comes in blocks of at most the size asked, whole, its size learned first")
    func blockReading() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-blocks-\(UUID().uuidString).nmea").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bytes = Array(repeating: Array("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n".utf8), count: 3000)
            .flatMap { $0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var blocks: [[UInt8]] = []
        var size: Int?
        try FileSource(path: path).read(blockSize: 4096, sizingBy: { size = $0 }) { blocks.append(Array($0)) }
        #expect(size == bytes.count)
        #expect(blocks.count == (bytes.count + 4095) / 4096 && blocks.allSatisfy { $0.count <= 4096 })
        #expect(blocks.flatMap { $0 } == bytes)
        #expect(throws: DeviceError.system(path: path + ".missing", call: "open", errno: ENOENT)) {
            try FileSource(path: path + ".missing").read { _ in }
        }
    }

    /// Why `source` was first reported lost; `nil` when it was not within 20 s.
    static func lossReason(of source: GPSDSource) async -> String? {
        let provider = NMEALocationProvider(source: source, maximumBackoff: .seconds(5))
        let watching = Task { () -> String? in
            for await update in provider.updateStream() {
                if case .device(let event) = update, case .lost(let why) = event.kind { return why }
            }
            return nil
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(20))
            watching.cancel()
        }
        defer { deadline.cancel() }
        return await watching.value
    }

    @Test("a gpsd that answers the WATCH with an ERROR is a lost device, with gpsd's message as the reason")
    func refusedWatch() async throws {
        let gpsd = try FakeGPSD(with: #"{"class":"ERROR","message":"Can't assign /dev/none"}"#)
        let reason = await Self.lossReason(of: GPSDSource(host: "127.0.0.1", port: gpsd.port, device: "/dev/none"))
        #expect(reason?.contains("refused the request") == true, "\(reason ?? "no loss reported")")
        #expect(reason?.contains("Can't assign /dev/none") == true)
    }

    @Test("a gpsd with several devices, none named, is a lost device whose reason names them without their control characters")
    func upstreamDevicesShownPrintable() async throws {
        // Raw control characters, as a gpsd that is not one may send them.
        let devices = "{\"class\":\"DEVICES\",\"devices\":[{\"path\":\"/dev/a\r\u{1B}[2Kforged\"},{\"path\":\"/dev/b\"}]}"
        let gpsd = try FakeGPSD(answering: "?DEVICES", with: devices)
        let reason = await Self.lossReason(of: GPSDSource(host: "127.0.0.1", port: gpsd.port, device: nil))
        #expect(reason?.contains("2 devices (/dev/a??[2Kforged, /dev/b)") == true, "\(reason.debugDescription)")
    }

    @Test("a gpsd whose answer line runs past any line gpsd writes is refused, not buffered: a lost device saying why")
    func overlongAnswerLine() async throws {
        let padding = String(repeating: "x", count: 4 * GPSDSource.maximumAnswerLine)
        let gpsd = try FakeGPSD(with: #"{"class":"WATCH","enable":true,"padding":""# + padding + #""}"#)
        let reason = await Self.lossReason(of: GPSDSource(host: "127.0.0.1", port: gpsd.port, device: "/dev/ttyUSB0"))
        #expect(reason?.contains("a line of over \(GPSDSource.maximumAnswerLine) bytes") == true, "\(reason ?? "no loss reported")")
    }

    /// A gpsd host whose SYNs go unanswered, and a source of it waiting `connectTimeout`.
    static func unansweringGPSD(connectTimeout: Duration) throws -> (UnansweringPort, GPSDSource) {
        let gpsd = try UnansweringPort()
        var source = GPSDSource(host: "127.0.0.1", port: gpsd.port, device: "/dev/ttyUSB0")
        source.connectTimeout = connectTimeout
        return (gpsd, source)
    }

    @Test("a source stopped while libgps connects to a gpsd host that drops its SYNs stops at once, leaving the connect behind")
    func stopWhileConnectingToGPSD() async throws {
        // Longer than the suite's time limit: only the stop can end the wait.
        let (gpsd, source) = try Self.unansweringGPSD(connectTimeout: .seconds(300))
        let provider = NMEALocationProvider(source: source)
        // The provider's own run, as the daemon awaits it when it stops.
        let running = Task { await provider.run { _ in } }
        try waitUntil("libgps's connect waiting for an answer", within: 10) { gpsd.isBeingConnectedTo }
        running.cancel()
        await running.value
        // The kernel still retries the SYN (for two minutes): the stop did not wait for it.
        #expect(gpsd.isBeingConnectedTo)
    }

    @Test("a gpsd host that drops its SYNs is a lost device once the connect timeout has passed, saying so")
    func connectTimesOut() async throws {
        let (gpsd, source) = try Self.unansweringGPSD(connectTimeout: .milliseconds(500))
        defer { withExtendedLifetime(gpsd) {} }
        let reason = await Self.lossReason(of: source)
        #expect(reason?.contains("no connection to gpsd within 0.5 seconds") == true, "\(reason ?? "no loss reported")")
    }

    @Test("openings after a connect timed out wait for that connect rather than start another: one at a time per source")
    func oneConnectAtATime() async throws {
        let (gpsd, source) = try Self.unansweringGPSD(connectTimeout: .milliseconds(200))
        for _ in 0..<3 {
            await #expect(throws: DeviceError.self) { try await source.chunks().forEach(onReadingThread: { _ in }) }
        }
        #expect(gpsd.connectsWaiting == 1)
    }

    @Test("replays into pseudo-terminals nobody reads block no task, and end when cancelled", .timeLimit(.minutes(1)))
    func replayOffThePool() async throws {
        let log = CaptureLog(Array(String(repeating: "$GPTXT,01,01,02,filling the pty buffer*00\r\n", count: 5000).utf8))
        let terminals = try (0..<4).map { _ in try PseudoTerminal() }
        // More blocked replays than the cooperative pool has threads (one per core).
        let replays = terminals.map { terminal in
            Task { try await Replayer(log: log, speed: nil).play(into: terminal, loop: true) }
        }
        try await Task.sleep(for: .milliseconds(300))
        // Tasks still run: a child task's sleep and hop back complete.
        let stillRunning = await Task.detached { await Task.yield(); return true }.value
        #expect(stillRunning)
        for replay in replays { replay.cancel() }
        for replay in replays {
            await #expect(throws: CancellationError.self) { _ = try await replay.value }
        }
    }
}

/// Replays that look live: retimed cycles, a demo that starts at its first fix.
@Suite("Retimed replays", .serialized)
struct RetimedReplayTests {
    static func cycle(_ time: String, valid: Bool = true) -> String {
        let gga = "GPGGA,\(time),2712.6404,S,15303.1201,E,\(valid ? 1 : 0),05,1.2,4.0,M,42.2,M,,"
        let rmc = "GPRMC,\(time),\(valid ? "A" : "V"),2712.6404,S,15303.1201,E,0.00,0.00,080407,,,A"
        return [gga, rmc].map { "$\($0)*" + String(format: "%02X", $0.utf8.reduce(0, ^)) + "\r\n" }.joined()
    }

    /// The fixes a reader decodes from `replayer` looping into a pty, `count` of them.
    static func replayedFixes(_ replayer: Replayer, count: Int, now: @escaping @Sendable () -> Int) async throws -> [Fix] {
        let terminal = try PseudoTerminal()
        let reader = NMEALocationProvider(source: SerialPort(path: terminal.path, settings: SerialSettings(speed: 9600)))
        let reading = Task {
            var fixes: [Fix] = []
            for await update in reader.updateStream() {
                if case .fix(let fix) = update { fixes.append(fix) }
                if fixes.count >= count { break }
            }
            return fixes
        }
        try await Task.sleep(for: .milliseconds(100))
        // Paced by a clock that never waits, so the loop runs as fast as the reader reads.
        let playing = Task { try await replayer.play(into: terminal, loop: true, retime: true, now: now) }
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))
            reading.cancel()
        }
        defer { deadline.cancel() }
        let fixes = await reading.value
        playing.cancel()
        _ = try? await playing.value
        return fixes
    }

    @Test("a retimed sentence keeps its fields but the time and date, and a valid checksum")
    func retimedSentence() {
        let line = Array(Self.cycle("095256.810").utf8.split(separator: 10)[1]) + [10]
        let retimed = String(decoding: Retimer.retime(line[...], to: GPSTime(millisecondsSince1970: 1_795_422_064_250)), as: UTF8.self)
        #expect(retimed.hasPrefix("$GPRMC,082104.250,A,2712.6404,S,15303.1201,E,0.00,0.00,231126,,,A*"))
        let body = retimed.dropFirst().prefix { $0 != "*" }
        #expect(retimed.hasSuffix(String(format: "*%02X\r\n", body.utf8.reduce(0, ^))))
        let notTimed = Array("$GPGSA,A,3,05,07,,,,,,,,,,,11.7,7.5,9.0*0A\r\n".utf8)
        #expect(Retimer.retime(notTimed[...], to: GPSTime(millisecondsSince1970: 0)) == notTimed)
        // u-blox's PUBX,00 (a four-letter address) carries the time in its second field.
        let position = Array("$PUBX,00,095256.81,2712.64046,S,15303.12012,E,21.5,G3,2.1,2.0,0.0,77.5,0.0,,1.1,1.2,1.3,8,0,0*5A\r\n".utf8)
        let stamped = String(decoding: Retimer.retime(position[...], to: GPSTime(millisecondsSince1970: 1_795_422_064_250)), as: UTF8.self)
        #expect(stamped.hasPrefix("$PUBX,00,082104.25,2712.64046,S,"), "\(stamped)")
    }

    @Test("a retimed cycle leaves a UBX frame that fails its checks as it was, and what follows it on its line")
    func retimedBrokenFrame() {
        // A NAV-PVT head whose payload is cut short: no frame, so nothing of it is rewritten.
        let broken: [UInt8] = [0xB5, 0x62, 0x01, 0x07, 0x5C, 0x00, 0x01, 0x02, 0x03]
        let sentence = Array(Self.cycle("095256.810").utf8.split(separator: 10)[1]) + [10]
        let cycle = broken + sentence
        // Its bytes run on to the sentence's line end: one unit, neither frame nor sentence.
        #expect(Retimer.retime(cycle: cycle, to: GPSTime(millisecondsSince1970: 1_795_422_064_250)) == cycle)
    }

    @Test("retimed cycles follow the wall clock, and their times keep increasing across a loop")
    func retimedLoop() async throws {
        let log = CaptureLog(Array((Self.cycle("095255.810", valid: false) + Self.cycle("095256.810") + Self.cycle("095257.810")
            + Self.cycle("095258.810")).utf8))
        let replayer = Replayer(log: log, speed: nil, startingAtFirstFix: true)
        #expect(replayer.cycles.count == 3)  // the cycle without a fix is left out
        // A wall clock standing still: each cycle is the previous one plus the log's second.
        let start = 1_795_422_064_000
        let fixes = try await Self.replayedFixes(replayer, count: 7, now: { start })
        let seconds = fixes.compactMap { $0.time?.secondsSince1970 }
        #expect(seconds.count == 7)  // more than two loops of three cycles
        #expect(seconds == (0..<seconds.count).map { Double(start / 1000 + $0) }, "\(seconds)")
        #expect(fixes.allSatisfy { $0.mode == .threeDimensional })
    }
}
