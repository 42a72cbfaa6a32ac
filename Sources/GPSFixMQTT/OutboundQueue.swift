/// The messages of one broker connection on their way out: a bounded queue (the oldest
/// dropped when full, counted), the latest retained message of each topic (published
/// again on every connect, unless a newer one is still queued, and when pushed out of the
/// queue), and a window of
/// messages handed to the client library but not yet delivered, so that a slow broker
/// holds messages here, bounded, rather than in the library, unbounded.
struct OutboundQueue {
    private struct Entry {
        var message: MQTTMessage
        var sequence: UInt64
    }

    let capacity: Int
    let window: Int
    /// Whether messages handed to the library and not yet delivered stay with it across a
    /// reconnect: at QoS 1 and 2 libmosquitto keeps them and sends them again (their
    /// acknowledgements still to come), at QoS 0 it drops those not yet written. A
    /// connection's messages all have its QoS.
    private let inFlightOutlivesConnection: Bool
    private var pending: [Entry] = []
    private var republish: [MQTTMessage] = []
    private var retained: [String: Entry] = [:]
    private var nextSequence: UInt64 = 0
    private(set) var connected = false
    private var inFlight = 0
    private(set) var counters = MQTTCounters()

    init(capacity: Int, window: Int, qos: Int = 0) {
        precondition(capacity > 0 && window > 0)
        self.capacity = capacity
        self.window = window
        inFlightOutlivesConnection = qos > 0
    }

    var queued: Int { pending.count + republish.count }

    /// Whether ``next()`` has a message now.
    var canSend: Bool { connected && inFlight < window && queued > 0 }

    mutating func enqueue(_ message: MQTTMessage) {
        let entry = Entry(message: message, sequence: nextSequence)
        nextSequence += 1
        if message.retain {
            retained[message.topic] = entry
            // Newer than the copy waiting to be published again on this connection.
            republish.removeAll { $0.topic == message.topic }
        }
        if pending.count == capacity {
            let dropped = pending.removeFirst()
            counters.dropped += 1
            // A topic's retained state is not lost with it (the broker would keep the last
            // will's, or an older one): it is published again, as at a connect.
            if connected, retained[dropped.message.topic]?.sequence == dropped.sequence { republish.append(dropped.message) }
        }
        pending.append(entry)
    }

    /// A report thinned out by the publishing interval: counted, not sent.
    mutating func skip() {
        counters.skipped += 1
    }

    /// A message received too long to read: counted with the connection's others.
    mutating func ignoreReceived() {
        counters.ignored += 1
    }

    mutating func connectionChanged(connected isConnected: Bool) {
        if isConnected {
            counters.connects += 1
            if !inFlightOutlivesConnection { inFlight = 0 }
            let stillQueued = Set(pending.map(\.sequence))
            republish = retained.values.filter { !stillQueued.contains($0.sequence) }.sorted { $0.sequence < $1.sequence }
                .map(\.message)
        } else {
            republish = []
        }
        connected = isConnected
        counters.connected = isConnected
    }

    /// The next message to hand to the client, counted as in flight; `nil` unless ``canSend``.
    mutating func next() -> MQTTMessage? {
        guard canSend else { return nil }
        inFlight += 1
        return republish.isEmpty ? pending.removeFirst().message : republish.removeFirst()
    }

    mutating func handedOver() {
        counters.published += 1
    }

    /// The client did not take `message`: with the connection gone, it goes back to the
    /// front, to be sent once connected again (the queue full, it is the oldest, dropped
    /// and counted); any other refusal drops it, counted.
    mutating func refused(_ message: MQTTMessage, connectionLost: Bool) {
        inFlight = max(0, inFlight - 1)
        if connectionLost {
            connected = false
            counters.connected = false
            // The retained state it is, if it is: then the next connect does not publish it twice.
            let sequence = retained[message.topic].flatMap { $0.message == message ? $0.sequence : nil } ?? nextSequence
            if sequence == nextSequence { nextSequence += 1 }
            if pending.count < capacity {
                pending.insert(Entry(message: message, sequence: sequence), at: 0)
            } else {
                counters.dropped += 1
            }
        } else {
            counters.failed += 1
        }
    }

    mutating func delivered() {
        inFlight = max(0, inFlight - 1)
        counters.delivered += 1
    }
}

/// What one device's broker connection did since the daemon started.
public struct MQTTCounters: Hashable, Sendable {
    /// Messages handed to the connection.
    public var published = 0
    /// Messages that left for the broker (QoS 0) or that it acknowledged (QoS 1).
    public var delivered = 0
    /// Oldest messages dropped because the queue was full (broker away or slow).
    public var dropped = 0
    /// Reports left out by the publishing interval (`--mqtt-interval`).
    public var skipped = 0
    /// Messages the client library refused for a reason other than a lost connection.
    public var failed = 0
    /// Messages that arrived on a subscribed topic longer than the daemon reads
    /// (``MessagePublisherEvent/maximumReceivedPayload``): not read.
    public var ignored = 0
    /// Connections made, the first included.
    public var connects = 0
    public var connected = false

    public init() {}

    /// One line for the log: `published 120, delivered 120, dropped 0, ...`.
    public var summary: String {
        "\(connected ? "connected" : "not connected"), connects \(connects), published \(published), delivered \(delivered), "
            + "dropped \(dropped) (queue full), skipped \(skipped) (interval), failed \(failed)"
            + (ignored > 0 ? ", ignored \(ignored) (received, too long)" : "")
    }
}
