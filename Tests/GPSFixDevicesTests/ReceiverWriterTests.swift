@testable import GPSFixDevices
import NIOConcurrencyHelpers
import NIOPosix
import Testing

/// The receiver's one writer, with its port closed (nothing is written, everything waits).
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
}
