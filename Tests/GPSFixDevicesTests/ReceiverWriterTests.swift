#if canImport(Glibc)
import Glibc
#endif

@testable import GPSFixDevices
import Dispatch
import NIOConcurrencyHelpers
import NIOPosix
import TestSupport
import Testing

/// The receiver's one writer, with its port closed (nothing is written, everything waits)
/// or taking nothing.
@Suite("Receiver writer")
struct ReceiverWriterTests {
    @Test("frames and actions someone waits for are bounded in number: one past the bound is refused at once, counted")
    func waitingIsBounded() async throws {
        let writer = ReceiverWriter(eventLoop: MultiThreadedEventLoopGroup.singleton.next(), openReceiver: { nil })
        let answers = NIOLockedValueBox<[Bool]>([])
        for _ in 0..<ReceiverWriter.maximumWaiting {
            writer.afterQueued { done in answers.withLockedValue { $0.append(done) } }
        }
        writer.send([0xB5, 0x62]) { done in answers.withLockedValue { $0.append(done) } }
        writer.afterQueued { done in answers.withLockedValue { $0.append(done) } }
        // The writer's loop has run everything queued before this.
        try await writer.eventLoop.submit {}.get()
        #expect(answers.withLockedValue { $0 } == [false, false])
        #expect(writer.counters.refusedWaiting == 2)
        // Closing the port answers the ones that waited, and makes room again.
        try await writer.eventLoop.submit { writer.close() }.get()
        #expect(answers.withLockedValue { $0 }.count == 2 + ReceiverWriter.maximumWaiting)
        writer.afterQueued { done in answers.withLockedValue { $0.append(done) } }
        try await writer.eventLoop.submit {}.get()
        #expect(writer.counters.refusedWaiting == 2)
    }

    @Test("a conversation's frame whose turn ended before it reached the event loop is not queued, and is counted")
    func turnOverBeforeQueued() async throws {
        let writer = ReceiverWriter(eventLoop: MultiThreadedEventLoopGroup.singleton.next(), openReceiver: { nil })
        let held = NIOLockedValueBox(true)
        // The loop busy until the turn is over: the frame was asked for while the turn was held.
        let gate = DispatchSemaphore(value: 0)
        writer.eventLoop.execute { gate.wait() }
        writer.send([0xB5, 0x62, 0x06, 0x8A], while: { held.withLockedValue { $0 } })
        held.withLockedValue { $0 = false }
        gate.signal()
        writer.send([0xB5, 0x62, 0x06, 0x8B], while: { true })
        try await writer.eventLoop.submit {}.get()
        // The first dropped; the second, still wanted, queued (it waits: the port is closed).
        #expect(writer.counters.droppedTurnOver == 1)
    }

    @Test("a frame someone waits for, the port closed, is given up after its wait: the waiter told, counted, its room freed")
    func waitingExpires() async throws {
        let writer = ReceiverWriter(
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), maximumWait: .milliseconds(100), openReceiver: { nil })
        let answers = NIOLockedValueBox<[Bool]>([])
        writer.send([0xB5, 0x62]) { done in answers.withLockedValue { $0.append(done) } }
        // Nothing else arrives to wake the writer: the wait's own deadline must.
        try waitUntil("the waiter told", within: 10) { !answers.withLockedValue { $0 }.isEmpty }
        #expect(answers.withLockedValue { $0 } == [false])
        #expect(writer.counters.expiredWaiting == 1)
        let refusedBefore = writer.counters.refusedWaiting
        for _ in 0..<ReceiverWriter.maximumWaiting { writer.afterQueued { _ in } }
        try await writer.eventLoop.submit {}.get()
        #expect(writer.counters.refusedWaiting == refusedBefore, "the expired frame still took a place")
    }

    @Test("a correction queued behind a frame someone waits for still goes stale, and is counted")
    func staleBehindWaiting() async throws {
        let writer = ReceiverWriter(
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), maximumAge: .milliseconds(50), openReceiver: { nil })
        writer.afterQueued { _ in }
        writer.send([0xD3, 0x00, 0x00])
        try await Task.sleep(for: .milliseconds(200))
        // The next correction wakes the writer, which drops what went stale.
        writer.send([0xD3, 0x00, 0x01])
        try await writer.eventLoop.submit {}.get()
        #expect(writer.counters.droppedStale == 1)
        try await writer.eventLoop.submit { writer.close() }.get()
    }

    @Test("a frame handed to a port that then takes nothing is given up after the wait: the channel closed, the waiter told")
    func stalledPort() throws {
        // A pipe nobody reads stands for a port that takes nothing (its line held off).
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let output = ends[1]
        let writer = ReceiverWriter(
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), maximumWait: .milliseconds(200), openReceiver: { dup(output) })
        let answers = NIOLockedValueBox<[Bool]>([])
        // More than a pipe holds (64 kB): handed whole to the port's channel, never all written.
        writer.send([UInt8](repeating: 0xD3, count: 128 * 1024)) { done in answers.withLockedValue { $0.append(done) } }
        try waitUntil("the waiter told", within: 10) { !answers.withLockedValue { $0 }.isEmpty }
        #expect(answers.withLockedValue { $0 } == [false])
    }

    @Test(
        "on a slow line, a conversation's frame and the speed switch after it are made once the port takes them, though the turn ended meanwhile",
        .timeLimit(.minutes(1)))
    func speedSwitchAfterTurnOnSlowLine() async throws {
        // The receiver's port, held open by a reading: where the speed is switched.
        let terminal = try PseudoTerminal()
        let port = SerialPort(path: terminal.path, settings: SerialSettings(speed: 9600))
        let reading = Task { for try await _ in port.chunkStream() {} }
        defer { reading.cancel() }
        try waitUntil("the port open", within: 10) { port.duplicateOpenDescriptor().map { close($0) } != nil }
        // The line: a pipe read only when the test says, so frames wait behind a correction.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let output = ends[1]
        let writer = ReceiverWriter(eventLoop: MultiThreadedEventLoopGroup.singleton.next(), openReceiver: { dup(output) })
        let control = ReceiverControl(writer: writer, replies: ReceiverReplies(), port: port)
        let held = NIOLockedValueBox(true)
        let switched = NIOLockedValueBox<Bool?>(nil)
        let correction = [UInt8](repeating: 0xD3, count: 128 * 1024)
        let speedFrame: [UInt8] = [0xB5, 0x62, 0x06, 0x00, 0x01, 0x00, 0x01, 0x08, 0x19]
        writer.send(correction)
        writer.send(speedFrame, while: { held.withLockedValue { $0 } })
        control.changeSpeed(to: 115_200) { done in switched.withLockedValue { $0 = done } }
        try await writer.eventLoop.submit {}.get()
        // The tool gave up waiting: its turn is over before the line took its frame.
        held.withLockedValue { $0 = false }
        #expect(switched.withLockedValue { $0 } == nil, "switched before the frame asking for it was on the line")
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while line.count < correction.count + speedFrame.count {
            var waiting = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            try #require(poll(&waiting, 1, 10_000) == 1, "the line took \(line.count) bytes, then nothing")
            let count = read(ends[0], &chunk, chunk.count)
            try #require(count > 0)
            line += chunk[0..<count]
        }
        #expect(Array(line.suffix(speedFrame.count)) == speedFrame)
        try waitUntil("the speed switched", within: 10) { switched.withLockedValue { $0 } != nil }
        #expect(switched.withLockedValue { $0 } == true)
        #expect(port.line?.bps == 115_200)
        try await writer.eventLoop.submit { writer.close() }.get()
    }
}
