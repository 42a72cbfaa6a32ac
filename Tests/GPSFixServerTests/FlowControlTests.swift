import Foundation
import GPSFix
import GPSFixServer
import NMEA
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// What the server does with a client that reads slower than a device sends: hold back a
/// source that can wait, leave reports out for a lagging client of one that cannot, cut
/// off a client that reads nothing for the stall timeout.
@Suite("Flow control for lagging clients")
struct FlowControlTests {
    /// Small buffers, so that a client lags after a few hundred reports.
    static let buffer = (low: 8 * 1024, high: 32 * 1024)
    static let reports = 5000

    /// The `index`-th fix: its time says which it is.
    static func fix(_ index: Int) -> LocationUpdate {
        var fix = ServerTests.fix
        fix.time = GPSTime(millisecondsSince1970: 1_795_000_000_000 + index * 1000)
        return .fix(fix)
    }

    /// The fix indices of the TPVs in `lines`.
    static func indices(_ lines: [String]) -> [Int] {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return lines.compactMap { line -> Int? in
            guard line.contains(#""class":"TPV""#), let start = line.range(of: #""time":""#)?.upperBound,
                let end = line[start...].firstIndex(of: "\""), let date = format.date(from: String(line[start..<end]))
            else { return nil }
            return Int((date.timeIntervalSince1970 - 1_795_000_000).rounded())
        }
    }

    /// Reads lines until none comes for `quiet` seconds, on a thread of its own.
    static func drain(_ client: LineClient, quiet: Double = 1) async -> [String] {
        await withCheckedContinuation { continuation in
            Thread {
                var lines: [String] = []
                while let line = client.readLine(timeout: quiet) { lines.append(line) }
                continuation.resume(returning: lines)
            }.start()
        }
    }

    /// Whether `received` is every report, in order; otherwise says where it differs.
    static func isEveryReport(_ received: [Int]) -> Bool {
        guard received != Array(0..<reports) else { return true }
        let first = zip(received, 0...).first { $0 != $1 }
        Issue.record("\(received.count) of \(reports) reports, first difference at \(first.map { "\($0.1)" } ?? "the end")")
        return false
    }

    /// Waits until `counter` stops moving for 300 ms (at most `seconds`), and returns it.
    static func settled(_ counter: Counter, within seconds: Double = 10) async throws -> Int {
        var last = -1
        let deadline = Date().addingTimeInterval(seconds)
        while counter.value != last, Date() < deadline {
            last = counter.value
            try await Task.sleep(for: .milliseconds(300))
        }
        return counter.value
    }

    @Test("a source that can wait is held back while a watcher lags, and the watcher gets every report once it reads")
    func holdsBackWhatCanWait() async throws {
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"], delivering: true, canWait: true, clientBuffer: Self.buffer, stallTimeout: .seconds(60))
        let provider = harness.providers[0]
        let client = try await harness.client()
        for index in 0..<Self.reports { provider.yield(Self.fix(index)) }
        // The client reads nothing: the kernel's socket buffer and the client's 32 KiB fill,
        // then the provider is held back, far short of every report.
        let taken = try await Self.settled(harness.handedOver)
        #expect(taken < Self.reports, "the provider was not held back: \(taken) taken")
        let lines = await Self.drain(client)
        #expect(Self.isEveryReport(Self.indices(lines)))
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.cutOff == 0 && clients.reportsDropped == 0)
        await harness.stop()
    }

    @Test("a watcher that reads nothing for the stall timeout is cut off, and the held-back source goes on for the others")
    func cutsOffAStalledWatcher() async throws {
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"], delivering: true, canWait: true, clientBuffer: Self.buffer, stallTimeout: .seconds(1))
        let provider = harness.providers[0]
        let stalled = try await harness.client()
        let reader = try await harness.client()
        for index in 0..<Self.reports { provider.yield(Self.fix(index)) }
        let lines = await Self.drain(reader, quiet: 3)
        #expect(Self.isEveryReport(Self.indices(lines)))
        // The stalled client's socket was closed: past what it had buffered, the end.
        var ended = false
        while let line = stalled.readLine(timeout: 2) { _ = line }
        var poller = pollfd(fd: stalled.descriptor, events: Int16(POLLIN), revents: 0)
        if poll(&poller, 1, 0) > 0 {
            var byte: UInt8 = 0
            ended = read(stalled.descriptor, &byte, 1) == 0
        }
        #expect(ended, "the stalled client was not cut off")
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.cutOff == 1)
        await harness.stop()
    }

    @Test("a source that cannot wait is never held back: a lagging watcher loses reports, counted, and stays while it reads")
    func dropsForALaggingWatcherOfASerialSource() async throws {
        let harness = try await ServerUnderTest(
            devices: ["/dev/mock0"], delivering: true, canWait: false, clientBuffer: Self.buffer, stallTimeout: .seconds(60))
        let provider = harness.providers[0]
        let client = try await harness.client()
        for index in 0..<Self.reports { provider.yield(Self.fix(index)) }
        #expect(try await Self.settled(harness.handedOver) == Self.reports)
        let received = Self.indices(await Self.drain(client))
        #expect(received.count < Self.reports && received == received.sorted() && Set(received).count == received.count)
        let clients = try #require(await harness.server.snapshot()?.clients)
        #expect(clients.reportsDropped == Self.reports - received.count && clients.cutOff == 0)
        // It caught up and is served again.
        provider.yield(Self.fix(Self.reports - 1))
        #expect(Self.indices(await Self.drain(client)) == [Self.reports - 1])
        await harness.stop()
    }
}
