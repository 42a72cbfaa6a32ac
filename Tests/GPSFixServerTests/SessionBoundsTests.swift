import Foundation
import GPSFix
@testable import GPSFixServer
import NIOCore
import NIOEmbedded
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The bounds every listener's connections share: connection caps, idle timeouts, the
/// stall cut-off, and HTTP under SwiftNIO's server pipeline.
@Suite("Bounded sessions", .serialized)
struct SessionBoundsTests {
    /// Whether the server has closed `client`'s connection: waits up to `seconds` for its
    /// end of stream, throwing away what it reads meanwhile.
    static func isClosed(_ client: LineClient, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var poller = pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(client.descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
        }
        return false
    }

    @Test("at a listener's cap the connection idle the longest is closed to make room; when every one watches, the newest is refused")
    func capsMakeRoomFromTheIdle() async throws {
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"], limits: SessionLimits(local: ConnectionCap(connections: 3, perListener: 3)))
        let first = try await harness.client(watching: nil)
        let second = try await harness.client(watching: nil)
        let third = try await harness.client(watching: nil)
        // A fourth gets its banner; the first, idle the longest, makes room.
        let fourth = try await harness.client(watching: nil)
        #expect(Self.isClosed(first, within: 5))
        #expect(!Self.isClosed(second, within: 0.2) && !Self.isClosed(third, within: 0.2))
        // All three watch now: nothing is idle, so a fifth is refused without a word.
        for client in [second, third, fourth] {
            client.send(#"?WATCH={"enable":true,"json":true};"# + "\n")
            _ = await client.line()
            _ = await client.line()
        }
        let fifth = try LineClient(unixPath: harness.socketPath)
        #expect(Self.isClosed(fifth, within: 5))
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.evicted == 1 && clients.refusedAtCap == 1 && clients.connections == 3)
        await harness.stop()
    }

