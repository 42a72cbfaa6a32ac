import GPSDProtocol
import GPSFix
@testable import GPSFixMQTT
import GPSFixServer
import Logging
import NMEA
import TestSupport

/// A broker connection the test drives: it records what it is handed, and the test
/// says when it connects, drops and delivers.
final class FakePublisher: MessagePublisher, @unchecked Sendable {
    struct State {
        var sent: [MQTTMessage] = []
        var events: (@Sendable (MessagePublisherEvent) -> Void)?
        var connected = false
        var stopped = false
        var nextID: Int32 = 0
        var subscriptions: [String] = []
    }

    let clientID: String
    let will: MQTTMessage
    let state = Locked(State())

    init(clientID: String, will: MQTTMessage) {
        self.clientID = clientID
        self.will = will
    }

    var sent: [MQTTMessage] { state.withLock { $0.sent } }
    var stopped: Bool { state.withLock { $0.stopped } }

    func start(events: @escaping @Sendable (MessagePublisherEvent) -> Void) throws(MQTTError) {
        state.withLock { $0.events = events }
    }

    func subscribe(to topics: [String]) {
        state.withLock { $0.subscriptions += topics }
    }

    func publish(_ message: MQTTMessage) throws(MQTTError) -> Int32 {
        let id = state.withLock { state -> Int32? in
            guard state.connected else { return nil }
            state.sent.append(message)
            state.nextID += 1
            return state.nextID
        }
        guard let id else { throw MQTTError("not connected", connectionLost: true) }
        return id
    }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// The broker accepts the connection (again).
    func connect() {
        let events = state.withLock { state in
            state.connected = true
            return state.events
        }
        events?(.connected)
    }

    /// The broker goes away.
    func drop() {
        let events = state.withLock { state in
            state.connected = false
            return state.events
        }
        events?(.disconnected(reason: "The connection was lost"))
    }

    /// The client library reports a problem.
    func trouble(_ text: String) {
        state.withLock { $0.events }?(.trouble(text))
    }

    /// A message arrives that is too long to read.
    func receiveOversized(on topic: String, bytes: Int) {
        state.withLock { $0.events }?(.oversized(topic: topic, bytes: bytes))
    }

    /// A message arrives on a topic the publisher subscribed to.
    func receive(on topic: String, _ payload: String) {
        state.withLock { $0.events }?(.received(topic: topic, payload: Array(payload.utf8)))
    }

    /// The broker takes everything sent so far.
    func deliverAll() {
        let (events, ids) = state.withLock { ($0.events, 1...max(1, $0.nextID)) }
        for id in ids { events?(.delivered(id: id)) }
    }

    /// Waits (up to 5 s) until `count` messages have been handed over.
    func waitForSent(_ count: Int) async -> [MQTTMessage] {
        for _ in 0..<500 where sent.count < count {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return sent
    }

    /// Waits (up to 5 s) until the publisher has started.
    func waitUntilStarted() async {
        for _ in 0..<500 where state.withLock({ $0.events == nil }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A publisher for `/dev/ttyUSB0` on fakes, running on its own task.
struct FleetHarness {
    let publisher: FleetPublisher<ManualClock>
    let fakes: Locked<[FakePublisher]>
    let clock: ManualClock
    let task: Task<Void, Never>

    static let device = "/dev/ttyUSB0"

    init(configuration: FleetConfiguration) async throws {
        let fakes = Locked<[FakePublisher]>([])
        let clock = ManualClock()
        let publisher = try FleetPublisher(
            devices: [Self.device], configuration: configuration, clock: clock, logger: Logger(label: "test")
        ) { clientID, will throws(MQTTError) in
            let fake = FakePublisher(clientID: clientID, will: will)
            fakes.withLock { $0.append(fake) }
            return fake
        }
        self.publisher = publisher
        self.fakes = fakes
        self.clock = clock
        task = Task { await publisher.run() }
        await fake.waitUntilStarted()
    }

    var fake: FakePublisher { fakes.withLock { $0[0] } }

    func send(_ fix: Fix) {
        publisher.receive(PublishedReport(device: Self.device, content: .tpv(fix), json: GPSDReport.tpv(fix, device: Self.device)))
    }

    func send(_ sky: SkyView) {
        publisher.receive(PublishedReport(device: Self.device, content: .sky(sky), json: GPSDReport.sky(sky, device: Self.device)))
    }

    func sendDevice(online: Bool) {
        var info = DeviceInfo(path: Self.device)
        info.online = online
        publisher.receive(PublishedReport(device: Self.device, content: .device(info), json: SessionReport.device(info)))
    }
}

/// A 3D fix at `second` past 12:00:00 on 2026-11-23, moving north-east at 10 m/s.
func movingFix(second: Int, fraction: UInt32 = 0) -> Fix {
    var fix = Fix()
    fix.time = GPSTime(year: 2026, month: 11, day: 23, time: NMEATime(hour: 12, minute: 0, second: UInt8(second), nanosecond: fraction))
    fix.mode = .threeDimensional
    fix.latitude = 48.1372 + Double(second) * 0.0001
    fix.longitude = 11.5756
    fix.altitudeMSL = 519.6
    fix.speed = 10
    fix.track = 45.4
    fix.horizontalError = 4.7
    return fix
}

func text(_ bytes: ArraySlice<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}
