@testable import GPSFixMQTT
import Testing

@Suite("The outbound queue of a broker connection")
struct OutboundQueueTests {
    func message(_ number: Int) -> MQTTMessage {
        MQTTMessage(topic: "gpsfix/test/sky", payload: ArraySlice("\(number)".utf8))
    }

    @Test("a message the client refuses as its connection drops goes back to the front, or, the queue full, is counted as dropped")
    func refusedWhenFull() throws {
        var queue = OutboundQueue(capacity: 2, window: 1)
        queue.connectionChanged(connected: true)
        queue.enqueue(message(1))
        let first = queue.next()
        let handed = try #require(first)
        queue.enqueue(message(2))
        queue.refused(handed, connectionLost: true)
        #expect(queue.queued == 2 && queue.counters.dropped == 0)

        queue.connectionChanged(connected: true)
        let second = queue.next()
        let again = try #require(second)
        #expect(again == message(1))
        queue.enqueue(message(3))
        queue.enqueue(message(4))  // the queue is full again: 2, 3, then 4 drops 2
        #expect(queue.counters.dropped == 1)
        queue.refused(again, connectionLost: true)
        #expect(queue.queued == 2)
        #expect(queue.counters.dropped == 2)
        #expect(queue.counters.published + queue.counters.delivered + queue.counters.failed == 0)
    }
}
