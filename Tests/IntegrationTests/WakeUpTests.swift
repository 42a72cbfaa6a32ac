import Foundation
import GPSFixDevices
import TestSupport
import Testing

/// What the daemon does between a receiver's sentences: most receivers send one cycle a
/// second, and a board pays for every thread that wakes in between.
@Suite("gpsfixd between sentences")
struct WakeUpTests {
    @Test("between sentences only the event loop wakes: no libdispatch worker, and no monitor of them each second")
    func onlyTheEventLoopWakes() async throws {
        let folder = try makeTemporaryFolder("wakes")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("s").path
        let terminal = try PseudoTerminal()
        // The page's status, pushed each second, and the status log: the daemon's own timers.
        let daemon = try RunningProcess(
            Binaries.gpsfixd,
            [terminal.path, "--socket", socket, "--http", "127.0.0.1:\(freePort())", "--status-interval", "1", "--log-level", "error"])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(DaemonTests.watch)
        try await terminal.write(FaultInjectionTests.sentences(of: "glonass-fix.nmea").prefix(12).flatMap { $0 })
        #expect(watcher.readLines(until: { $0.contains(#""class":"TPV""#) }) != nil)

        let before = try ThreadWakeUps(ofProcess: "\(daemon.pid)")
        // Two and a half seconds (the silence watch's 3 s not yet over): a thread woken
        // each second wakes at least twice.
        try await Task.sleep(for: .milliseconds(2500))
        let threads = try ThreadWakeUps(ofProcess: "\(daemon.pid)").since(before)
        let loops = threads.filter { $0.name.hasPrefix("NIO-SGLTN-") }
        #expect(loops.count == 1, "one event loop: \(threads.map(\.name))")
        // The others, one wake-up at most (the start of a wait).
        let woken = threads.filter { !$0.name.hasPrefix("NIO-SGLTN-") && $0.times > 1 }
        #expect(woken.isEmpty, "\(woken.map { "\($0.name) woke \($0.times) times" })")
        withExtendedLifetime(terminal) {}
    }

    @Test("while a receiver sends, the event loop wakes for its bytes and not for the silence watch, which still reports the silence")
    func silenceWatchWakesNothingWhileTheReceiverSends() async throws {
        let folder = try makeTemporaryFolder("watch-wakes")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("s").path
        let terminal = try PseudoTerminal()
        // A watch of 1 s over bursts 0.4 s apart: a timer left to come due and set again
        // would wake the loop every 0.6 to 1 s besides the bursts.
        let daemon = try RunningProcess(
            Binaries.gpsfixd, [terminal.path, "--socket", socket, "--silence-timeout", "1", "--log-level", "error"])
        defer { daemon.stop() }
        let watcher = try #require(LineClient.connect(unixPath: socket))
        watcher.send(DaemonTests.watch)
        let sentences = try FaultInjectionTests.sentences(of: "glonass-fix.nmea")
        let bursts = (0..<24).map { burst in (0..<3).flatMap { sentences[(burst * 3 + $0) % sentences.count] } }
        try await terminal.write(bursts[0])
        try await Task.sleep(for: .milliseconds(400))
        try await terminal.write(bursts[1])
        // A cycle ends with the next one's first sentence: the first TPV, with the second burst.
        #expect(watcher.readLines(until: { $0.contains(#""class":"TPV""#) }) != nil)

        let before = try ThreadWakeUps(ofProcess: "\(daemon.pid)")
        for burst in bursts.dropFirst(2) {
            try await Task.sleep(for: .milliseconds(400))
            try await terminal.write(burst)
        }
        let lastWritten = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(100))
        let loop = try ThreadWakeUps(ofProcess: "\(daemon.pid)").since(before).filter { $0.name.hasPrefix("NIO-SGLTN-") }
        let written = bursts.count - 2
        // A burst read in two parts wakes it twice (on two busy cores, a fifth of them
        // were): a third more at most. A timer come due every 0.6 to 1 s would add 8 at
        // least over these 8.8 s.
        #expect(loop.count == 1 && loop[0].times <= written + written / 3, "\(written) bursts: \(loop)")

        let offline = #/"class":"DEVICE".*"online":false/#
        #expect(watcher.readLines(until: { $0.contains(offline) }, timeout: 10) != nil, "no silence")
        #expect(lastWritten.duration(to: .now) >= .seconds(1), "silent before the timeout")
        withExtendedLifetime(terminal) {}
    }
}
