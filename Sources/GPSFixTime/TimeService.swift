import GPSFix
import Logging
import NIOConcurrencyHelpers

/// The time service: receiver time and pulses to the clock disciplines (chrony, ntpd),
/// as gpsd serves them, beside the hub and never in its way.
///
/// Receiver times are offered from the devices' tasks into a bounded queue (the newest
/// kept) and sent from the service's own task, corrected by the device's time offset.
/// Each pulse is paired with the receiver's time (``PulsePairing``) and sent when the
/// pair holds; a receiver's word on a pulse just past goes through the same queue, and
/// sends the pulse it held for it. What is sent is reported through `report` (gpsd's TOFF and PPS objects).
public final class TimeService: Sendable {
    /// gpsd's precision for receiver time from NMEA: half a second.
    public static let receiverTimePrecision = -1
    /// Receiver times and words on pulses past waiting to be taken, at most.
    static let queueCapacity = 16

    /// One device's time service.
    public struct Device: Sendable {
        /// The device's name, as clients see it.
        public var name: String
        public var receiverTimeSinks: [any TimeSink]
        public var pulseSinks: [any TimeSink]
        public var pulses: (any PulseSource)?
        /// The receiver's known delay: its time is observed this much later than it is.
        public var timeOffset: Duration
        /// A power of two seconds: -20 (a microsecond) for a serial port's pulse, -10 over USB.
        public var pulsePrecision: Int
        /// The NTP shared-memory units the sinks write, for the reports.
        public var receiverTimeUnit: Int?
        public var pulseUnit: Int?

        public init(
            name: String, receiverTimeSinks: [any TimeSink] = [], pulseSinks: [any TimeSink] = [],
            pulses: (any PulseSource)? = nil, timeOffset: Duration = .zero, pulsePrecision: Int = PulsePrecision.kernel,
            receiverTimeUnit: Int? = nil, pulseUnit: Int? = nil
        ) {
            self.name = name
            self.receiverTimeSinks = receiverTimeSinks
            self.pulseSinks = pulseSinks
            self.pulses = pulses
            self.timeOffset = timeOffset
            self.pulsePrecision = pulsePrecision
            self.receiverTimeUnit = receiverTimeUnit
            self.pulseUnit = pulseUnit
        }
    }

    private let devices: [Device]
    private let states: [String: DeviceState]
    /// What the devices' tasks offer the service's own task.
    private enum Offer {
        case receiverTime(TimeSample)
        case pastPulse(PulseAnnouncement)
    }

    private let queue: AsyncStream<(device: String, offer: Offer)>
    private let enqueue: AsyncStream<(device: String, offer: Offer)>.Continuation
    private let report: @Sendable (TimeReport, String) -> Void
    private let logger: Logger
    /// What the waits between a pulse device's openings sleep on.
    private let clock: any Clock<Duration>

