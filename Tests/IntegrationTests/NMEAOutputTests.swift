import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// NMEA 0183 out, read by plain sockets and by a real gpsd.
@Suite("gpsfixd's NMEA 0183 out", .serialized)
struct NMEAOutputTests {
    static let fixture = "gpsd/haicom-305N.log"

    /// The capture's lines as the replay writes them, CR LF ended, with their places.
    static func payloadLines() throws -> [String: [Int]] {
        let text = try String(contentsOf: Binaries.fixtures.appendingPathComponent(fixture), encoding: .isoLatin1)
        var places: [String: [Int]] = [:]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("#") }
        for (index, line) in lines.enumerated() { places[String(line.hasSuffix("\r") ? line.dropLast() : line), default: []].append(index) }
        return places
    }

    /// Whether `sentence` (without CR LF) ends in a checksum that matches it.
    static func isChecksummed(_ sentence: String) -> Bool {
        let bytes = Array(sentence.utf8)
        guard bytes.count > 4, bytes[bytes.count - 3] == UInt8(ascii: "*"),
            let sum = UInt8(String(decoding: bytes.suffix(2), as: UTF8.self), radix: 16)
        else { return false }
        return bytes.dropFirst().dropLast(3).reduce(0, ^) == sum
    }

    /// Reads raw lines from `client` until `count` or `seconds`.
    static func lines(from client: LineClient, count: Int, seconds: Double = 20) -> [String] {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while lines.count < count, Date() < deadline, let line = client.readLine(timeout: 5) { lines.append(line) }
        return lines
    }

    /// Whether each line follows the one before it in the capture (or the replay looped).
    static func followOneAnother(_ lines: [String], in places: [String: [Int]]) -> Bool {
        var previous: [Int]?
        for line in lines {
            guard let here = places[line] else { return false }
            if let previous, !here.contains(where: { place in previous.contains { place > $0 } }), !here.contains(where: { $0 < 5 }) {
                return false
            }
            previous = here
        }
        return true
    }

    @Test("a plain TCP reader gets the device's sentences byte for byte, checksummed, CR LF, with no greeting; a stalled reader delays nobody")
    func plainReader() throws {
        let port = freePort()
        let daemon = try DaemonUnderTest(fixture: Self.fixture, speed: 10, extra: ["--nmea-tcp", "127.0.0.1:\(port)"])
        // The gpsd socket is bound before NMEA out's: wait for this port, not for that one.
        let stalled = try #require(LineClient.connect(tcpPort: port))  // never reads
        let reader = try #require(LineClient.connect(tcpPort: port))
        let lines = Self.lines(from: reader, count: 300)
        #expect(lines.count == 300)
        #expect(lines.first?.hasPrefix("$") == true, "a greeting: \(lines.first ?? "")")
        #expect(lines.allSatisfy(Self.isChecksummed))
        let places = try Self.payloadLines()
        #expect(lines.allSatisfy { places[$0] != nil }, "\(lines.first { places[$0] == nil } ?? "")")
        #expect(Self.followOneAnother(lines, in: places))
        _ = stalled
        _ = daemon
    }

    @Test("--nmea-sentences passes only the types named; the Unix socket serves the same stream")
    func filterAndUnixSocket() throws {
        let folder = try makeTemporaryFolder("nmea")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("nmea.sock").path
        let daemon = try DaemonUnderTest(fixture: Self.fixture, speed: 10, extra: ["--nmea-socket", path, "--nmea-sentences", "GGA,RMC"])
        let reader = try #require(LineClient.connect(unixPath: path))
        let lines = Self.lines(from: reader, count: 40)
        #expect(lines.count == 40)
        #expect(lines.allSatisfy { $0.hasPrefix("$GPGGA,") || $0.hasPrefix("$GPRMC,") }, "\(lines.prefix(3))")
        #expect(lines.contains { $0.hasPrefix("$GPGGA,") } && lines.contains { $0.hasPrefix("$GPRMC,") })
        _ = daemon
    }

    @Test("--nmea-udp sends each sentence as one datagram")
    func datagrams() throws {
        let (receiver, port) = boundLoopbackSocket(type: SOCK_DGRAM)
        defer { close(receiver) }
        let daemon = try DaemonUnderTest(fixture: Self.fixture, speed: 10, extra: ["--nmea-udp", "127.0.0.1:\(port)"])
        var datagrams: [String] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let deadline = Date().addingTimeInterval(20)
        while datagrams.count < 50, Date() < deadline {
            var poller = pollfd(fd: receiver, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 1000) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, 0) }
            if count > 0 { datagrams.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
        }
        #expect(datagrams.count == 50)
        #expect(datagrams.allSatisfy { $0.hasPrefix("$") && $0.hasSuffix("\r\n") && $0.filter { $0 == "$" }.count == 1 })
        #expect(datagrams.allSatisfy { Self.isChecksummed(String($0.dropLast())) })  // "\r\n" is one Character
        _ = daemon
    }

    @Test(
        "--nmea-udp to a network not reachable yet (its interface down at start): the failure logged once, the sentences dropped and counted, and sent once it is",
        .enabled(if: installedOrInCI(getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")), "needs root and iproute2, for a network namespace of its own"))
    func datagramsOnceTheNetworkIsUp() throws {
        let folder = try makeTemporaryFolder("nmea-udp")
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = freePort()
        // A network namespace of the daemon's own, with loopback only: 192.0.2.1 (a
        // documentation address) has no route, so sendto fails with ENETUNREACH.
        let daemon = try RunningProcess("/usr/bin/unshare", [
            "--net", "/bin/sh", "-c", #"/usr/sbin/ip link set lo up && exec "$@""#, "sh",
            Binaries.gpsfixd, "--demo", "--socket", folder.appendingPathComponent("gpsfixd.sock").path,
            "--nmea-udp", "192.0.2.1:\(port)", "--allow-remote",
        ])
        defer { daemon.stop() }
        try waitUntil("the send's failure logged", within: 20) { daemon.errorText.contains("unreachable") }
        // The network comes up: the address is the namespace's own, and a receiver there.
        let namespace = "--net=/proc/\(daemon.pid)/ns/net"
        _ = try run("/usr/bin/nsenter", [namespace, "/usr/sbin/ip", "addr", "add", "192.0.2.1/32", "dev", "lo"])
        let receiver = try RunningProcess("/usr/bin/nsenter", [
            namespace, "/usr/bin/python3", "-c",
            "import socket, sys; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('192.0.2.1', \(port))); "
                + "s.settimeout(30); sys.stdout.write(s.recv(2048).decode()); sys.stdout.flush()",
        ])
        defer { receiver.stop() }
        try waitUntil("a sentence received", within: 30) { receiver.outputText.hasPrefix("$") }
        #expect(receiver.outputText.hasSuffix("\r\n"))
        try waitUntil("the return logged", within: 10) { daemon.errorText.contains("sending again") }
        #expect(daemon.errorText.components(separatedBy: "unreachable").count == 2, "the outage logged once: \(daemon.errorText)")
    }

    @Test("a real gpsd reads GPSFix's NMEA out as its device and reports the capture's fixes")
    func gpsdReadsIt() throws {
        let port = freePort(), gpsdPort = freePort()
        let daemon = try DaemonUnderTest(fixture: Self.fixture, speed: 4, extra: ["--nmea-tcp", "127.0.0.1:\(port)"])
        let folder = try makeTemporaryFolder("gpsd-nmea")
        defer { try? FileManager.default.removeItem(at: folder) }
        let gpsd = try RunningProcess(
            "/usr/sbin/gpsd", ["-N", "-n", "-S", "\(gpsdPort)", "-F", folder.appendingPathComponent("ctl").path, "tcp://127.0.0.1:\(port)"])
        defer { gpsd.stop() }
        try waitUntil("gpsd listening") { (try? LineClient(tcpPort: gpsdPort)) != nil }
        let output = try run("/usr/bin/gpspipe", ["-w", "-n", "40", "127.0.0.1:\(gpsdPort)"], timeout: 30)
        let fixes = output.split(whereSeparator: \.isNewline).compactMap { String($0).json }
            .filter { $0["class"] as? String == "TPV" && ($0["mode"] as? Int ?? 0) >= 2 }
        let latitude = try #require(fixes.last?["lat"] as? Double, "no fix from gpsd: \(output.suffix(300))")
        // The capture's positions as gpsd reports them reading it directly (its regression
        // suite's expected output), not as our own decoder does: a latitude our decoder got
        // wrong would pass on to NMEA out, and gpsd would faithfully report it.
        let expected = try String(contentsOf: Binaries.fixtures.appendingPathComponent(Self.fixture + ".chk"), encoding: .utf8)
        let latitudes = expected.split(whereSeparator: \.isNewline).compactMap { String($0).json }
            .filter { $0["class"] as? String == "TPV" }.compactMap { $0["lat"] as? Double }
        try #require(!latitudes.isEmpty)
        #expect(latitudes.contains { abs($0 - latitude) < 1e-6 }, "gpsd's \(latitude) is none of the capture's positions")
        _ = daemon
    }

    @Test("NMEA 0183 out reachable from other hosts is announced over mDNS, or the log says why not, and the daemon serves on")
    func announcement() throws {
        let port = freePort()
        let daemon = try DaemonUnderTest(
            fixture: Self.fixture, speed: 10, extra: ["--nmea-tcp", "0.0.0.0:\(port)", "--allow-remote", "--log-level", "info"])
        let reader = try #require(LineClient.connect(tcpPort: port))
        #expect(reader.readLine(timeout: 10)?.hasPrefix("$") == true)
        let log = daemon.daemon.errorText
        #expect(log.contains("announced over mDNS") || log.contains("not announced over mDNS"), "\(log.suffix(400))")
    }
}
