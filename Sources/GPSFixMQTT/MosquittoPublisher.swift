import CMosquitto
import NIOConcurrencyHelpers

/// A ``MessagePublisher`` on libmosquitto, the Eclipse Mosquitto client library.
///
/// libmosquitto's own thread (`mosquitto_loop_start`) does the network: it connects,
/// keeps the session alive and reconnects after a loss, waiting 1 s, then twice as long
/// each time up to 30 s. ``publish(_:)`` only queues the packet, so no caller waits for
/// the broker.
public final class MosquittoPublisher: MessagePublisher, @unchecked Sendable {
    /// How to connect.
    public struct Options: Sendable {
        public var broker: MQTTBroker
        /// Unique per connection: a broker drops the older of two with one id.
        public var clientID: String
        /// Published by the broker if the connection dies without a clean disconnect.
        public var will: MQTTMessage?
        /// The certificate authorities for `mqtts://`; the system's (`/etc/ssl/certs`) when `nil`.
        public var certificateAuthorities: String?
        /// Seconds between the pings that tell the broker the connection is alive.
        public var keepAlive: Int

        public init(broker: MQTTBroker, clientID: String, will: MQTTMessage? = nil, certificateAuthorities: String? = nil,
                    keepAlive: Int = 30) {
            self.broker = broker
            self.clientID = clientID
            self.will = will
            self.certificateAuthorities = certificateAuthorities
            self.keepAlive = keepAlive
        }
    }

    public let options: Options
    private let handle: OpaquePointer
    /// Where libmosquitto's callbacks report; set by ``start(events:)``.
    /// Read on libmosquitto's thread: a pthread mutex, which ThreadSanitizer sees.
    private let listener = NIOLockedValueBox<Listener?>(nil)
    /// Whether the network thread runs.
    private let started = NIOLockedValueBox(false)
    /// Subscribed to at every connect; set before the network thread starts.
    private let subscriptions = NIOLockedValueBox<[String]>([])

    /// libmosquitto loaded and `mosquitto_lib_init` called, once per process, before the
    /// first client; or why the library cannot be loaded.
    private static let libraryFailure: String? = {
        if let failure = cmosquitto_load() { return String(cString: failure) }
        mosquitto_lib_init()
        return nil
    }()

    public init(options: Options) throws(MQTTError) {
        if let failure = Self.libraryFailure { throw MQTTError("MQTT needs libmosquitto (Debian: libmosquitto1): \(failure)") }
        self.options = options
        guard let handle = mosquitto_new(options.clientID, true, nil) else {
            throw MQTTError("cannot create an MQTT client: out of memory or a bad client id")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        let broker = options.broker
        if broker.username != nil || broker.password != nil {
            try Self.check(mosquitto_username_pw_set(handle, broker.username, broker.password), "setting the user")
        }
        if let will = options.will {
            try Self.check(will.payload.withUnsafeBytes { payload in
                mosquitto_will_set(handle, will.topic, Int32(payload.count), payload.baseAddress, Int32(will.qos), will.retain)
            }, "setting the last will")
        }
        if broker.usesTLS {
            let authorities = options.certificateAuthorities
            try Self.check(
                mosquitto_tls_set(handle, authorities, authorities == nil ? "/etc/ssl/certs" : nil, nil, nil, nil),
                "setting up TLS")
        }
        try Self.check(mosquitto_reconnect_delay_set(handle, 1, 30, true), "setting the reconnection delay")
        mosquitto_connect_callback_set(handle) { _, context, code in
            let publisher = Unmanaged<MosquittoPublisher>.fromOpaque(context!).takeUnretainedValue()
            if code == 0 { publisher.subscribeAll() }
            publisher.report(code == 0 ? .connected : .disconnected(reason: String(cString: mosquitto_connack_string(code))))
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let message, let topic = message.pointee.topic else { return }
            let publisher = Unmanaged<MosquittoPublisher>.fromOpaque(context!).takeUnretainedValue()
            let count = Int(message.pointee.payloadlen)
            guard count <= MessagePublisherEvent.maximumReceivedPayload else {
                return publisher.report(.oversized(topic: String(cString: topic), bytes: count))
            }
            let payload = message.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
            publisher.report(.received(topic: String(cString: topic), payload: payload))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, code in
            let publisher = Unmanaged<MosquittoPublisher>.fromOpaque(context!).takeUnretainedValue()
            publisher.report(.disconnected(reason: code == 0 ? "disconnected" : MosquittoPublisher.message(code)))
        }
        // A connection that fails before it is made (a refused TLS certificate, a broker
        // that is down) calls no connect or disconnect callback: libmosquitto only logs it.
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let text else { return }
            let publisher = Unmanaged<MosquittoPublisher>.fromOpaque(context!).takeUnretainedValue()
            publisher.report(.trouble(String(cString: text)))
        }
        mosquitto_publish_callback_set(handle) { _, context, id in
            let publisher = Unmanaged<MosquittoPublisher>.fromOpaque(context!).takeUnretainedValue()
            publisher.report(.delivered(id: id))
        }
    }

