import CMosquitto
import GPSFixDevices
import NIOConcurrencyHelpers

/// A ``MessagePublisher`` on libmosquitto, the Eclipse Mosquitto client library.
///
/// A thread of the publisher's own runs libmosquitto's network loop: it connects, keeps
/// the session alive and reconnects after a loss, waiting 1 s, then longer each time (4,
/// 9, 16, 25 s) up to 30 s. ``publish(_:)`` only queues the packet, so no caller waits for
/// the broker.
///
/// The loop is libmosquitto's `mosquitto_loop_forever`, not the thread of
/// `mosquitto_loop_start`: that loop gives up for good, without a callback, on a TLS
/// failure (a certificate refused while a broker's is renewed, a captive portal on 8883),
/// and its thread then ends; here the loop is run again, after a wait that doubles from 1 s
/// to 30 s. The first
/// connection is made on that thread too, blocking: `mosquitto_connect_async` with TLS spins
/// a core while the broker refuses (libmosquitto's issue 2594), and a broker's name that
/// does not resolve yet (no network at boot) is retried, not taken as a malformed address.
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
    /// Whether the network thread was started, and not yet stopped.
    private let running = NIOLockedValueBox(false)
    /// Signalled, for good, once ``stop()`` is called: ends the network thread's waits
    /// between loops (on the monotonic clock).
    private let stopping: WakeupPipe
    /// Signalled once the network thread has left libmosquitto for good.
    private let finished: WakeupPipe
    /// Whether a connection was made since the network loop last gave up.
    private let connectedSinceFailure = NIOLockedValueBox(false)
    /// Subscribed to at every connect; set before the network thread starts.
    private let subscriptions = NIOLockedValueBox<[String]>([])

    /// libmosquitto loaded and `mosquitto_lib_init` called, once per process, before the
    /// first client; or why the library cannot be loaded.
    private static let libraryFailure: String? = {
        if let failure = cmosquitto_load() { return String(cString: failure) }
        mosquitto_lib_init()
        return nil
    }()

    /// Why MQTT cannot be used in this process (libmosquitto cannot be loaded), or `nil`.
    public static var unavailability: String? {
        Self.libraryFailure.map { "MQTT needs libmosquitto (Debian: libmosquitto1): \($0)" }
    }

    public init(options: Options) throws(MQTTError) {
        if let reason = Self.unavailability { throw MQTTError(reason) }
        self.options = options
        do {
            (stopping, finished) = (try WakeupPipe(), try WakeupPipe())
        } catch {
            throw MQTTError("cannot make the network thread's pipes: \(error)")
        }
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
        try Self.check(mosquitto_threaded_set(handle, true), "setting up the network thread")
        mosquitto_connect_callback_set(handle) { _, context, code in
            let publisher = Unmanaged<MosquittoPublisher>.fromOpaque(context!).takeUnretainedValue()
            if code == 0 {
                publisher.connectedSinceFailure.withLockedValue { $0 = true }
                publisher.subscribeAll()
            }
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
        // The network thread's closure holds this publisher: deinit runs only once it has
        // ended, after ``stop()`` (never cancelled: a thread cancelled inside the library
        // leaves its locks, and ThreadSanitizer's state, held).
        mosquitto_destroy(handle)
    }

    public func start(events: @escaping @Sendable (MessagePublisherEvent) -> Void) throws(MQTTError) {
        listener.withLockedValue { $0 = Listener(events: events) }
        guard DeviceThread.start(named: "gpsfix-mqtt", { [self] in runNetwork() }) else {
            throw MQTTError("cannot start the network thread: the system has no thread to give")
        }
        running.withLockedValue { $0 = true }
    }

    /// The network thread's body: connects, then runs libmosquitto's loop until
    /// ``stop()``, again after a wait whenever it gives up.
    private func runNetwork() {
        defer { finished.signal() }
        guard !stopping.isSignalled(within: .zero) else { return }
        let broker = options.broker
        // Failed, the connection is made again by the loop (its host and port are kept).
        let first = mosquitto_connect(handle, broker.host, Int32(broker.port), Int32(options.keepAlive))
        if first != MOSQ_ERR_SUCCESS.rawValue { report(.trouble("cannot reach the broker: \(Self.message(first))")) }
        var wait = 1
        while !stopping.isSignalled(within: .zero) {
            let code = mosquitto_loop_forever(handle, -1, 1)
            if stopping.isSignalled(within: .zero) { break }
            if connectedSinceFailure.withLockedValue({ connected in defer { connected = false }; return connected }) { wait = 1 }
            report(.disconnected(reason: Self.message(code)))
            if stopping.isSignalled(within: .seconds(wait)) { break }
            wait = min(wait * 2, 30)
            // Failed, the loop's own reconnection takes over.
            _ = mosquitto_reconnect(handle)
        }
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
        guard running.withLockedValue({ running in defer { running = false }; return running }) else { return }
        stopping.signal()
        // Queued packets are written before the DISCONNECT, and the loop then ends. Not
        // connected, the call still marks the client disconnecting, which wakes the loop
        // from its wait to reconnect and ends it. Said again each second: a connection
        // being made meanwhile marks the client connecting once more. The thread is
        // waited for, never cancelled (a thread cancelled inside the library leaves its
        // locks and ThreadSanitizer's state as they were), for a bounded time: a connect
        // blocked on a broker whose replies are dropped (a firewall, a dead link) lasts
        // the kernel's two minutes, longer than a stop may. The thread then ends on its own,
        // or with the process; its closure keeps this publisher, and so its handle, alive.
        for _ in 0..<Self.stopAttempts {
            mosquitto_disconnect(handle)
            if finished.isSignalled(within: .seconds(1)) { return }
        }
        // Given up: whatever the thread still sees reaches no one.
        listener.withLockedValue { $0 = nil }
    }

    /// The tries ``stop()`` makes, a second each, before it leaves the network thread be.
    static let stopAttempts = 3

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
