import Foundation
import GPSDProtocol
import GPSFix
import GPSFixDevices
import GPSFixServer
import Logging
import NIOPosix
import NMEA
import Synchronization
import Testing
import TestSupport

/// A location provider the test drives by hand: what it yields, the server publishes,
/// delivered the way ``NMEALocationProvider`` delivers, one `deliver` at a time from the
/// provider's own task (off the server's loop).
struct MockLocationProvider: LocationProvider {
    let device: String
    let canWait: Bool
    private let stream: AsyncStream<LocationUpdate>
    private let continuation: AsyncStream<LocationUpdate>.Continuation

    init(device: String, canWait: Bool = false) {
        self.device = device
        self.canWait = canWait
        (stream, continuation) = AsyncStream.makeStream(of: LocationUpdate.self)
    }

    /// Delivers what the test yields (a mock serves a single consumer).
    func run(delivering deliver: @escaping @Sendable ([LocationUpdate]) -> Void) async {
        for await update in stream { deliver([update]) }
    }

    func yield(_ update: LocationUpdate) { continuation.yield(update) }
    func finish() { continuation.finish() }
}

/// A count shared across threads.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .releasing) }
    /// Sets the count, from the one thread that keeps it.
    func set(_ value: Int) { count.store(value, ordering: .releasing) }
}

/// A server on a temporary socket, serving mock providers, shut down by `stop()`.
final class ServerUnderTest: Sendable {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-srv-\(UUID().uuidString.prefix(8))")
    let server: GPSFixServer
    let providers: [MockLocationProvider]
    private let serving: Task<Void, Never>

    var socketPath: String { folder.appendingPathComponent("s.sock").path }

    /// Serves mocks. With `tcp`, on a free loopback TCP port too (``GPSFixServer/tcpPort``).
    init(
        devices: [String], canWait: Bool = false,
        limits: SessionLimits = SessionLimits(), tcp: Bool = false
    ) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        server = GPSFixServer(
            configuration: .init(
                socketPath: folder.appendingPathComponent("s.sock").path, tcpHost: tcp ? "127.0.0.1" : nil, tcpPort: tcp ? 0 : nil,
                release: "test", limits: limits),
            group: MultiThreadedEventLoopGroup.singleton, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await server.start()
        let providers = devices.map { MockLocationProvider(device: $0, canWait: canWait) }
        self.providers = providers
        let server = self.server
        await server.announce(devices: devices)
        serving = Task {
            await withDiscardingTaskGroup { group in
                for provider in providers { group.addTask { await server.serve(provider) } }
            }
        }
    }

