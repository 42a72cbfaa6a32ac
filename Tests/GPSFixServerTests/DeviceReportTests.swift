import Foundation
import GPSDProtocol
import GPSFix
@testable import GPSFixServer
import Logging
import NIOCore
import NIOPosix
import NMEA
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// What the server says of devices (DEVICE facts, status), how it passes raw data on, and
/// how it answers the service manager.
@Suite("Device reports and raw data")
struct DeviceReportTests {
    /// The DEVICE object of a `?DEVICE;` answer, parsed.
    static func device(from client: LineClient, path: String) async throws -> [String: Any] {
        client.send(#"?DEVICE={"path":"\#(path)"};"# + "\n")
        return try await object(from: client)
    }

    /// The next line `client` reads, parsed as a JSON object.
    static func object(from client: LineClient) async throws -> [String: Any] {
        let line = try #require(await client.line())
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    static func fix(second: UInt8, tenths: UInt32 = 0) -> Fix {
        var fix = ServerTests.fix
        fix.time = GPSTime(year: 2026, month: 11, day: 22, time: NMEATime(hour: 6, minute: 15, second: second, nanosecond: tenths * 100_000_000))
        return fix
    }

    @Test("DEVICE states only what is known: nothing learned before data; then the driver, the line as set, the measured cycle")
    func deviceFacts() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0", "gpsd://localhost:2947"])
        let (serial, upstream) = (harness.providers[0], harness.providers[1])
        let client = try await harness.client()
        let before = try await Self.device(from: client, path: serial.device)
        #expect(before["driver"] == nil && before["bps"] == nil && before["native"] == nil && before["cycle"] == nil, "\(before)")
        #expect(before["parity"] == nil && before["stopbits"] == nil)

        serial.yield(.device(DeviceEvent(device: serial.device, kind: .activated, line: SerialLine(bps: 4800, parity: "E", stopBits: 2))))
        upstream.yield(.device(DeviceEvent(device: upstream.device, kind: .activated)))
        // A 10 Hz receiver: fixes a tenth of a second apart.
        for tenth in 0..<4 { serial.yield(.fix(Self.fix(second: 2, tenths: UInt32(tenth)))) }
        let watched = await client.line()  // the DEVICE report of the activation
        #expect(watched?.contains(#""class":"DEVICE""#) == true)
        for _ in 0..<5 { _ = await client.line() }  // the other activation and the TPVs

        let after = try await Self.device(from: client, path: serial.device)
        #expect(after["driver"] as? String == "NMEA0183")
        #expect(after["native"] as? Int == 0)
        #expect(after["bps"] as? Int == 4800 && after["parity"] as? String == "E" && after["stopbits"] as? Int == 2)
        #expect(after["cycle"] as? Double == 0.1, "\(after)")
        let relayed = try await Self.device(from: client, path: upstream.device)
        #expect(relayed["driver"] as? String == "NMEA0183")
        #expect(relayed["bps"] == nil && relayed["parity"] == nil && relayed["cycle"] == nil, "\(relayed)")
        await harness.stop()
    }

    @Test("native is 0 while the device is read in NMEA, 1 once a driver reads it in its binary protocol (gpsd: a u-blox in UBX)")
    func nativeMode() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let client = try await harness.client()
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .activated, receiver: ReceiverIdentity(driver: "NMEA0183"))))
        #expect(try await Self.object(from: client)["native"] as? Int == 0)
        let binary = ReceiverIdentity(driver: "u-blox", subtype: "SW ROM CORE 3.01 (107888),HW 00080000", readsBinary: true)
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .identified, receiver: binary)))
        let identified = try await Self.object(from: client)
        #expect(identified["driver"] as? String == "u-blox" && identified["native"] as? Int == 1, "\(identified)")
        #expect(try await Self.device(from: client, path: provider.device)["native"] as? Int == 1)
        await harness.stop()
    }

    @Test("flags is 1 once the device sends data, before any fix (gpsd: GPS data seen), 0 before")
    func flagsOnData() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let client = try await harness.client()
        #expect(try await Self.device(from: client, path: provider.device)["flags"] as? Int == 0)
        // A receiver talking, indoors: cycles without a fix.
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .activated)))
        var noFix = Fix()
        noFix.time = Self.fix(second: 3).time
        noFix.mode = .noFix
        provider.yield(.fix(noFix))
        for _ in 0..<2 { _ = await client.line() }  // the DEVICE report of the activation, the TPV
        #expect(try await Self.device(from: client, path: provider.device)["flags"] as? Int == 1)
        await harness.stop()
    }

    @Test("a device lost or ended is announced with activated 0, as gpsd deactivates it, and answered without one; silent, it keeps its time; back, a new one")
    func deactivatedDevice() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let client = try await harness.client()
        func announce(_ kinds: [DeviceEvent.Kind]) async throws -> [Any?] {
            for kind in kinds { provider.yield(.device(DeviceEvent(device: provider.device, kind: kind))) }
            var activations: [Any?] = []
            for _ in kinds { activations.append(try await Self.object(from: client)["activated"]) }
            return activations
        }
        let first = try await announce([.activated, .silent, .lost(reason: "unplugged")])
        #expect(first[0] is String && first[1] as? String == first[0] as? String, "\(first)")
        #expect(first[2] as? Int == 0, "\(first)")
        let closed = try await Self.device(from: client, path: provider.device)
        #expect(closed["activated"] == nil && closed["online"] as? Bool == false, "\(closed)")
        // The activation time counts milliseconds.
        try await Task.sleep(for: .milliseconds(5))
        let back = try await announce([.recovered, .ended])
        #expect(back[0] is String && back[0] as? String != first[0] as? String, "\(back) after \(first)")
        #expect(back[1] as? Int == 0, "\(back)")
        client.send("?DEVICES;\n")
        let devices = await client.line()
        #expect(devices?.contains(#""class":"DEVICES""#) == true && devices?.contains(#""activated""#) == false, "\(devices ?? "nothing")")
        await harness.stop()
    }

    @Test("subtype and subtype1 longer than libgps 3.22's 128 bytes are cut to 127 at a character's end, as gpsd cuts them: libgps would refuse the DEVICES")
    func subtypesCut() throws {
        var device = DeviceInfo(path: "/dev/ttyACM0")
        device.subtype = "ROM CORE 3.01 (107888)," + String(repeating: "é", count: 60)
        device.subtype1 = (1...12).map { "EXTENSION \($0)=\(String(repeating: "X", count: 8))" }.joined(separator: ",")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(SessionReport.device(device))) as? [String: Any])
        let subtype = try #require(report["subtype"] as? String), subtype1 = try #require(report["subtype1"] as? String)
        #expect(subtype.utf8.count <= 127 && subtype.utf8.count >= 126 && device.subtype!.hasPrefix(subtype))
        #expect(subtype1.utf8.count == 127 && device.subtype1!.hasPrefix(subtype1))
    }

    @Test("a bare ?DEVICE; is answered with a DEVICE for every device, as gpsd answers it")
    func bareDeviceRequest() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0", "/dev/mock1"])
        let client = try await harness.client(watching: nil)
        client.send("?DEVICE;\n")
        let answers = [await client.line(), await client.line(timeout: 1)]
        #expect(answers[0]?.contains(#""class":"DEVICE","path":"/dev/mock0""#) == true, "\(answers)")
        #expect(answers[1]?.contains(#""class":"DEVICE","path":"/dev/mock1""#) == true, "\(answers)")
        await harness.stop()
    }

    @Test("?DEVICE naming the device's own settings (a client sending back the DEVICE it read) is answered with the DEVICE; another value is refused")
    func deviceSettingsUnchanged() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        provider.yield(.device(DeviceEvent(device: provider.device, kind: .activated, line: SerialLine(bps: 38400))))
        let client = try await harness.client(watching: nil)
        // The activation reaches the hub on its event loop: the line is known once DEVICE says it.
        for _ in 0..<100 where try await Self.device(from: client, path: provider.device)["bps"] == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        client.send(#"?DEVICE={"path":"/dev/mock0","bps":38400,"parity":"N","stopbits":1};"# + "\n")
        let same = try #require(await client.line())
        #expect(same.hasPrefix(#"{"class":"DEVICE","path":"/dev/mock0""#) && same.contains(#""bps":38400"#), "\(same)")
        client.send(#"?DEVICE={"path":"/dev/mock0","bps":9600};"# + "\n")
        let other = try #require(await client.line())
        #expect(other.hasPrefix(#"{"class":"ERROR""#), "\(other)")
        await harness.stop()
    }

    @Test("?DEVICE with hexdata (ubxtool through gpsd) is refused with an ERROR that names it")
    func hexdataRefused() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let client = try await harness.client(watching: nil)
        // ubxtool's MON-VER poll, as it sends it through gpsd.
        client.send(#"?DEVICE={"path":"/dev/mock0","hexdata":"b5620a0400000e34"}"# + "\n")
        let answer = await client.line()
        #expect(answer?.contains(#""class":"ERROR""#) == true && answer?.contains("hexdata") == true, "\(answer ?? "nothing")")
        await harness.stop()
    }

    @Test("a device that sends again after being silent is announced online at once")
    func resumedDeviceIsOnline() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let client = try await harness.client()
        for kind in [DeviceEvent.Kind.activated, .silent, .resumed] {
            provider.yield(.device(DeviceEvent(device: provider.device, kind: kind)))
        }
        let reports = [await client.line(), await client.line(), await client.line()].map { $0 ?? "" }
        #expect(reports.map { $0.contains(#""online":true"#) } == [true, false, true], "\(reports)")
        client.send("?DEVICES;\n")
        #expect(await client.line()?.contains(#""online":true"#) == true)
        await harness.stop()
    }

    @Test("raw:2 gets the device's bytes verbatim, noise included; nmea gets the accepted sentences; each turns its demand on")
    func rawLevels() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let provider = harness.providers[0]
        let raw = try await harness.client(watching: #"?WATCH={"raw":2}"#)
        let nmea = try await harness.client(watching: #"?WATCH={"nmea":true}"#)
        let demand = harness.server.sentenceDemand
        #expect(demand.isWanted && demand.areBytesWanted)

        let sentence = "$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*5B"
        let chunk = Array("\u{1}\u{2}noise \(sentence)\r\n".utf8)
        provider.yield(.bytes(chunk))
        provider.yield(.sentence(Array(sentence.utf8)))
        #expect(await raw.line() == "\u{1}\u{2}noise \(sentence)")
        #expect(await nmea.line() == sentence)
        // Each sees only its own kind: nothing else is waiting for either.
        #expect(await raw.line(timeout: 0.3) == nil)
        #expect(await nmea.line(timeout: 0.3) == nil)

        raw.send(#"?WATCH={"enable":false}"# + "\n")
        for _ in 0..<2 { _ = await raw.line() }  // DEVICES, WATCH
        #expect(demand.isWanted && !demand.areBytesWanted)
        await harness.stop()
    }

    @Test("the status names every device, not the first alone")
    func statusOfEveryDevice() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0", "/dev/mock1"])
        let (first, second) = (harness.providers[0], harness.providers[1])
        var noFix = Fix()
        noFix.mode = .noFix
        first.yield(.fix(ServerTests.fix))
        first.yield(.sky(ServerTests.sky))
        second.yield(.fix(noFix))
        var status = await harness.server.status()
        for _ in 0..<500 where !status.contains("/dev/mock1 no fix") {
            try await Task.sleep(for: .milliseconds(10))
            status = await harness.server.status()
        }
        #expect(status == "/dev/mock0 3D fix, 1/2 satellites; /dev/mock1 no fix; 0 clients")
        await harness.stop()
    }

    @Test("the watchdog's check answers false by its deadline while the event loop is blocked", .timeLimit(.minutes(1)))
    func blockedLoopIsUnresponsive() async throws {
        let harness = try await ServerUnderTest(devices: [])
        #expect(await harness.server.isResponsive(within: .seconds(5)))
        let release = Atomic<Bool>(false)
        harness.server.eventLoop.execute {
            while !release.load(ordering: .relaxed) { usleep(1000) }  // a stalled loop
        }
        // The loop stays blocked until the check has answered: it must answer without it.
        #expect(await harness.server.isResponsive(within: .milliseconds(200)) == false)
        release.store(true, ordering: .relaxed)
        #expect(await harness.server.isResponsive(within: .seconds(5)))
        await harness.stop()
    }

    @Test("sockets passed by the service manager are served beside the command line's listeners; a passed one for the same path stands in for it")
    func adoptedAndConfiguredListeners() async throws {
        let folder = try makeTemporaryFolder("adopt")
        defer { try? FileManager.default.removeItem(at: folder) }
        let passedPath = folder.appendingPathComponent("passed.sock").path
        let passed = try Self.listeningUnixSocket(at: passedPath)
        let server = GPSFixServer(
            configuration: .init(
                socketPath: passedPath, tcpHost: "127.0.0.1", tcpPort: 0, release: "test", adoptedSockets: [passed]),
            group: MultiThreadedEventLoopGroup.singleton, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await server.start()
        let port = try #require(server.tcpPort)
        let overUnix = try LineClient(unixPath: passedPath)
        #expect(await overUnix.line()?.contains(#""class":"VERSION""#) == true)
        let overTCP = try LineClient(tcpPort: port)
        #expect(await overTCP.line()?.contains(#""class":"VERSION""#) == true)
        await server.shutdown()
        // The passed socket's file is the service manager's: the server leaves it.
        #expect(FileManager.default.fileExists(atPath: passedPath))
    }

    /// A listening Unix socket, as systemd passes one.
    static func listeningUnixSocket(at path: String) throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = LineClient.unixAddress(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0, listen(descriptor, 16) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return descriptor
    }
}