    deinit {
        // The network thread is stopped as in ``stop()``, joined, never cancelled: a thread
        // cancelled inside the library leaves its locks (and ThreadSanitizer's state) held.
        stop()
        mosquitto_destroy(handle)
    }

    public func start(events: @escaping @Sendable (MessagePublisherEvent) -> Void) throws(MQTTError) {
        listener.withLockedValue { $0 = Listener(events: events) }
        let broker = options.broker
        // A broker that is not there yet fails this first attempt (MOSQ_ERR_ERRNO); the
        // loop thread keeps trying, so only a malformed request is an error here.
        let code = mosquitto_connect_async(handle, broker.host, Int32(broker.port), Int32(options.keepAlive))
        if code != MOSQ_ERR_SUCCESS.rawValue, code != MOSQ_ERR_ERRNO.rawValue {
            throw MQTTError("cannot connect to \(broker.description): \(Self.message(code))")
        }
        if code == MOSQ_ERR_ERRNO.rawValue { report(.trouble("cannot reach the broker")) }
        try Self.check(mosquitto_loop_start(handle), "starting the network thread")
        started.withLockedValue { $0 = true }
    }

    public func subscribe(to topics: [String]) {
        subscriptions.withLockedValue { $0 += topics }
    }

    /// Subscribes to every topic asked for: at each connect, as a clean session forgets them.
    private func subscribeAll() {
        for topic in subscriptions.withLockedValue({ $0 }) { mosquitto_subscribe(handle, nil, topic, 0) }
    }

    public func publish(_ message: MQTTMessage) throws(MQTTError) -> Int32 {
        var id: Int32 = 0
        let code = message.payload.withUnsafeBytes { payload in
            mosquitto_publish(handle, &id, message.topic, Int32(payload.count), payload.baseAddress, Int32(message.qos), message.retain)
        }
        if code == MOSQ_ERR_NO_CONN.rawValue || code == MOSQ_ERR_CONN_LOST.rawValue {
            throw MQTTError("not connected", connectionLost: true)
        }
        try Self.check(code, "publishing to \(message.topic)")
        return id
    }

    public func stop() {
        guard started.withLockedValue({ started in defer { started = false }; return started }) else { return }
        // Queued packets are written before the DISCONNECT, and the loop thread then ends.
        // Not connected, the call still marks the client disconnecting, which wakes the loop
        // thread from its wait to reconnect and ends it: it is joined, never cancelled (a
        // thread cancelled inside the library leaves its locks and ThreadSanitizer's state
        // as they were).
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
    }

    private func report(_ event: MessagePublisherEvent) {
        listener.withLockedValue { $0 }?.events(event)
    }

    /// The listener's closure in a class of its own. Kept bare in the lock's generic box
    /// (`(@Sendable (Event) -> Void)?`), each call of ``report(_:)`` left two 32-byte
    /// objects allocated in it that were never freed, one call per message delivered
    /// (heaptrack; about 300 bytes of resident memory for each fix published with Home
    /// Assistant, the soak test's growth). The closure taken out of the generic box goes
    /// through a reabstraction thunk; a class reference does not.
    private final class Listener: Sendable {
        let events: @Sendable (MessagePublisherEvent) -> Void

        init(events: @escaping @Sendable (MessagePublisherEvent) -> Void) {
            self.events = events
        }
    }

    /// libmosquitto's words for an error code, without the full stop, to fit in a log line.
    static func message(_ code: Int32) -> String {
        var text = String(cString: mosquitto_strerror(code))
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func check(_ code: Int32, _ what: String) throws(MQTTError) {
        guard code != MOSQ_ERR_SUCCESS.rawValue else { return }
        throw MQTTError("\(what): \(Self.message(code))")
    }
}
