import Foundation
import GPSFixNTRIP
import Logging
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing

/// Pushing a base's frames to a caster (`--ntrip-server`), against a caster of the tests'
/// own that can be stopped and started again (str2str's caster takes no source): the
/// frames of a real capture arrive byte for byte, in order, across a restart, and a
/// refusal is retried without the password ever reaching the log.
@Suite("Pushing RTCM 3 to casters (NTRIP server)", .serialized)
struct NTRIPServerTests {
    static let password = "pu$h-S3cret"

    /// The whole frames of a real capture, in order.
    static let frames: [ByteBuffer] = {
        var finder = RTCMFrameFinder()
        var frames: [ByteBuffer] = []
        finder.feed((try? RecordedRTCM.payload(of: "rtcm3.2.log")) ?? []) { frames.append(ByteBuffer(bytes: $0.bytes)) }
        return frames
    }()

    static func bytes(_ frames: ArraySlice<ByteBuffer>) -> [UInt8] { frames.flatMap { Array($0.readableBytesView) } }

    /// A push to `caster`, running until the returned task is cancelled.
    static func push(
        to caster: PushCaster, version: NTRIPServerVersion, password: String = password, logs: LogRecorder = LogRecorder()
    ) throws -> (NTRIPServer, Task<Void, Never>) {
        let address = try NTRIPCaster(url: "ntrip://base@127.0.0.1:\(caster.port)/BASE").with(password: password)
        let server = try NTRIPServer(
            configuration: .init(caster: address, version: version, timeout: .seconds(5), userAgent: "GPSFix/test"),
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: Logger(label: "test") { _ in logs })
        return (server, Task { await server.run() })
    }

    static func stop(_ task: Task<Void, Never>) async {
        task.cancel()
        await task.value
    }

    @Test("a stop while the caster's connect hangs (its SYNs dropped, as a firewall drops them) ends the push at once, not at the connect's timeout")
    func stopWhileConnecting() async throws {
        let caster = try UnansweringPort()
        let address = try NTRIPCaster(url: "ntrip://base@127.0.0.1:\(caster.port)/BASE").with(password: Self.password)
        let server = try NTRIPServer(
            configuration: .init(caster: address, version: .one, timeout: .seconds(120), userAgent: "GPSFix/test"),
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: Logger(label: "test"))
        let task = Task { await server.run() }
        try waitUntil("the connect waiting for an answer", within: 10) { caster.isBeingConnectedTo }
        task.cancel()
        let ended = Atomic<Bool>(false)
        Task {
            await task.value
            ended.store(true, ordering: .releasing)
        }
        try waitUntil("the push ended", within: 20) { ended.load(ordering: .acquiring) }
    }

    @Test("NTRIP 1.0: SOURCE, ICY 200 OK, then every frame byte for byte")
    func version1() async throws {
        let caster = try PushCaster(mountpoint: "BASE", password: Self.password)
        let (server, task) = try Self.push(to: caster, version: .one)
        try waitUntil("the caster accepts", within: 10) { server.counters.connected }
        for frame in Self.frames { server.receive(rtcm3: frame) }
        let sent = Self.bytes(Self.frames[...])
        try waitUntil("every frame at the caster", within: 10) { caster.streams.last?.payload.count ?? 0 >= sent.count }
        await Self.stop(task)
        let stream = try #require(caster.streams.last)
        #expect(stream.head == "SOURCE \(Self.password) /BASE\r\nSource-Agent: NTRIP GPSFix/test")
        #expect(stream.payload == sent)
        let counters = server.counters
        #expect(counters.framesSent == Self.frames.count && counters.bytesSent == sent.count && counters.framesDropped == 0, "\(counters)")
        #expect(counters.connections == 1 && counters.refusals == 0, "\(counters)")
    }

