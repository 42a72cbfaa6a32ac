import GPSFixDevices
@testable import GPSFixServer
import Logging
import NIOPosix
import TestSupport
import Testing

/// The silence watch's timers on the daemon's event loop.
@Suite("EventLoopTimers")
struct EventLoopTimersTests {
    let timers = EventLoopTimers(
        eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))

    @Test("a timer descriptor set again before its deadline runs once, at the later one; stopped, it runs nothing")
    func settingAgainForgetsTheEarlierDeadline() async throws {
        let runs = Locked([ContinuousClock.Instant]())
        let timer = timers.makeTimer { runs.withLock { $0.append(.now) } }
        #expect(timer is DescriptorTimer)
        let start = ContinuousClock.now
        timer.set(in: .seconds(1))
        timer.set(in: .seconds(3))
        for _ in 0..<200 where runs.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(50)) }
        // The first deadline, had it been kept, would have run a second in.
        let first = try #require(runs.withLock { $0.first }, "the timer never ran")
        #expect(start.duration(to: first) >= .seconds(3))

        timer.set(in: .milliseconds(100))
        timer.stop()
        timer.set(in: .milliseconds(100))
        try await Task.sleep(for: .milliseconds(400))
        #expect(runs.withLock { $0.count } == 1)
    }
}
