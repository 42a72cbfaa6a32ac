import Foundation
import GPSFix
import GPSFixServer
import Logging
import NMEA
import TestSupport
import Testing

/// A location provider that yields what the test scripts, when the test says so.
final class MockProvider: LocationProvider, @unchecked Sendable {
    let device = "/dev/mock0"
    private let (stream, continuation) = AsyncStream.makeStream(of: LocationUpdate.self)

    func updates() -> AsyncStream<LocationUpdate> { stream }
    func send(_ update: LocationUpdate) { continuation.yield(update) }
}

// Serialized: the test's client blocks a thread of the small cooperative pool while it reads.
@Suite("Server against a mock provider", .serialized)
struct ServerTests {
    static var fix: Fix {
        var fix = Fix()
        fix.mode = .threeDimensional
        fix.time = GPSTime(year: 2026, month: 11, day: 22, time: NMEATime(hour: 5, minute: 30, second: 1))
        fix.latitude = 47.5
        fix.longitude = -122.25
        fix.altitudeMSL = 12.5
        return fix
    }

    func withServer(_ body: (GPSFixServer, MockProvider, String) async throws -> Void) async throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("gpsfix-srv-\(UUID().uuidString.prefix(8)).sock").path
        let server = GPSFixServer(configuration: .init(socketPath: socket, release: "test"), logger: Logger(label: "test"))
        try await server.start()
        let provider = MockProvider()
        let serving = Task { await server.serve(provider) }
        // Serving registers the device first; wait for it to be listed.
        let probe = try LineClient(unixPath: socket)
        _ = probe.readLine()
        for _ in 0..<100 {
            probe.send("?DEVICES;\n")
            if probe.readLine()?.contains("/dev/mock0") == true { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await body(server, provider, socket)
        serving.cancel()
        await server.shutdown()
    }

    @Test("a watcher gets each update as the report gpsd would send, device events included")
    func watcherGetsReports() async throws {
        try await withServer { _, provider, socket in
            let client = try LineClient(unixPath: socket)
            #expect(client.readLine()?.contains(#""class":"VERSION","release":"test""#) == true)
            client.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
            #expect(client.readLine()?.contains(#""class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/mock0""#) == true)
            #expect(client.readLine()?.contains(#""class":"WATCH","enable":true,"json":true"#) == true)
            provider.send(.device(DeviceEvent(device: "/dev/mock0", kind: .activated)))
            provider.send(.fix(Self.fix))
            provider.send(.sentence(Array("$GPGGA,1*7F".utf8)))  // not asked for: not sent
            provider.send(.device(DeviceEvent(device: "/dev/mock0", kind: .lost(reason: "unplugged"))))
            #expect(client.readLine()?.contains(#""online":true"#) == true)
            #expect(client.readLine() == #"{"class":"TPV","device":"/dev/mock0","mode":3,"time":"2026-11-22T05:30:01.000Z","lat":47.500000000,"lon":-122.250000000,"altMSL":12.5000,"alt":12.5000}"#)
            #expect(client.readLine()?.contains(#""online":false"#) == true)
        }
    }

    @Test("POLL returns the latest fix; a raw watcher gets sentences, not reports")
    func pollAndRaw() async throws {
        try await withServer { _, provider, socket in
            let raw = try LineClient(unixPath: socket)
            _ = raw.readLine()
            raw.send(#"?WATCH={"enable":true,"nmea":true}"# + "\n")
            _ = raw.readLines(until: { $0.contains("WATCH") })
            provider.send(.fix(Self.fix))
            provider.send(.sentence(Array("$GPZDA,081411.000,26,05,2014,,*5D".utf8)))
            #expect(raw.readLine() == "$GPZDA,081411.000,26,05,2014,,*5D")

            let poller = try LineClient(unixPath: socket)
            _ = poller.readLine()
            poller.send("?POLL;\n")
            let poll = try #require(poller.readLine())
            #expect(poll.hasPrefix(#"{"class":"POLL","time":"2026-11-22T05:30:01.000Z","active":0,"tpv":[{"class":"TPV","device":"/dev/mock0""#))
        }
    }

    @Test("the status line summarises the latest fix and sky and the clients")
    func status() async throws {
        try await withServer { server, provider, socket in
            let client = try LineClient(unixPath: socket)
            _ = client.readLine()
            var sky = SkyView()
            sky.satellites = (1...5).map { Satellite(identity: SatelliteIdentity(prn: $0, gnss: .gps, svid: $0), snr: 30, used: $0 <= 3) }
            provider.send(.fix(Self.fix))
            provider.send(.sky(sky))
            var status = ""
            for _ in 0..<100 where status != "3D fix, 3/5 satellites, 2 clients" {
                try await Task.sleep(for: .milliseconds(10))
                status = await server.status()
            }
            #expect(status == "3D fix, 3/5 satellites, 2 clients")  // the probe and this client
        }
    }
}
