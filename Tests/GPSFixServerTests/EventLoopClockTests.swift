import GPSFixServer
import NIOPosix
import Testing

@Suite("Event loop clock")
struct EventLoopClockTests {
    @Test("a sleep ends at its deadline, not before; one whose deadline has passed returns at once")
    func sleeps() async throws {
        let clock = EventLoopClock(eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let start = clock.now
        try await clock.sleep(for: .milliseconds(50))
        #expect(start.duration(to: clock.now) >= .milliseconds(50))
        try await clock.sleep(until: start, tolerance: nil)
    }

    @Test("cancelling a sleeping task ends its sleep with CancellationError", .timeLimit(.minutes(1)))
    func cancellation() async throws {
        let clock = EventLoopClock(eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let sleeper = Task { try await clock.sleep(for: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(20))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(3600))
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
    }
}
