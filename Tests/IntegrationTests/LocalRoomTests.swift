import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The local sockets keep room of their own: a network side full of clients never locks
/// out a local program, `gpsfix poll`, `gpsfix doctor` or the control socket.
@Suite("Room for local clients")
struct LocalRoomTests {
    /// A plain TCP connection to `host` (`127.0.0.1` or `::1`) on `port`, tried until the
    /// port listens or `seconds` pass, its reads bounded by a timeout; the caller closes it.
    private static func connect(_ host: String, _ port: Int, within seconds: Double = 10) throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try connectOnce(host, port)
            } catch let error as POSIXError where error.code == .ECONNREFUSED && Date() < deadline {
                usleep(50_000)
            }
        }
    }

    private static func connectOnce(_ host: String, _ port: Int) throws -> Int32 {
        let family = host.contains(":") ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        boundReads(descriptor)
        var storage = sockaddr_storage()
        let length: Int
        if family == AF_INET6 {
            length = withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = UInt16(port).bigEndian
                inet_pton(AF_INET6, host, &address.pointee.sin6_addr)
                return MemoryLayout<sockaddr_in6>.size
            }
        } else {
            length = withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = UInt16(port).bigEndian
                inet_pton(AF_INET, host, &address.pointee.sin_addr)
                return MemoryLayout<sockaddr_in>.size
            }
        }
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(length)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        return descriptor
    }

    /// Makes each read of `descriptor` wait 2 s at most.
    private static func boundReads(_ descriptor: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads from `descriptor` until `wanted` has arrived (`true`), or the connection ends
    /// or `seconds` pass (`false`).
    private static func read(_ descriptor: Int32, until wanted: String, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return false }
            if count > 0 {
                received += buffer[0..<count]
                if String(decoding: received, as: UTF8.self).contains(wanted) { return true }
            }
        }
        return false
    }

    @Test("with the network side full (--max-clients 8 over 127.0.0.1 and ::1), a Unix-socket client gets VERSION and a TPV, gpsfix poll and doctor run, the control socket answers")
    func fullNetworkSide() throws {
        let folder = try makeTemporaryFolder("local-room")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("gpsfixd-control.sock").path
        let link = folder.appendingPathComponent("gps0").path
        let replay = try RunningProcess(Binaries.gpsfix, [
            "replay", Binaries.fixtures.appendingPathComponent("gpsd/haicom-305N.log").path, "--link", link, "--loop", "--speed", "4",
        ])
        defer { replay.stop() }
        try waitUntil("the replay's link") { FileManager.default.fileExists(atPath: link) }
        // Two network listeners, as gpsd's socket unit has: the service manager's sockets.
        let v4 = freePort(), v6 = freePort()
        let daemon = try RunningProcess("/usr/bin/systemd-socket-activate", [
            "-l", "127.0.0.1:\(v4)", "-l", "[::1]:\(v6)", Binaries.gpsfixd, link, "--socket", socket, "--max-clients", "8",
            "--log-level", "warning",
        ])
        defer { daemon.stop() }
        // The network side full of watchers (none idle, so none is closed to make room): one
        // listener holds two thirds of 8 at most, 5, the other the rest.
        var network: [Int32] = []
        defer { for descriptor in network { close(descriptor) } }
        for (host, port) in Array(repeating: ("127.0.0.1", v4), count: 5) + Array(repeating: ("::1", v6), count: 3) {
            let descriptor = try Self.connect(host, port)
            network.append(descriptor)
            // Watching PPS only: a watcher that is sent nothing, so it never lags.
            _ = Array((#"?WATCH={"enable":true,"pps":true}"# + "\n").utf8).withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            #expect(Self.read(descriptor, until: #""class":"WATCH""#, within: 15), "watcher \(network.count) on \(host)")
        }
        let refused = try Self.connect("::1", v6)
        defer { close(refused) }
        #expect(!Self.read(refused, until: #""class":"VERSION""#, within: 5), "a ninth network client was served")

        let local = try #require(LineClient.connect(unixPath: socket))
        #expect(local.readLine(timeout: 10)?.contains(#""class":"VERSION""#) == true)
        local.send(#"?WATCH={"enable":true,"json":true}"# + "\n")
        #expect(local.readLines(until: { $0.contains(#""class":"TPV""#) }, timeout: 10) != nil)

        let poll = try run(Binaries.gpsfix, ["poll", "--socket", socket], timeout: 10)
        #expect(poll.json?["class"] as? String == "POLL", "\(poll)")
        let doctor = try run(Binaries.gpsfix, ["doctor", "--socket", socket, "--json", "--seconds", "2"], timeout: 20)
        let findings = (try? JSONSerialization.jsonObject(with: Data(doctor.utf8)) as? [[String: Any]]) ?? []
        #expect(findings.contains { $0["check"] as? String == "daemon" && $0["status"] as? String == "ok" }, "\(doctor)")
        // It says which side is full.
        let clients = findings.first { $0["check"] as? String == "clients" }
        #expect(clients?["status"] as? String == "warn" && (clients?["detail"] as? String)?.contains("network 8 of 8") == true, "\(doctor)")

        // The control socket takes the operator's tool too: a device it does not serve is
        // answered N, not refused without a word.
        let tool = try LineClient(unixPath: control)
        Self.boundReads(tool.descriptor)
        tool.send(bytes: Array("H".utf8) + [0, 5] + Array("/nope".utf8))
        #expect(Self.read(tool.descriptor, until: "N", within: 5))
    }
}
