import ReceiverFraming
import TestSupport
import Testing

@testable import UBXConfiguration

/// A receiver's flash wears with each write, and a write is slow: the receiver answers
/// nothing while it erases and writes. A save whose acknowledgement is late must not be
/// sent again, or the flash is written twice.
@Suite("Saves to a receiver's flash")
struct FlashWriteTests {
    /// A receiver that acknowledges each configuration message at once, but a save to
    /// flash (CFG-CFG) only once `flashTime` has passed on `clock`, which its waits move.
    final class SlowFlashReceiver: ReceiverLink {
        let clock: ManualClock
        let flashTime: Duration
        private(set) var flashWrites = 0
        private var outbox: [UInt8] = []
        private var late: (bytes: [UInt8], due: ManualClock.Instant)?

        init(clock: ManualClock, flashTime: Duration) {
            self.clock = clock
            self.flashTime = flashTime
        }

        func send(_ frame: [UInt8]) throws {
            let acknowledgement = UBXFrame.encode(messageClass: 0x05, id: 0x01, payload: [frame[2], frame[3]])
            guard (frame[2], frame[3]) == (0x06, 0x09) else { return outbox += acknowledgement }
            flashWrites += 1
            late = (acknowledgement, clock.now.advanced(by: flashTime))
        }

        func receive(timeout: Duration) throws -> [UInt8] {
            if !outbox.isEmpty {
                defer { outbox.removeAll() }
                return outbox
            }
            let deadline = clock.now.advanced(by: timeout)
            guard let pending = late, pending.due <= deadline else {
                clock.advance(by: timeout)
                return []
            }
            clock.advance(by: clock.now.duration(to: pending.due))
            late = nil
            return pending.bytes
        }

        func changeSpeed(to bps: Int) throws {}
        let speed = 0
    }

    /// A save to flash applied to a receiver that acknowledges it after `flashTime`: the
    /// receiver, and what applying it threw, if anything.
    static func save(acknowledgedAfter flashTime: Duration) -> (receiver: SlowFlashReceiver, error: (any Error)?) {
        let clock = ManualClock()
        let receiver = SlowFlashReceiver(clock: clock, flashTime: flashTime)
        let configurator = ReceiverConfigurator(conversation: ReceiverConversation(link: receiver, clock: clock), port: .uart1)
        let save = ConfigurationStep(settings: "--save", frame: LegacyMessages.save(toFlash: true), confirmation: .acknowledgement)
        do {
            try configurator.apply([save])
            return (receiver, nil)
        } catch {
            return (receiver, error)
        }
    }

    @Test("a save acknowledged after 2.5 s is sent once, and succeeds")
    func slowSaveWrittenOnce() throws {
        let (receiver, error) = Self.save(acknowledgedAfter: .milliseconds(2500))
        #expect(error == nil, "\(error.map { "\($0)" } ?? "")")
        #expect(receiver.flashWrites == 1)
    }

    @Test("a save never acknowledged fails, sent once")
    func silentSaveSentOnce() throws {
        let (receiver, error) = Self.save(acknowledgedAfter: .seconds(3600))
        #expect(error is ConfigurationError)
        #expect(receiver.flashWrites == 1)
    }
}
