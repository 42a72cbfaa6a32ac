@testable import GPSFixMQTT
import Testing

@Suite("The outbound queue of a broker connection")
struct OutboundQueueTests {
    func message(_ number: Int) -> MQTTMessage {
        MQTTMessage(topic: "gpsfix/test/sky", payload: ArraySlice("\(number)".utf8))
    }

    @Test("a retained message enqueued as the connection comes back replaces the copy waiting to be published again: sent once, not twice")
    func retainedNotTwice() {
        var queue = OutboundQueue(capacity: 8, window: 8)
        let config = MQTTMessage(topic: "homeassistant/device_tracker/x/config", payload: ArraySlice("{}".utf8), retain: true)
        queue.connectionChanged(connected: true)
        queue.enqueue(config)
        #expect(queue.next() == config)
        queue.connectionChanged(connected: false)
        queue.connectionChanged(connected: true)
        queue.enqueue(config)  // what the link does at each connect: a broker may have lost it
        var sent: [MQTTMessage] = []
        while let message = queue.next() { sent.append(message) }
        #expect(sent == [config])
    }

    @Test("a retained message pushed out of a full queue is published again all the same: the broker's last will does not stay the device's state", arguments: [false, true])
    func retainedPushedOut(connectedFirst: Bool) {
        var queue = OutboundQueue(capacity: 3, window: 10)
        let device = MQTTMessage(topic: "gpsfix/gps0/device", payload: ArraySlice(#"{"online":true}"#.utf8), retain: true)
        let config = MQTTMessage(topic: "homeassistant/sensor/gps0_mode/config", payload: ArraySlice("{}".utf8), retain: true)
        if connectedFirst { queue.connectionChanged(connected: true) }
        // A slow broker (the window full) or none: the device's state waits among the oldest.
        queue.enqueue(device)
        queue.enqueue(message(1))
        queue.enqueue(message(2))
        if !connectedFirst { queue.connectionChanged(connected: true) }
        queue.enqueue(config)
        #expect(queue.counters.dropped == 1)
        var sent: [MQTTMessage] = []
        while let message = queue.next() { sent.append(message) }
        #expect(sent.filter { $0 == device }.count == 1, "\(sent.map(\.topic))")
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

    @Test("at QoS 1 what is in flight stays with the library across a reconnect, so the window stays full; at QoS 0 it is lost, and the window empties",
          arguments: [0, 1])
    func windowAcrossReconnects(qos: Int) {
        var queue = OutboundQueue(capacity: 8, window: 2, qos: qos)
        queue.connectionChanged(connected: true)
        for number in 1...4 { queue.enqueue(message(number)) }
        #expect(queue.next() != nil && queue.next() != nil)
        #expect(!queue.canSend, "the window is full")
        queue.connectionChanged(connected: false)
        queue.connectionChanged(connected: true)
        // libmosquitto sends QoS 1 messages again after a reconnect, and drops QoS 0 ones
        // not yet written: only then is there room for more.
        #expect(queue.canSend == (qos == 0))
        queue.delivered()
        #expect(queue.canSend)
    }
}

