#if canImport(Glibc)
import Glibc
#endif
import GPSFixDevices
@testable import GPSFixServer
import Logging
import NIOCore
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

    /// In one turn of the loop, a device's bytes read first may set the timer again after
    /// its expiry was polled and before it is read: the expiry must still be there to read,
    /// as SwiftNIO requires of a descriptor it was told is readable, and the later deadline
    /// kept. Setting the descriptor drops an expiry unread: SwiftNIO's assertions, on in
    /// the tests' debug build, then stop the process (gpsfixd's did, under load).
    @Test("a timer set again in the turn that polled its expiry, by bytes read before it: the expiry is read, the new deadline kept")
    func setAgainInTheTurnOfItsExpiry() async throws {
        let loop = timers.eventLoop
        let runs = Locked(0)
        let timer = timers.makeTimer { runs.withLock { $0 += 1 } }
        try #require(timer is DescriptorTimer)
        // A first run: the loop reads the timer's descriptor.
        timer.set(in: .milliseconds(1))
        for _ in 0..<100 where runs.withLock({ $0 == 0 }) { try await Task.sleep(for: .milliseconds(20)) }
        try #require(runs.withLock { $0 } == 1, "the timer never ran")

        // A pipe read on the same loop, each byte setting the timer 10 s ahead.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let writeEnd = ends[1]
        defer { close(writeEnd) }
        let device = try await NIOPipeBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SettingHandler { timer.set(in: .seconds(10)) })
                }
            }
            .takingOwnershipOfDescriptor(input: ends[0]).get()
        defer { device.close(promise: nil) }

        // While the loop is busy, a byte arrives, then the timer expires: the next poll finds
        // both ready, the byte first.
        try await loop.submit {
            _ = write(writeEnd, "x", 1)
            timer.set(in: .milliseconds(1))
            usleep(50_000)
        }.get()
        try await Task.sleep(for: .milliseconds(300))
        #expect(runs.withLock { $0 } == 1, "the deadline moved 10 s ahead before the expiry was read")

        // Set nearer again, it runs at the nearer deadline.
        timer.set(in: .milliseconds(10))
        for _ in 0..<100 where runs.withLock({ $0 == 1 }) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(runs.withLock { $0 } == 2)
        timer.stop()
    }
}

/// Calls `onRead` for each read.
private final class SettingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let onRead: @Sendable () -> Void

    init(_ onRead: @escaping @Sendable () -> Void) {
        self.onRead = onRead
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        onRead()
    }
}
