import Foundation
import GPSFixNTRIP
import TestSupport
import Testing

/// `gpsfixd --ntrip-server` end to end: the simulated base's RTCM 3 frames, through the
/// daemon's hub, pushed to a caster of the tests' own (str2str's caster takes no source).
@Suite("Pushing the base's corrections through the daemon", .serialized)
struct NTRIPServerPushTests {
    @Test("--ntrip-server: the base's 1005 and MSM7 frames reach the caster whole; the address's password is out of ps and the log")
    func pushThroughTheDaemon() throws {
        let folder = try makeTemporaryFolder("push")
        defer { try? FileManager.default.removeItem(at: folder) }
        let password = "Ba5e-pu5h"
        let caster = try PushCaster(mountpoint: "BASE", password: password)
        let receiver = try SimulatedUBXReceiver(.generation9)
        let socket = folder.appendingPathComponent("gpsfixd.sock").path
        let control = folder.appendingPathComponent("control.sock").path
        let daemon = try RunningProcess(Binaries.gpsfixd, [
            receiver.path, "--speed", "\(receiver.speed)", "--socket", socket, "--control-socket", control,
            "--ntrip-server", "ntrip://base:\(password)@127.0.0.1:\(caster.port)/BASE", "--status-interval", "1",
        ])
        var stopped = false
        defer { if !stopped { daemon.stop() } }
        try waitUntil("the control socket") { FileManager.default.fileExists(atPath: control) }
        let commandLine = (try? String(contentsOfFile: "/proc/\(daemon.pid)/cmdline", encoding: .utf8)) ?? ""
        #expect(!commandLine.contains(password) && commandLine.contains("127.0.0.1"), "\(commandLine)")

        // A base at a known position: it sends its position (1005) from the start.
        let set = try UBXConfigurationToolTests.ubx([
            "set", receiver.path, "--control-socket", control, "--fixed-position", "52.0,4.37,50", "--rtcm", "msm7",
        ])
        #expect(set.status == 0, "\(set.output) \(set.errors)")
        try waitUntil("1005 and 1077 at the caster", within: 20) {
            Set(RTCMWire.messageNumbers(in: caster.streams.last?.payload ?? [])).isSuperset(of: [1005, 1077])
        }
        daemon.stop()
        stopped = true
        let pushed = caster.streams.last?.payload ?? []
        var finder = RTCMFrameFinder()
        finder.feed(pushed) { _ in }
        // Whole frames only: nothing between them, none cut (the last may be on its way).
        #expect(finder.statistics.badCRC == 0 && finder.statistics.bytesSkipped == 0, "\(finder.statistics)")
        #expect(caster.streams.first?.head.hasPrefix("SOURCE \(password) /BASE\r\n") == true)
        #expect(daemon.errorText.contains("ntrip server: ntrip://base@127.0.0.1:\(caster.port)/BASE streaming (NTRIP 1)"))
        #expect(!daemon.errorText.contains(password))
    }
}