    /// The service of `devices`; `report` sees what each sample became. A pulse device
    /// that fails is opened again after waits on `clock`.
    public init(
        devices: [Device], logger: Logger, clock: any Clock<Duration> = ContinuousClock(),
        report: @escaping @Sendable (TimeReport, String) -> Void
    ) {
        self.devices = devices
        self.clock = clock
        var states: [String: DeviceState] = [:]
        for device in devices { states[device.name] = DeviceState() }
        self.states = states
        (queue, enqueue) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.queueCapacity))
        self.report = report
        self.logger = logger
    }

    /// Whether `device` is served (a pseudo-terminal or a file is not, by default).
    public func serves(_ device: String) -> Bool { states[device] != nil }

    /// Offers a receiver time of `device`, from any task; never waits. A sample the
    /// queue has no room for pushes out the oldest, counted.
    public func offer(_ sample: TimeSample, of device: String) {
        guard states[device] != nil else { return }
        countDropped(enqueue.yield((device, .receiverTime(sample))))
    }

    /// The receiver's word on a pulse: the pulse that marks that second is corrected by
    /// its quantisation error. Its next pulse (u-blox TIM-TP) is noted at once; the pulse
    /// just past (Trimble 0x8F-AB/0x8F-AC), held for it, is sent from the queue.
    public func offer(_ announcement: PulseAnnouncement, of device: String) {
        guard let state = states[device] else { return }
        switch announcement.pulse {
        case .next: _ = state.withLock { $0.pairing.note(announcement) }
        case .past:
            // Dropped, the pulse it speaks of goes out uncorrected: counted as a receiver time lost.
            countDropped(enqueue.yield((device, .pastPulse(announcement))))
        }
    }

    /// What a full queue pushed out for an offer is counted against the device that
    /// offered it, which need not be the device offering now.
    private func countDropped(_ result: AsyncStream<(device: String, offer: Offer)>.Continuation.YieldResult) {
        guard case .dropped(let pushedOut) = result, let state = states[pushedOut.device] else { return }
        state.withLock { $0.counters.receiverTimesDropped += 1 }
    }

    /// Sends what is offered and waits for pulses, until cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.sendOffered() }
            for device in devices {
                guard let source = device.pulses else { continue }
                group.addTask { await self.sendPulses(of: device, from: source) }
            }
            await group.waitForAll()
        }
    }

    /// Each served device's counters, in the order given.
    public func counters() -> [(device: String, counters: TimeServiceCounters)] {
        devices.compactMap { device in states[device.name].map { (device.name, $0.withLock { $0.counters }) } }
    }

    /// A short part for the status line: `time: 120 samples, 118 pulses (2 dropped)`.
    public var status: String {
        let all = counters().map(\.counters)
        let pulses = all.reduce(0) { $0 + $1.pulsesSeen }
        let dropped = all.reduce(0) { $0 + $1.pulsesDropped.values.reduce(0, +) }
        var text = "time: \(all.reduce(0) { $0 + $1.receiverTimes }) samples"
        if pulses > 0 { text += ", \(pulses) pulses" + (dropped > 0 ? " (\(dropped) dropped)" : "") }
        return text
    }

    private func sendOffered() async {
        let byName = Dictionary(devices.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for await (name, offer) in queue {
            guard let device = byName[name], let state = states[name] else { continue }
            let observed: TimeSample
            switch offer {
            case .receiverTime(let sample):
                observed = sample
            case .pastPulse(let announcement):
                if let pulse = state.withLock({ $0.pairing.note(announcement) }) { send(pulse, of: device, state: state) }
                continue
            }
            // A receiver whose sentences arrive late is corrected by moving the observation
            // back. Pulses are paired with the time as read, as gpsd pairs them: against the
            // corrected one, an offset as large as the lag would put the next pulse a
            // second after it, where half of them are late.
            let sample = TimeSample(real: observed.real, clock: observed.clock - device.timeOffset, leap: observed.leap)
            state.withLock { state in
                state.counters.receiverTimes += 1
                state.pairing.note(observed)
            }
            deliver(sample, of: device, to: device.receiverTimeSinks, precision: Self.receiverTimePrecision, state: state)
            report(TimeReport(kind: .receiverTime, sample: sample, precision: Self.receiverTimePrecision,
                              sharedMemoryUnit: device.receiverTimeUnit), name)
        }
    }

    /// The longest wait between a failed pulse device's openings.
    static let maximumReopeningWait = Duration.seconds(30)

    /// Takes the device's pulses; a source that fails (a `/dev/ppsN` unplugged with its
    /// receiver, or not there yet when the daemon starts) is opened again after a wait
    /// that doubles from a second, the outage logged once, and its return. A line that
    /// cannot report its carrier at all is not.
    private func sendPulses(of device: Device, from source: any PulseSource) async {
        let metadata: Logger.Metadata = ["device": "\(device.name)", "pps": "\(source.name)"]
        logger.info("waiting for pulses", metadata: metadata)
        var wait = Duration.seconds(1)
        var failing = false
        while !Task.isCancelled {
            do {
                try await takePulses(of: device, from: source) {
                    if failing { logger.info("pulses again", metadata: metadata) }
                    failing = false
                    wait = .seconds(1)
                }
                return
            } catch PulseSourceError.noModemStatus {
                // The line can never report its carrier: nothing to open again.
                logger.warning("no pulses: \(source.name) cannot report carrier-detect changes", metadata: metadata)
                return
            } catch {
                if Task.isCancelled { return }
                if !failing { logger.warning("no pulses: \(error); opening it again until it answers", metadata: metadata) }
                failing = true
            }
            guard (try? await clock.sleep(for: wait)) != nil else { return }
            wait = min(wait * 2, Self.maximumReopeningWait)
        }
    }

    /// Takes the source's pulses until it ends (returns) or fails (throws); `arrived`
    /// runs with each edge.
    private func takePulses(of device: Device, from source: any PulseSource, arrived: () -> Void) async throws {
        guard let state = states[device.name] else { return }
        var droppedBefore = 0
        for try await edge in source.pulses() {
            arrived()
            let overrun = edge.droppedBefore - droppedBefore
            droppedBefore = edge.droppedBefore
            let (overdue, pulse) = state.withLock { state -> (TimeSample?, PulsePairing.Paired?) in
                state.counters.pulsesSeen += 1 + overrun
                if overrun > 0 { state.counters.pulsesDropped[.overrun, default: 0] += overrun }
                let (overdue, paired) = state.pairing.take(edge.time)
                // What is to be sent of each outcome; a rejection counted instead.
                func kept<Value>(_ outcome: Result<Value, PulseRejection>) -> Value? {
                    if case .failure(let why) = outcome { state.counters.pulsesDropped[why, default: 0] += 1 }
                    return try? outcome.get()
                }
                return (overdue.flatMap(kept), kept(paired) ?? nil)
            }
            if let overdue { send((overdue, nil), of: device, state: state) }
            if let pulse { send(pulse, of: device, state: state) }
        }
    }

    /// Sends a pulse's sample to the device's pulse sinks, and reports it.
    private func send(_ pulse: PulsePairing.Paired, of device: Device, state: DeviceState) {
        deliver(pulse.sample, of: device, to: device.pulseSinks, precision: device.pulsePrecision, state: state)
        report(TimeReport(kind: .pulse, sample: pulse.sample, precision: device.pulsePrecision,
                          sharedMemoryUnit: device.pulseUnit, quantisationError: pulse.correction), device.name)
    }

    /// Sends to every sink, counting; a sink's first failure in a row is logged, and its
    /// recovery.
    private func deliver(_ sample: TimeSample, of device: Device, to sinks: [any TimeSink], precision: Int, state: DeviceState) {
        for sink in sinks {
            let failure: TimeSinkError?
            do throws(TimeSinkError) {
                try sink.send(sample, precision: precision)
                failure = nil
            } catch {
                failure = error
            }
            let wasFailing = state.withLock { state in
                let wasFailing = state.failing.contains(sink.name)
                if failure != nil {
                    state.counters.failed[sink.name, default: 0] += 1
                    state.failing.insert(sink.name)
                } else {
                    state.counters.sent[sink.name, default: 0] += 1
                    state.failing.remove(sink.name)
                }
                return wasFailing
            }
            if let failure, !wasFailing {
                // chronyd not configured for this device is common and harmless: said once, quietly.
                let level: Logger.Level = if case .noListener = failure { .info } else { .warning }
                logger.log(level: level, "time samples not delivered: \(failure)",
                           metadata: ["device": "\(device.name)", "sink": "\(sink.name)"])
            } else if wasFailing, failure == nil {
                logger.info("time samples delivered again", metadata: ["device": "\(device.name)", "sink": "\(sink.name)"])
            }
        }
    }
}