    /// A client past the banner, watching when asked to, with the replies to its WATCH read;
    /// over TCP when the harness serves it and `tcp` asks, else the Unix socket.
    func client(watching watch: String? = #"?WATCH={"enable":true,"json":true};"#, tcp: Bool = false) async throws -> LineClient {
        let client = try tcp ? LineClient(tcpPort: try #require(server.tcpPort)) : LineClient(unixPath: socketPath)
        let banner = await client.line()
        #expect(banner?.contains(#""class":"VERSION""#) == true)
        if let watch {
            client.send(watch + "\n")
            #expect(await client.line()?.contains(#""class":"DEVICES""#) == true)
            #expect(await client.line()?.contains(#""class":"WATCH""#) == true)
        }
        return client
    }

    func stop() async {
        for provider in providers { provider.finish() }
        await serving.value
        await server.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// The server (the consumer of ``LocationProvider``) against mock providers: no device,
/// no parser, exactly the updates the test chooses.
@Suite("Server against mock providers")
struct ServerTests {
    static let fix: Fix = {
        var fix = Fix()
        fix.time = GPSTime(year: 2026, month: 11, day: 22, time: NMEATime(hour: 6, minute: 15, second: 2, nanosecond: 0))
        fix.mode = .threeDimensional
        fix.status = .gps
        fix.latitude = 51.477_928_5
        fix.longitude = -0.001_545
        fix.altitudeMSL = 45.9
        fix.speed = 0.13
        fix.track = 271.2
        return fix
    }()

    static let sky: SkyView = {
        var sky = SkyView()
        sky.time = fix.time
        sky.hdop = 0.9
        sky.satellites = [
            Satellite(identity: SatelliteIdentity(prn: 7, gnss: .gps, svid: 7), elevation: 45, azimuth: 212, snr: 33, used: true),
            Satellite(identity: SatelliteIdentity(prn: 70, gnss: .glonass, svid: 6), elevation: 12, azimuth: 40, snr: nil),
        ]
        return sky
    }()

    /// The line a report's bytes make on the wire, without CR LF.
    static func line(_ report: [UInt8]) -> String {
        String(decoding: report, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    @Test("a watcher gets DEVICE on activation, then exactly the TPV and SKY GPSDProtocol encodes")
    func publishesWhatTheProviderYields() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let client = try await harness.client()

        provider.yield(.device(DeviceEvent(device: provider.device, kind: .activated)))
        let device = try #require(await client.line())
        #expect(device.contains(#""class":"DEVICE","path":"/dev/mock0""#) && device.contains(#""activated":""#), "\(device)")
        #expect(device.contains(#""online":true"#))

        provider.yield(.fix(Self.fix))
        provider.yield(.sky(Self.sky))
        #expect(await client.line() == Self.line(GPSDReport.tpv(Self.fix, device: provider.device)))
        #expect(await client.line() == Self.line(GPSDReport.sky(Self.sky, device: provider.device)))
        await harness.stop()
    }

    @Test("a lost device reaches watchers as a DEVICE report that is no longer online; recovery as one that is")
    func deviceEvents() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let client = try await harness.client()
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .activated)))
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .lost(reason: "unplugged"))))
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .recovered)))
        let reports = [await client.line(), await client.line(), await client.line()].map { $0 ?? "" }
        #expect(reports.map { $0.contains(#""online":true"#) } == [true, false, true], "\(reports)")
        #expect(reports.allSatisfy { $0.contains(#""class":"DEVICE""#) })
        await harness.stop()
    }

    @Test("POLL gives each device's latest fix and sky at the time it answers, before any fix too; a watcher filtered to one device hears, and polls, only that one")
    func pollAndDeviceFilter() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0", "/dev/mock1"])
        let (first, second) = (harness.providers[0], harness.providers[1])
        /// The POLL `client` is answered next, as an object, and its time against this machine's clock.
        func polled(_ client: LineClient) async throws -> (object: [String: Any], seconds: Double) {
            client.send("?POLL;\n")
            var line = await client.line()
            while let text = line, !text.contains(#""class":"POLL""#) { line = await client.line() }
            let data = try #require(line?.data(using: .utf8))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let text = try #require(object["time"] as? String)
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let time = try #require(format.date(from: text))
            return (object, abs(time.timeIntervalSinceNow))
        }
        let early = try await polled(try await harness.client(watching: nil))
        #expect(early.seconds < 60, "a POLL before any fix is at the time it answers")
        #expect((early.object["tpv"] as? [Any])?.isEmpty == true)
        let filtered = try await harness.client(watching: #"?WATCH={"enable":true,"json":true,"device":"/dev/mock1"};"#)
        var older = Self.fix
        older.latitude = 10
        first.yield(.fix(older))
        first.yield(.fix(Self.fix))
        second.yield(.fix(older))
        #expect(await filtered.line() == Self.line(GPSDReport.tpv(older, device: second.device)))

        let poller = try await harness.client(watching: nil)
        poller.send("?POLL;\n")
        let poll = try #require(await poller.line()?.data(using: .utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: poll) as? [String: Any])
        let tpvs = try #require(object["tpv"] as? [[String: Any]])
        #expect(object["class"] as? String == "POLL")
        #expect(tpvs.count == 2)
        #expect(tpvs.first { $0["device"] as? String == "/dev/mock0" }?["lat"] as? Double == Self.fix.latitude)
        #expect(tpvs.first { $0["device"] as? String == "/dev/mock1" }?["lat"] as? Double == 10)
        let own = try await polled(filtered)
        #expect((own.object["tpv"] as? [[String: Any]])?.compactMap { $0["device"] as? String } == ["/dev/mock1"])
        #expect(own.seconds < 60)
        await harness.stop()
    }

    @Test("a later SKY of a cycle that leaves out what an earlier one said goes out whole, as libgps 3.22 takes it, and POLL gives the whole view")
    func laterSkyGoesOutWhole() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let watcher = try await harness.client()
        // The view, then the fix, then the cycle's own DOPs (as a GSA after the GSV groups,
        // or a u-blox epoch's end): without the satellites, nor the HDOP the view had.
        var later = SkyView()
        later.time = Self.fix.time
        later.pdop = 1.6
        later.satellitesReportedEarlier = true
        provider.yield(.sky(Self.sky))
        provider.yield(.fix(Self.fix))
        provider.yield(.sky(later))
        #expect(await watcher.line() == Self.line(GPSDReport.sky(Self.sky, device: provider.device)))
        #expect(await watcher.line() == Self.line(GPSDReport.tpv(Self.fix, device: provider.device)))
        let broadcast = try #require(await watcher.line())
        let whole = try #require(try JSONSerialization.jsonObject(with: Data(broadcast.utf8)) as? [String: Any])
        #expect(whole["pdop"] as? Double == 1.6 && whole["hdop"] as? Double == 0.9, "\(broadcast)")
        #expect((whole["satellites"] as? [[String: Any]])?.compactMap { $0["PRN"] as? Int } == [7, 70], "\(broadcast)")

        let poller = try await harness.client(watching: nil)
        poller.send("?POLL;\n")
        let poll = try #require(await poller.line()?.data(using: .utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: poll) as? [String: Any])
        let sky = try #require((object["sky"] as? [[String: Any]])?.first)
        #expect(sky["pdop"] as? Double == 1.6 && sky["nSat"] as? Int == 2)
        #expect((sky["satellites"] as? [[String: Any]])?.compactMap { $0["PRN"] as? Int } == [7, 70])
        await harness.stop()
    }

    @Test("an epoch's later SKY without a view of its own (NAV-SAT once a second at 10 Hz) carries the view of up to a second before; an older one is not brought back")
    func laterSkyTakesARecentView() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let watcher = try await harness.client()
        func later(afterMilliseconds milliseconds: Int) -> SkyView {
            var later = SkyView()
            later.time = GPSTime(millisecondsSince1970: Int(Self.fix.time!.secondsSince1970 * 1000) + milliseconds)
            later.pdop = 1.6
            later.satellitesReportedEarlier = true
            return later
        }
        provider.yield(.sky(Self.sky))
        provider.yield(.sky(later(afterMilliseconds: 200)))
        provider.yield(.sky(later(afterMilliseconds: 3200)))
        _ = await watcher.line()
        let recent = try #require(await watcher.line()), old = try #require(await watcher.line())
        #expect(recent.contains(#""satellites":[{"PRN":7"#) && recent.contains(#""hdop":0.90"#), "\(recent)")
        #expect(!old.contains("satellites") && !old.contains("hdop"), "\(old)")
        await harness.stop()
    }

    @Test("the device counters a provider reports are the server's counters for that device")
    func counters() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        var counters = DeviceCounters()
        counters.framing.sentences = 1200
        counters.framing[.badChecksum] = 3
        counters.assembly.cycles = 240
        counters.reconnects = 2
        harness.providers[0].yield(.counters(counters))
        // The server takes the update in its own time: wait for it, for a while.
        var reported = await harness.server.deviceCounters()
        for _ in 0..<500 where reported.first?.counters != counters {
            try await Task.sleep(for: .milliseconds(10))
            reported = await harness.server.deviceCounters()
        }
        #expect(reported.map(\.device) == ["/dev/mock0"])
        #expect(reported.first?.counters == counters)
        #expect(reported.first?.counters.summary.contains("rejected 3 (bad-checksum 3)") == true)
        await harness.stop()
    }
}
