/// One message for the broker.
public struct MQTTMessage: Equatable, Sendable {
    public var topic: String
    /// A slice, so that a report's bytes are shared with the sockets', not copied.
    public var payload: ArraySlice<UInt8>
    /// 0 (at most once) or 1 (at least once).
    public var qos: Int
    /// Whether the broker keeps it for subscribers that come later.
    public var retain: Bool

    public init(topic: String, payload: ArraySlice<UInt8>, qos: Int = 0, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// What the connection to the broker did.
public enum MessagePublisherEvent: Equatable, Sendable {
    /// Connected (again): the broker takes messages now.
    case connected
    /// The connection is gone or was refused; the publisher reconnects by itself.
    case disconnected(reason: String)
    /// The message with this id left for the broker (QoS 0) or was acknowledged (QoS 1).
    case delivered(id: Int32)
    /// The client library reports a problem (an attempt to connect failed: refused, a
    /// certificate not trusted). The connection's state is unchanged by it.
    case trouble(String)
    /// A message arrived on a topic subscribed to (``MessagePublisher/subscribe(to:)``).
    case received(topic: String, payload: [UInt8])
    /// A message of `bytes` arrived on a topic subscribed to, longer than
    /// ``maximumReceivedPayload``: not copied, not read.
    case oversized(topic: String, bytes: Int)

    /// The longest message read from a subscribed topic: what the daemon reads there is a
    /// word (Home Assistant's `online`); anyone who may publish to the topic could send
    /// megabytes, retained, back at every connect.
    public static let maximumReceivedPayload = 256
}

/// A connection to one MQTT broker, as ``FleetPublisher`` needs it: the seam between the
/// publishing logic (queues, retained state, rate limits) and the client library
/// (``MosquittoPublisher``), so that tests drive the logic with a fake.
///
/// The last will (the message the broker publishes when the connection dies unclean)
/// is part of the publisher's configuration, set before it connects.
public protocol MessagePublisher: AnyObject, Sendable {
    /// Connects in the background and keeps reconnecting, with backoff, until ``stop()``;
    /// every change and delivery is reported through `events`, on any thread.
    func start(events: @escaping @Sendable (MessagePublisherEvent) -> Void) throws(MQTTError)

    /// Topics to subscribe to at every connect, before ``start(events:)``: what arrives on
    /// them is reported as ``MessagePublisherEvent/received(topic:payload:)``.
    func subscribe(to topics: [String])

    /// Hands `message` to the connection without waiting for the network, and returns its
    /// id (reported again in ``MessagePublisherEvent/delivered(id:)``).
    func publish(_ message: MQTTMessage) throws(MQTTError) -> Int32

    /// Disconnects cleanly (so the broker does not publish the last will) and stops,
    /// once what was handed over has been written; for a few seconds at most (a broker
    /// that does not answer is left to its last will), after which it reports nothing
    /// more, an event already on its way aside.
    func stop()
}

/// A failure of the MQTT client library, with its own words.
public struct MQTTError: Error, CustomStringConvertible, Equatable {
    public var description: String
    /// The connection is gone: the message can be published again once it is back.
    public var connectionLost: Bool

    public init(_ description: String, connectionLost: Bool = false) {
        self.description = description
        self.connectionLost = connectionLost
    }
}