/// What one device's time service has done.
public struct TimeServiceCounters: Hashable, Sendable {
    /// Receiver times taken from the queue and sent.
    public var receiverTimes = 0
    /// Receiver times, and receivers' words on a pulse just past, pushed out of a full queue.
    public var receiverTimesDropped = 0
    /// Samples each sink took, and those it did not, by sink name.
    public var sent: [String: Int] = [:]
    public var failed: [String: Int] = [:]
    public var pulsesSeen = 0
    public var pulsesDropped: [PulseRejection: Int] = [:]

    public init() {}

    /// One line for the log: `receiver times 120; pulses 118 (dropped: no fix 2); chrony:/run/... 120, shm:NTP0 120`.
    public var summary: String {
        var parts = ["receiver times \(receiverTimes)" + (receiverTimesDropped > 0 ? " (\(receiverTimesDropped) dropped, queue full)" : "")]
        if pulsesSeen > 0 {
            let dropped = PulseRejection.allCases.compactMap { why in pulsesDropped[why].map { "\(why) \($0)" } }
            parts.append("pulses \(pulsesSeen)" + (dropped.isEmpty ? "" : " (dropped: \(dropped.joined(separator: ", ")))"))
        }
        for name in Set(sent.keys).union(failed.keys).sorted() {
            let notTaken = failed[name].map { ", \($0) not delivered" } ?? ""
            parts.append("\(name) \(sent[name] ?? 0)\(notTaken)")
        }
        return parts.joined(separator: "; ")
    }
}

/// One device's pairing state and counters, shared by its receiver-time and pulse tasks
/// and read by whoever asks for the counters: behind a pthread mutex, which ThreadSanitizer
/// sees (the Synchronization module's `Mutex` waits on a futex it does not model).
private final class DeviceState: Sendable {
    struct Values {
        var pairing = PulsePairing()
        var counters = TimeServiceCounters()
        /// Sinks whose last send failed.
        var failing: Set<String> = []
    }

    private let values = NIOLockedValueBox(Values())

    func withLock<Result>(_ body: (inout Values) -> Result) -> Result { values.withLockedValue { body(&$0) } }
}