    @Test("NTRIP 2.0: POST with Basic authentication, each frame one chunk, byte for byte")
    func version2() async throws {
        let caster = try PushCaster(mountpoint: "BASE", password: Self.password)
        let (server, task) = try Self.push(to: caster, version: .two)
        try waitUntil("the caster accepts", within: 10) { server.counters.connected }
        for frame in Self.frames { server.receive(rtcm3: frame) }
        try waitUntil("every frame at the caster", within: 10) { caster.streams.last?.chunks?.count ?? 0 >= Self.frames.count }
        await Self.stop(task)
        let stream = try #require(caster.streams.last)
        let head = stream.head.components(separatedBy: "\r\n")
        let credentials = Data("base:\(Self.password)".utf8).base64EncodedString()
        #expect(head.first == "POST /BASE HTTP/1.1")
        #expect(Set(head.dropFirst()).isSuperset(of: [
            "Host: 127.0.0.1:\(caster.port)", "Ntrip-Version: Ntrip/2.0", "Authorization: Basic \(credentials)",
            "User-Agent: NTRIP GPSFix/test", "Content-Type: gnss/data", "Transfer-Encoding: chunked",
        ]), "\(head)")
        #expect(stream.chunks == Self.frames.map { Array($0.readableBytesView) })
        #expect(server.counters.framesSent == Self.frames.count && server.counters.framesDropped == 0, "\(server.counters)")
    }

    @Test("a caster restarted in the middle: reconnected within 10 s, the frames after it whole and in order, those lost counted",
          arguments: NTRIPServerVersion.allCases)
    func restart(version: NTRIPServerVersion) async throws {
        let caster = try PushCaster(mountpoint: "BASE", password: Self.password)
        let (server, task) = try Self.push(to: caster, version: version)
        let third = Self.frames.count / 3
        let (before, whileDown, after) = (Self.frames[..<third], Self.frames[third..<(2 * third)], Self.frames[(2 * third)...])
        try waitUntil("the caster accepts", within: 10) { server.counters.connected }
        for frame in before { server.receive(rtcm3: frame) }
        try waitUntil("the first frames at the caster", within: 10) { caster.streams.last?.payload == Self.bytes(before) }

        caster.stop()
        try waitUntil("the push sees the caster gone", within: 10) { !server.counters.connected }
        for frame in whileDown { server.receive(rtcm3: frame) }
        // Down long enough for a connection to fail.
        try waitUntil("a failed connection", within: 10) { server.counters.lastError?.contains("cannot connect") == true }
        let restarted = ContinuousClock.now
        try caster.start()
        try waitUntil("the push reconnects", within: 10) { server.counters.connected }
        #expect(ContinuousClock.now - restarted < .seconds(10))
        for frame in after { server.receive(rtcm3: frame) }
        try waitUntil("the last frames at the caster", within: 10) { caster.streams.last?.payload.count ?? 0 >= Self.bytes(after).count }
        await Self.stop(task)

        let streams = caster.streams.filter(\.accepted)
        #expect(streams.count == 2)
        #expect(streams.last?.payload == Self.bytes(after))
        let counters = server.counters
        #expect(counters.framesSent == before.count + after.count, "\(counters)")
        #expect(counters.framesDropped == whileDown.count, "\(counters)")
        #expect(counters.connections == 2 && counters.refusals == 0, "\(counters)")
    }

    @Test("a wrong password: refused, retried after a backoff, the caster's line logged and the password never")
    func refusal() async throws {
        let caster = try PushCaster(mountpoint: "BASE", password: Self.password)
        let logs = LogRecorder()
        let wrong = "wr0ng-Pa55"
        let (server, task) = try Self.push(to: caster, version: .one, password: wrong, logs: logs)
        try waitUntil("a second refusal", within: 10) { server.counters.refusals >= 2 }
        // The backoff, as the caster saw the two attempts arrive.
        let attempts = caster.streams.map(\.arrived)
        #expect(attempts.count >= 2 && attempts[1] - attempts[0] > .milliseconds(800), "\(attempts)")
        let status = server.status
        await Self.stop(task)
        #expect(server.counters.connections == 0 && caster.streams.count >= 2)
        #expect(logs.lines.contains { $0.contains("refused: 'ERROR - Bad Password'") }, "\(logs.lines)")
        #expect(!logs.lines.contains { $0.contains(wrong) } && !status.contains(wrong), "\(logs.lines) \(status)")
    }

    /// Gives `server` a base's frames at 4 kB a second, paced by the clock (not by sleeps
    /// that a busy machine lengthens), until it left its first caster or `limit` passed;
    /// how long that took.
    static func feedUntilLeft(_ server: NTRIPServer, within limit: Duration) async throws -> Duration {
        let accepted = ContinuousClock.now
        var next = 0, fed = 0
        while server.counters.connections < 2, ContinuousClock.now - accepted < limit {
            while Double(fed) < (ContinuousClock.now - accepted) / .milliseconds(1) * 4 {
                let frame = frames[next % frames.count]
                next += 1
                fed += frame.readableBytes
                server.receive(rtcm3: frame)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return ContinuousClock.now - accepted
    }

    @Test("a caster that stops reading is left once its socket has taken nothing for the timeout, not after SwiftNIO's buffer fills")
    func stalledCaster() async throws {
        let caster = try PushCaster(mountpoint: "BASE", password: Self.password, readsStreams: false)
        let logs = LogRecorder()
        let (server, task) = try Self.push(to: caster, version: .one, logs: logs)
        try waitUntil("the caster accepts", within: 10) { server.counters.connected }
        // The kernels take some seconds of the frames, and the timeout is 5 s; SwiftNIO's
        // 64 KiB would take 16 s more.
        let left = try await Self.feedUntilLeft(server, within: .seconds(40))
        await Self.stop(task)
        #expect(server.counters.connections >= 2, "\(server.counters)")
        #expect(left < .seconds(18), "left after \(left)")
        #expect(logs.lines.contains { $0.contains("left a frame waiting for 5") }, "\(logs.lines)")
    }

    @Test("a caster that reads too slowly (1 kB/s of a base's 4 kB/s) is left once a frame waited the timeout, rather than kept with corrections minutes old")
    func slowCaster() async throws {
        let caster = try PushCaster(mountpoint: "BASE", password: Self.password, readRate: 1000)
        let logs = LogRecorder()
        let (server, task) = try Self.push(to: caster, version: .one, logs: logs)
        try waitUntil("the caster accepts", within: 10) { server.counters.connected }
        _ = try await Self.feedUntilLeft(server, within: .seconds(60))
        await Self.stop(task)
        #expect(server.counters.connections >= 2, "\(server.counters)")
        #expect(logs.lines.contains { $0.contains("left a frame waiting for 5") }, "\(logs.lines)")
    }

    @Test("a caster that wants the mountpoint without its slash: the other form after a refusal, kept for the next connection")
    func bareMountpoint() async throws {
        let caster = try PushCaster(mountpoint: "BASE", password: Self.password, form: .bare)
        let (server, task) = try Self.push(to: caster, version: .one)
        try waitUntil("the caster accepts", within: 10) { server.counters.connected }
        caster.stop()
        try waitUntil("the push sees the caster gone", within: 10) { !server.counters.connected }
        try caster.start()
        try waitUntil("the push reconnects", within: 10) { server.counters.connected }
        for frame in Self.frames.prefix(10) { server.receive(rtcm3: frame) }
        try waitUntil("the frames at the caster", within: 10) { caster.streams.last?.payload == Self.bytes(Self.frames.prefix(10)) }
        await Self.stop(task)
        #expect(caster.streams.map { $0.head.components(separatedBy: "\r\n")[0] } == [
            "SOURCE \(Self.password) /BASE", "SOURCE \(Self.password) BASE", "SOURCE \(Self.password) BASE",
        ])
        #expect(server.counters.refusals == 1 && server.counters.connections == 2, "\(server.counters)")
    }
}
