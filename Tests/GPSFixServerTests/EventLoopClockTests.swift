import GPSFixServer
import NIOCore
import NIOPosix
import Testing

/// The daemon's clock: sleeps that are timers on its event loop.
@Suite("EventLoopClock")
struct EventLoopClockTests {
    let clock = EventLoopClock(eventLoop: MultiThreadedEventLoopGroup.singleton.next())

    @Test("a sleep ends at its deadline, not before, and tells ContinuousClock's time")
    func sleepsUntilTheDeadline() async throws {
        let start = ContinuousClock.now
        let deadline = clock.now.advanced(by: .milliseconds(80))
        try await clock.sleep(until: deadline)
        #expect(ContinuousClock.now >= deadline)
        #expect(start.duration(to: clock.now) >= .milliseconds(80))
        // A deadline already past: at once, without an error.
        try await clock.sleep(until: start)
    }

    @Test("a cancelled sleep ends with CancellationError, whether cancelled during the sleep or before it")
    func cancellation() async throws {
        let clock = self.clock
        let started = ContinuousClock.now
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        try await clock.sleep(for: .milliseconds(20))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(started.duration(to: .now) < .seconds(60))

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(started.duration(to: .now) < .seconds(60))
    }
}
