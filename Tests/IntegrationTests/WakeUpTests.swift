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
}
