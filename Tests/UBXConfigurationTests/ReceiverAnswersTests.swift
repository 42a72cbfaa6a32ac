import ReceiverFraming
import Testing
import UBXConfiguration

/// Answers no simulated receiver gives, and a real one may: each a receiver's number at
/// the edge of its field, read without a trap.
@Suite("A receiver's answers at their extremes")
struct ReceiverAnswersTests {
    /// A legacy receiver that answers each poll from a table (and refuses what is not in
    /// it), acknowledging configuration polls as u-blox receivers do.
    final class TableReceiver: ReceiverLink {
        var replies: [UInt16: [UInt8]]
        private var outbox: [UInt8] = []

        init(replies: [UInt16: [UInt8]]) {
            self.replies = replies
        }

        func send(_ frame: [UInt8]) throws {
            let (messageClass, id) = (frame[2], frame[3])
            guard let payload = replies[UInt16(messageClass) << 8 | UInt16(id)] else {
                outbox += UBXFrame.encode(messageClass: 0x05, id: 0x00, payload: [messageClass, id])
                return
            }
            outbox += UBXFrame.encode(messageClass: messageClass, id: id, payload: payload)
            if messageClass == 0x06 { outbox += UBXFrame.encode(messageClass: 0x05, id: 0x01, payload: [messageClass, id]) }
        }

        func receive(timeout: Duration) throws -> [UInt8] {
            defer { outbox.removeAll() }
            return outbox
        }

        func changeSpeed(to bps: Int) throws {}
        let speed = 0
    }

    static func text(_ string: String, _ width: Int) -> [UInt8] {
        Array(string.utf8) + [UInt8](repeating: 0, count: width - string.utf8.count)
    }

    /// MON-VER of a NEO-M8T: protocol 18, so the legacy messages.
    static let monitorVersion = text("ROM CORE 3.01 (107888)", 30) + text("00080000", 10) + text("PROTVER=18.00", 30)

    @Test("CFG-TMODE2 with the largest survey-in accuracy limit its field holds (mm) is read, not a trap")
    func largestSurveyLimit() throws {
        var tmode2 = [UInt8](repeating: 0, count: 28)
        tmode2[0] = 1  // survey-in
        tmode2.replaceSubrange(20..<24, with: [0x10, 0x0E, 0, 0])  // 3600 s
        tmode2.replaceSubrange(24..<28, with: [0xFF, 0xFF, 0xFF, 0xFF])  // 4,294,967,295 mm
        var port = [UInt8](repeating: 0, count: 20)
        port[0] = 1
        let receiver = TableReceiver(replies: [0x0A04: Self.monitorVersion, 0x0600: port, 0x063D: tmode2])
        let conversation = ReceiverConversation(link: receiver, clock: ContinuousClock(), answerTimeout: .milliseconds(50))
        let report = try ReceiverConfigurator(conversation: conversation, port: .uart1).report()
        #expect(report.timingMode == .surveyIn(seconds: 3600, metres: 4_294_967.295))
    }
}