    @Test(
        "at a cap, a watcher sent nothing and asking nothing for its idle timeout (a poller, a watcher of reports that never come) makes room, though the sweep never closes it; one sent reports is never taken",
        arguments: [#"?WATCH={"enable":true,"json":false};"#, #"?WATCH={"enable":true,"json":false,"pps":true};"#])
    func quietWatchersMakeRoom(watch: String) async throws {
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"],
            limits: SessionLimits(idleTimeout: .seconds(1), network: ConnectionCap(connections: 4, perListener: 2)), tcp: true)
        // No time service: PPS reports never come.
        let poller = try await harness.client(watching: watch, tcp: true)
        let watcher = try await harness.client(tcp: true)
        // Reports keep coming to the other watcher.
        let provider = harness.providers[0]
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .activated)))
        let reporting = Task {
            while !Task.isCancelled {
                provider.yield(.fix(ServerTests.fix))
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { reporting.cancel() }
        try await Task.sleep(for: .milliseconds(1500))
        #expect(!Self.isClosed(poller, within: 0.2), "the sweep closed a poller")
        // The listener is full: the poller, quiet for its idle timeout, makes room.
        let third = try LineClient(tcpPort: try #require(harness.server.tcpPort))
        #expect(await third.line()?.contains(#""class":"VERSION""#) == true)
        #expect(Self.isClosed(poller, within: 5))
        #expect(!Self.isClosed(watcher, within: 0.2))
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.evicted == 1 && clients.refusedAtCap == 0)
        await harness.stop()
    }

    @Test("a full network side refuses a TCP client, and the Unix socket still takes one: each side has its own cap")
    func localClientsHaveRoomOfTheirOwn() async throws {
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"], limits: SessionLimits(network: ConnectionCap(connections: 2, perListener: 2)), tcp: true)
        // Watchers, so none is idle and none can be closed to make room.
        var network: [LineClient] = []
        for _ in 0..<2 { network.append(try await harness.client(tcp: true)) }
        let refused = try LineClient(tcpPort: try #require(harness.server.tcpPort))
        #expect(Self.isClosed(refused, within: 5))
        let local = try await harness.client()
        local.send("?VERSION;\n")
        #expect(await local.line()?.contains(#""class":"VERSION""#) == true)
        #expect(network.allSatisfy { !Self.isClosed($0, within: 0.1) })
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.refusedAtCap == 1 && clients.evicted == 0 && clients.connections == 3)
        #expect(clients.network == .init(connections: 2, cap: 2, perListener: 2))
        #expect(clients.local.connections == 1 && clients.local.cap == 192)
        await harness.stop()
    }

    @Test("a TCP connection has keepalive's timer running, so a peer that vanished while nothing is sent to it is found gone")
    func networkConnectionsKeepAlive() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"], tcp: true)
        let port = try #require(harness.server.tcpPort)
        let watcher = try await harness.client(tcp: true)
        // Keepalive's timer runs while nothing is unacknowledged (a retransmission timer
        // stands in for it until the client's acknowledgement of its banner comes).
        try withExtendedLifetime(watcher) {
            try waitUntil("the server's socket has keepalive's timer") { TCPTable.timersOfEstablished(localPort: port) == [2] }
        }
        await harness.stop()
    }

    @Test("a client that watches nothing and asks nothing is closed after the idle timeout; a watcher, a poller that enabled a WATCH streaming nothing (as gpsd's watchers) and a client that asks stay")
    func idleClientsAreClosed() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"], limits: SessionLimits(idleTimeout: .seconds(1)))
        let idle = try await harness.client(watching: nil)
        // Enabled, streaming nothing (no json, nmea, raw or pps): a poller, which gpsd
        // never closes for its silence.
        let poller = try await harness.client(watching: #"?WATCH={"enable":true};"#)
        let watcher = try await harness.client()
        let asking = try await harness.client(watching: nil)
        // Past the idle timeout (15 rounds, each of at least one 100 ms poll for the poller's
        // close), the client that asks asking on.
        var idleClosed = false, pollerClosed = false
        for _ in 0..<15 {
            asking.send("?VERSION;\n")
            #expect(await asking.line()?.contains(#""class":"VERSION""#) == true)
            idleClosed = idleClosed || Self.isClosed(idle, within: 0.06)
            pollerClosed = pollerClosed || Self.isClosed(poller, within: 0.06)
        }
        #expect(idleClosed, "the idle client was kept")
        #expect(!pollerClosed, "a poller that enabled a WATCH was closed for its silence")
        #expect(!Self.isClosed(watcher, within: 0.2) && !Self.isClosed(asking, within: 0.2))
        poller.send("?POLL;\n")
        #expect(await poller.line()?.contains(#""class":"POLL""#) == true)
        #expect(try #require(await harness.server.snapshot()?.clients).idleClosed == 1)
        await harness.stop()
    }

    @Test("while every connection watches, no sweep for idle ones is planned (no wake-up); one that stops watching is closed after its idle timeout")
    func noSweepWhileEveryConnectionWatches() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"], limits: SessionLimits(idleTimeout: .seconds(1)))
        let hub = harness.server.hub
        let plannedSweep = { try await hub.eventLoop.submit { hub.sessionTable.plannedSweep }.get() }
        let staying = try await harness.client()
        let leaving = try await harness.client()
        // The sweep planned when they came finds both watching, and plans none after it.
        var planned = try await plannedSweep()
        for _ in 0..<50 where planned != nil {
            try await Task.sleep(for: .milliseconds(100))
            planned = try await plannedSweep()
        }
        #expect(planned == nil, "a sweep is planned while every connection watches")
        leaving.send(#"?WATCH={"enable":false};"# + "\n")
        // gpsd's answer: DEVICES, then WATCH.
        #expect(await leaving.line()?.contains(#""class":"DEVICES""#) == true)
        #expect(await leaving.line()?.contains(#""class":"WATCH""#) == true)
        #expect(try await plannedSweep() != nil)
        // Not at once: after its idle timeout (1 s) from the WATCH.
        #expect(!Self.isClosed(leaving, within: 0.5), "the connection that stopped watching was closed before its timeout")
        #expect(Self.isClosed(leaving, within: 5), "the connection that stopped watching was kept")
        #expect(!Self.isClosed(staying, within: 0.2))
        #expect(try #require(await harness.server.snapshot()?.clients).idleClosed == 1)
        #expect(try await plannedSweep() == nil)
        await harness.stop()
    }

    @Test("HTTP: requests pipelined in one write are answered one by one, in order, /metrics answered later included, an event stream last")
    func pipelinedRequestsInOrder() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let content = WebContent(metrics: {
            try? await Task.sleep(for: .milliseconds(300))
            return Array("# TYPE scrapes counter\nscrapes 1\n".utf8)
        })
        let port = try await harness.server.startHTTP(host: "127.0.0.1", port: 0, content: content)
        let client = try LineClient(tcpPort: port)
        client.send(["/metrics", "/api/v1/fix", "/metrics", "/events"].map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
        let lines = try #require(client.readLines(until: { $0.lowercased().hasPrefix("content-type: text/event-stream") }))
        let types = lines.filter { $0.lowercased().hasPrefix("content-type:") }.map { $0.lowercased() }
        #expect(types == [
            "content-type: text/plain; version=0.0.4; charset=utf-8", "content-type: application/json",
            "content-type: text/plain; version=0.0.4; charset=utf-8", "content-type: text/event-stream",
        ])
        // Requests pipelined after /events are not answered once the connection streams
        // (its HTTP encoder is gone), and the server serves on.
        let streaming = try LineClient(tcpPort: port)
        streaming.send(["/metrics", "/events", "/", "/events"].map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
        let head = try #require(streaming.readLines(until: { $0.lowercased().hasPrefix("content-type: text/event-stream") }))
        #expect(head.filter { $0.hasPrefix("HTTP/1.1") } == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"])
        #expect(streaming.readLines(until: { $0.hasPrefix("HTTP/") }, timeout: 1) == nil, "an answer after the stream began")
        let next = try LineClient(tcpPort: port)
        next.send("GET /api/v1/fix HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(next.readLine() == "HTTP/1.1 200 OK")
        await harness.stop()
    }

    @Test("HTTP: a request head that does not arrive within the idle timeout loses its connection")
    func slowRequestHead() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"], limits: SessionLimits(httpIdleTimeout: .seconds(1)))
        let port = try await harness.server.startHTTP(host: "127.0.0.1", port: 0, content: WebContent())
        let client = try LineClient(tcpPort: port)
        client.send("GET / HTTP/1.1\r\nHost:")
        #expect(Self.isClosed(client, within: 5))
        await harness.stop()
    }

    @Test("HTTP: a request to change protocols, which ends SwiftNIO's parsing, is answered and its connection closed, bytes sent after it or not")
    func protocolSwitch() async throws {
        // Idle connections are kept past the test's waits: only the answer's close ends these.
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"], limits: SessionLimits(httpIdleTimeout: .seconds(600)))
        let port = try await harness.server.startHTTP(host: "127.0.0.1", port: 0, content: WebContent())
        let upgrade = "GET /api/v1/fix HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
        let answered = try LineClient(tcpPort: port)
        answered.send(upgrade)
        let head = try #require(answered.readLines(until: { $0.isEmpty }))
        #expect(head.first == "HTTP/1.1 200 OK" && head.contains { $0.lowercased() == "connection: close" }, "\(head)")
        #expect(Self.isClosed(answered, within: 10))
        // What follows such a request no parser takes: it would pile up for as long as
        // the connection stayed open.
        for request in [upgrade, "CONNECT x:1 HTTP/1.1\r\nHost: x\r\n\r\n"] {
            let flooding = try LineClient(tcpPort: port)
            flooding.send(request + String(repeating: "u", count: 4 * HTTPRequestHandler.maximumUnparsedBytes))
            #expect(Self.isClosed(flooding, within: 10), "\(request)")
        }
        await harness.stop()
    }

    @Test("HTTP: bytes the decoder holds unparsed (after a request to change protocols, before its answer) are refused past their bound")
    func unparsedBytesBounded() throws {
        let channel = EmbeddedChannel()
        for (name, handler) in HTTPRequestHandler.serverPipeline() { try channel.pipeline.syncOperations.addHandler(handler, name: name) }
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"))
        let half = ByteBuffer(repeating: UInt8(ascii: "u"), count: HTTPRequestHandler.maximumUnparsedBytes / 2)
        try channel.writeInbound(half)
        #expect(throws: ByteToMessageDecoderError.PayloadTooLargeError.self) {
            for _ in 0..<2 { try channel.writeInbound(half) }
        }
        _ = try? channel.finish()
    }

    @Test("HTTP: a client sending requests without reading is read no further than it reads, and is cut off after the stall timeout")
    func requestFloodWithoutReading() async throws {
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"], limits: SessionLimits(stallTimeout: .seconds(1), httpIdleTimeout: .seconds(60)))
        let port = try await harness.server.startHTTP(host: "127.0.0.1", port: 0, content: WebContent())
        let client = try LineClient(tcpPort: port)
        let requests = Array(String(repeating: "GET / HTTP/1.1\r\nHost: x\r\n\r\n", count: 500).utf8)
        var sent = 0
        var cut = false
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let count = requests.withUnsafeBytes {
                send(client.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if count > 0 { sent += count } else if count < 0, errno != EAGAIN, errno != EINTR { cut = true; break }
            usleep(10_000)
        }
        #expect(cut, "the flooder was never cut off, after \(sent) bytes")
        #expect(try #require(await harness.server.snapshot()?.clients).cutOff == 1)
        await harness.stop()
    }
}
