#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import GPSFixTime
import Logging
import TestSupport
import Testing

/// Pulses at set moments of a manual clock, each stamped `epoch` plus that moment, as a
/// kernel would stamp them.
struct ManualPulses: PulseSource {
    let clock: ManualClock
    let epoch: WallTime
    let moments: [Duration]
    var name: String { "manual pulses" }

    func pulses() -> AsyncThrowingStream<PulseEdge, any Error> {
        let (clock, epoch, moments) = (self.clock, self.epoch, self.moments)
        return AsyncThrowingStream { continuation in
            let task = Task {
                var now = Duration.zero
                for moment in moments {
                    try await clock.sleep(for: moment - now)
                    now = moment
                    continuation.yield(PulseEdge(time: epoch + moment))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// A pulse device that is not there (unplugged, or its udev rule not run yet) for its
/// first `failures` openings, then sends `then`'s pulses.
struct ReturningPulses: PulseSource {
    let failures: Int
    let then: ManualPulses
    let openings = Locked(0)
    var name: String { "/dev/pps0" }

    func pulses() -> AsyncThrowingStream<PulseEdge, any Error> {
        let opening = openings.withLock { count in
            count += 1
            return count
        }
        guard opening > failures else {
            return AsyncThrowingStream { $0.finish(throwing: PulseSourceError.system(path: name, call: "open", errno: ENOENT)) }
        }
        return then.pulses()
    }
}

/// A sink that keeps what it is sent.
final class RecordingSink: TimeSink {
    let name: String
    let received = Locked<[(sample: TimeSample, precision: Int)]>([])

    init(name: String) { self.name = name }

    func send(_ sample: TimeSample, precision: Int) throws(TimeSinkError) {
        received.withLock { $0.append((sample, precision)) }
    }

    var samples: [TimeSample] { received.withLock { $0.map(\.sample) } }
}

/// Waits, on the real clock, until `condition` holds (at most five seconds).
func eventually(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
}

/// A time service whose pulses come at `moments` of a manual clock, and whose receiver has
/// spoken of second 0's pulse after it (Trimble 0x8F-AB): the pulse of second 1, at the
/// first moment, is held for the receiver's word on it.
struct HeldPulseRig {
    let device = "/dev/ttyS0"
    let epoch: WallTime
    let clock = ManualClock()
    let receiverSink = RecordingSink(name: "receiver"), pulseSink = RecordingSink(name: "pulse")
    let service: TimeService
    var counters: TimeServiceCounters { service.counters()[0].counters }

    init(epoch: WallTime, moments: [Duration]) {
        self.epoch = epoch
        let pulses = ManualPulses(clock: clock, epoch: epoch, moments: moments)
        service = TimeService(
            devices: [.init(name: device, receiverTimeSinks: [receiverSink], pulseSinks: [pulseSink], pulses: pulses)],
            logger: Logger(label: "test")
        ) { _, _ in }
    }

    /// Runs the service, takes the first pulse (held), then runs `body`.
    func run(_ body: () async throws -> Void) async throws {
        let running = Task { await service.run() }
        defer { running.cancel() }
        service.offer(PulseAnnouncement(second: epoch.seconds, quantisationError: .nanoseconds(3), pulse: .past), of: device)
        service.offer(TimeSample(real: WallTime(seconds: epoch.seconds), clock: epoch + .milliseconds(200)), of: device)
        try await eventually { !receiverSink.samples.isEmpty }
        await clock.advanceWhenSleeping(by: .seconds(1))
        try await eventually { counters.pulsesSeen == 1 }
        try await body()
    }
}

@Suite("Pulses paired with the receiver's time", .timeLimit(.minutes(1)))
struct PairingTests {
    let epoch = WallTime(seconds: 1_800_000_000)

    @Test("a pulse marks the second after the receiver time read before it; without a fix or late, it is dropped and counted")
    func pairing() async throws {
        let clock = ManualClock()
        // Before any receiver time; a second after one; 1.7 s after it (late); 2.8 s after it (no fix any more).
        let pulses = ManualPulses(clock: clock, epoch: epoch, moments: [.milliseconds(500), .seconds(2), .milliseconds(2900), .seconds(4)])
        let receiverSink = RecordingSink(name: "receiver"), pulseSink = RecordingSink(name: "pulse")
        let reports = Locked<[TimeReport]>([])
        let service = TimeService(
            devices: [
                .init(name: "/dev/ttyS0", receiverTimeSinks: [receiverSink], pulseSinks: [pulseSink], pulses: pulses,
                      timeOffset: .milliseconds(100), receiverTimeUnit: 0, pulseUnit: 1)
            ],
            logger: Logger(label: "test")
        ) { report, _ in reports.withLock { $0.append(report) } }
        let running = Task { await service.run() }
        defer { running.cancel() }
        var counters: TimeServiceCounters { service.counters()[0].counters }

        await clock.advanceWhenSleeping(by: .milliseconds(500))
        try await eventually { counters.pulsesSeen == 1 }
        #expect(counters.pulsesDropped == [.noFix: 1])

        // The receiver's time for second 1, its first sentence read 1.2 s after the epoch,
        // corrected by the 0.1 s offset.
        service.offer(TimeSample(real: WallTime(seconds: epoch.seconds + 1), clock: epoch + .milliseconds(1200)), of: "/dev/ttyS0")
        try await eventually { !reports.withLock(\.isEmpty) }
        let corrected = TimeSample(real: WallTime(seconds: epoch.seconds + 1), clock: epoch + .milliseconds(1100))
        #expect(receiverSink.samples == [corrected])
        #expect(receiverSink.received.withLock { $0.map(\.precision) } == [-1])
        #expect(reports.withLock { $0 } == [TimeReport(kind: .receiverTime, sample: corrected, precision: -1, sharedMemoryUnit: 0)])

        await clock.advanceWhenSleeping(by: .milliseconds(1500))  // 2.0 s
        try await eventually { counters.pulsesSeen == 2 }
        let paired = TimeSample(real: WallTime(seconds: epoch.seconds + 2), clock: epoch + .seconds(2))
        #expect(pulseSink.samples == [paired])
        try await eventually { reports.withLock(\.count) == 2 }
        #expect(reports.withLock { $0.last } == TimeReport(kind: .pulse, sample: paired, precision: -20, sharedMemoryUnit: 1))

        await clock.advanceWhenSleeping(by: .milliseconds(900))  // 2.9 s: 1.7 s after the receiver time was read
        await clock.advanceWhenSleeping(by: .milliseconds(1100))  // 4.0 s: 2.8 s after it
        try await eventually { counters.pulsesSeen == 4 }
        #expect(counters.pulsesDropped == [.noFix: 2, .late: 1])
        #expect(pulseSink.samples == [paired], "only the paired pulse reached the clock")
        #expect(counters.sent == ["receiver": 1, "pulse": 1])
        #expect(counters.summary.contains("pulses 4 (dropped: no fix 2, late 1)"), "\(counters.summary)")
    }

    @Test("--time-offset corrects the receiver's time for the clock, not the pairing: an offset as large as the sentences' lag drops no pulse")
    func offsetLeavesPairing() async throws {
        let clock = ManualClock()
        let pulses = ManualPulses(clock: clock, epoch: epoch, moments: [.seconds(2)])
        let receiverSink = RecordingSink(name: "receiver"), pulseSink = RecordingSink(name: "pulse")
        let service = TimeService(
            devices: [
                .init(name: "/dev/ttyS0", receiverTimeSinks: [receiverSink], pulseSinks: [pulseSink], pulses: pulses,
                      timeOffset: .milliseconds(300), receiverTimeUnit: 0, pulseUnit: 1)
            ],
            logger: Logger(label: "test")
        ) { _, _ in }
        let running = Task { await service.run() }
        defer { running.cancel() }
        var counters: TimeServiceCounters { service.counters()[0].counters }

        // Second 1's time, its sentence read 0.25 s into it, from a receiver whose
        // sentences the operator measured to lag by 0.3 s.
        service.offer(TimeSample(real: WallTime(seconds: epoch.seconds + 1), clock: epoch + .milliseconds(1250)), of: "/dev/ttyS0")
        try await eventually { receiverSink.samples.count == 1 }
        #expect(receiverSink.samples == [TimeSample(real: WallTime(seconds: epoch.seconds + 1), clock: epoch + .milliseconds(950))])
        // The pulse that begins second 2: 0.75 s after the time was read, 1.05 s after the
        // corrected clock.
        await clock.advanceWhenSleeping(by: .seconds(2))
        try await eventually { counters.pulsesSeen == 1 }
        #expect(counters.pulsesDropped.isEmpty, "\(counters.pulsesDropped)")
        #expect(pulseSink.samples == [TimeSample(real: WallTime(seconds: epoch.seconds + 2), clock: epoch + .seconds(2))])
    }

    @Test("a pulse device that fails (unplugged, or not there yet) is opened again after a wait on the clock that doubles, and its pulses are taken again")
    func pulseDeviceBack() async throws {
        let clock = ManualClock()
        let pulses = ReturningPulses(failures: 2, then: ManualPulses(clock: clock, epoch: epoch, moments: [.milliseconds(500)]))
        let service = TimeService(
            devices: [.init(name: "/dev/ttyS0", pulseSinks: [RecordingSink(name: "pulse")], pulses: pulses)],
            logger: Logger(label: "test"), clock: clock
        ) { _, _ in }
        let running = Task { await service.run() }
        defer { running.cancel() }
        /// Advances the clock by `step` once a task sleeps on it (within five seconds).
        func advanceOnceSleeping(by step: Duration) async throws {
            try await eventually { clock.sleeping > 0 }
            try #require(clock.sleeping > 0, "nothing waits on the clock after \(pulses.openings.withLock { $0 }) openings")
            clock.advance(by: step)
        }
        try await advanceOnceSleeping(by: .seconds(1))
        try await eventually { pulses.openings.withLock { $0 } == 2 }
        try await advanceOnceSleeping(by: .milliseconds(1999))
        // The advance wakes what is due at once: the wait is still asleep.
        #expect(clock.sleeping == 1, "the second wait is two seconds")
        clock.advance(by: .milliseconds(1))
        try await eventually { pulses.openings.withLock { $0 } == 3 }
        try await advanceOnceSleeping(by: .milliseconds(500))
        try await eventually { service.counters()[0].counters.pulsesSeen == 1 }
        #expect(service.counters()[0].counters.pulsesSeen == 1)
    }

    @Test("the pairing rule: the next second within a second, late up to two, no fix after; a pulse before the time is early")
    func pairingRule() {
        var pairing = PulsePairing()
        #expect(pairing.pair(epoch) == .failure(.noFix))
        pairing.note(TimeSample(real: WallTime(seconds: epoch.seconds + 10, nanoseconds: 200_000_000), clock: epoch + .milliseconds(300)))
        #expect(pairing.pair(epoch + .milliseconds(200)) == .failure(.early))
        #expect(pairing.pair(epoch + .milliseconds(1000)) == .success(TimeSample(real: WallTime(seconds: epoch.seconds + 11), clock: epoch + .seconds(1))))
        #expect(pairing.pair(epoch + .milliseconds(1300)) == .success(TimeSample(real: WallTime(seconds: epoch.seconds + 11), clock: epoch + .milliseconds(1300))))
        #expect(pairing.pair(epoch + .milliseconds(1301)) == .failure(.late))
        #expect(pairing.pair(epoch + .milliseconds(2301)) == .failure(.noFix))
    }

    @Test("a second edge for a second already paired is noise: dropped as repeated, the next second paired again")
    func repeatedEdge() throws {
        var pairing = PulsePairing()
        pairing.note(TimeSample(real: WallTime(seconds: epoch.seconds + 10), clock: epoch))
        let pulse = try pairing.pairWithCorrection(epoch + .milliseconds(900)).get()
        #expect(pairing.hold(pulse) != nil)
        #expect(pairing.pair(epoch + .milliseconds(950)) == .failure(.repeated))
        pairing.note(TimeSample(real: WallTime(seconds: epoch.seconds + 11), clock: epoch + .seconds(1)))
        #expect(pairing.pair(epoch + .milliseconds(1900)) == .success(TimeSample(real: WallTime(seconds: epoch.seconds + 12), clock: epoch + .milliseconds(1900))))
    }

    @Test("a pulse the receiver announced (TIM-TP) is moved by its quantisation error; one announced for another second is not")
    func quantisationError() {
        var pairing = PulsePairing()
        pairing.note(TimeSample(real: WallTime(seconds: epoch.seconds + 10), clock: epoch + .milliseconds(100)))
        // The edge of second 11 comes 15 ns early: the second truly began 15 ns after it.
        pairing.note(PulseAnnouncement(second: epoch.seconds + 11, quantisationError: .nanoseconds(15)))
        let edge = epoch + .seconds(1)
        let corrected = TimeSample(real: WallTime(seconds: epoch.seconds + 11), clock: edge + .nanoseconds(15))
        #expect(pairing.pair(edge) == .success(corrected))
        #expect(pairing.pairWithCorrection(edge).map(\.correction) == .success(.nanoseconds(15)))
        // An announcement for another second leaves the pulse as it was captured.
        pairing.note(PulseAnnouncement(second: epoch.seconds + 12, quantisationError: .nanoseconds(15)))
        #expect(pairing.pair(edge) == .success(TimeSample(real: WallTime(seconds: epoch.seconds + 11), clock: edge)))
    }

    @Test("a pulse a receiver speaks of after it (TSIP 0x8F-AB/0x8F-AC) is held for its word and moved by its error; one whose word does not come goes uncorrected")
    func pastPulse() throws {
        var pairing = PulsePairing()
        func pulse(_ second: Int) throws -> PulsePairing.Paired {
            pairing.note(TimeSample(real: WallTime(seconds: epoch.seconds + second - 1), clock: epoch + .seconds(second - 1) + .milliseconds(100)))
            return try pairing.pairWithCorrection(epoch + .seconds(second)).get()
        }
        // Before the receiver has spoken of a pulse: sent at once, uncorrected.
        let first = try pulse(11)
        #expect(pairing.hold(first).map(\.correction) == .some(nil))
        pairing.note(PulseAnnouncement(second: epoch.seconds + 11, quantisationError: .nanoseconds(9), pulse: .past))
        // Second 12's pulse waits for its word, which moves it by its error.
        #expect(pairing.takeOverdue(at: epoch + .seconds(12)) == nil)
        #expect(pairing.hold(try pulse(12)) == nil)
        let word = pairing.note(PulseAnnouncement(second: epoch.seconds + 12, quantisationError: .nanoseconds(-7), pulse: .past))
        let released = try #require(word)
        #expect(released.sample == TimeSample(real: WallTime(seconds: epoch.seconds + 12), clock: epoch + .seconds(12) - .nanoseconds(7)))
        #expect(released.correction == .nanoseconds(-7))
        // Second 13's word never comes: at the next pulse it is given back as captured.
        #expect(pairing.hold(try pulse(13)) == nil)
        #expect(pairing.takeOverdue(at: epoch + .seconds(14)) == .success(TimeSample(real: WallTime(seconds: epoch.seconds + 13), clock: epoch + .seconds(13))))
        #expect(pairing.hold(try pulse(14)).map(\.correction) == .some(nil))
    }

    @Test("a pulse held for a word that never comes is not sent when the next pulse comes long after it (the pulses stopped a while): a clock is given no sample that old")
    func stalePastPulse() throws {
        // Second 12's pulse, held: the receiver spoke of second 11's after it.
        let held = TimeSample(real: WallTime(seconds: epoch.seconds + 12), clock: epoch + .seconds(12))
        func holding() throws -> PulsePairing {
            var pairing = PulsePairing()
            pairing.note(PulseAnnouncement(second: epoch.seconds + 11, quantisationError: .nanoseconds(9), pulse: .past))
            pairing.note(TimeSample(real: WallTime(seconds: epoch.seconds + 11), clock: epoch + .seconds(11) + .milliseconds(100)))
            #expect(pairing.hold(try pairing.pairWithCorrection(held.clock).get()) == nil)
            return pairing
        }
        // The next edge an hour later: the held pulse is dropped, and this one pairs with nothing.
        var pairing = try holding()
        let (overdue, pulse) = pairing.take(epoch + .seconds(3612))
        #expect(overdue == .failure(.stale))
        #expect(pulse.map { $0 != nil } == .failure(.noFix))
        // Nothing is held after it.
        #expect(pairing.takeOverdue(at: epoch + .seconds(3613)) == nil)
        // The next edge two seconds and a little after it (an edge lost between) still gives
        // the held pulse back; three seconds after, or before it (the clock stepped back), not.
        for (next, sent) in [(Duration.seconds(2) + .microseconds(10), true), (.seconds(3), false), (.milliseconds(-500), false)] {
            var prompt = try holding()
            #expect(prompt.takeOverdue(at: held.clock + next) == (sent ? .success(held) : .failure(.stale)), "next edge \(next) after")
        }
    }

    @Test("a noise edge in the second of a pulse held for the receiver's word leaves it held: the word still corrects it")
    func noiseBesideHeldPulse() async throws {
        let rig = HeldPulseRig(epoch: epoch, moments: [.seconds(1), .milliseconds(1050)])
        try await rig.run {
            await rig.clock.advanceWhenSleeping(by: .milliseconds(50))
            try await eventually { rig.counters.pulsesSeen == 2 }
            #expect(rig.counters.pulsesDropped == [.repeated: 1])
            #expect(rig.pulseSink.samples.isEmpty, "the held pulse stays held")
            rig.service.offer(PulseAnnouncement(second: epoch.seconds + 1, quantisationError: .nanoseconds(-7), pulse: .past), of: rig.device)
            try await eventually { !rig.pulseSink.samples.isEmpty }
            #expect(rig.pulseSink.samples == [TimeSample(real: WallTime(seconds: epoch.seconds + 1), clock: epoch + .seconds(1) - .nanoseconds(7))])
        }
    }

    @Test("the service drops a held pulse whose next pulse came an hour later, counted stale, and sends the clock nothing")
    func stalePulseNotSent() async throws {
        let rig = HeldPulseRig(epoch: epoch, moments: [.seconds(1), .seconds(3601), .seconds(3602)])
        try await rig.run {
            await rig.clock.advanceWhenSleeping(by: .seconds(3600))
            try await eventually { rig.counters.pulsesSeen == 2 }
            #expect(rig.counters.pulsesDropped == [.stale: 1, .noFix: 1])
            // The receiver back, the next pulse is sent, and it is the only one: pulses are
            // sent in the order their edges are taken, so the stale one would be there first.
            rig.service.offer(TimeSample(real: WallTime(seconds: epoch.seconds + 3601), clock: epoch + .seconds(3601) + .milliseconds(200)), of: rig.device)
            try await eventually { rig.receiverSink.samples.count == 2 }
            await rig.clock.advanceWhenSleeping(by: .seconds(1))
            try await eventually { !rig.pulseSink.samples.isEmpty }
            #expect(rig.pulseSink.samples == [TimeSample(real: WallTime(seconds: epoch.seconds + 3602), clock: epoch + .seconds(3602))])
        }
    }

    @Test("receiver times offered faster than they are sent keep the newest, and the dropped ones are counted")
    func boundedQueue() async throws {
        let sink = RecordingSink(name: "receiver")
        let service = TimeService(devices: [.init(name: "/dev/ttyS0", receiverTimeSinks: [sink])], logger: Logger(label: "test")) { _, _ in }
        // Not running yet: everything waits in the queue.
        for second in 0..<40 {
            service.offer(TimeSample(real: WallTime(seconds: epoch.seconds + second), clock: epoch + .seconds(second)), of: "/dev/ttyS0")
        }
        service.offer(TimeSample(real: epoch, clock: epoch), of: "/dev/ttyUSB9")  // not served: ignored
        let running = Task { await service.run() }
        defer { running.cancel() }
        try await eventually { sink.samples.count == 16 }
        #expect(sink.samples.map(\.real.seconds) == (24..<40).map { epoch.seconds + $0 })
        #expect(service.counters()[0].counters.receiverTimesDropped == 24)
        #expect(!service.serves("/dev/ttyUSB9"))
    }

    @Test("a receiver time pushed out of the queue is counted against the device that offered it")
    func droppedCountedAgainstItsDevice() {
        let service = TimeService(
            devices: [.init(name: "/dev/ttyS0"), .init(name: "/dev/ttyS1")], logger: Logger(label: "test")) { _, _ in }
        // Not running: the first device fills the queue, and each of the second's times pushes one of its out.
        for second in 0..<16 {
            service.offer(TimeSample(real: WallTime(seconds: epoch.seconds + second), clock: epoch + .seconds(second)), of: "/dev/ttyS0")
        }
        for second in 0..<3 {
            service.offer(TimeSample(real: WallTime(seconds: epoch.seconds + second), clock: epoch + .seconds(second)), of: "/dev/ttyS1")
        }
        let dropped = Dictionary(uniqueKeysWithValues: service.counters().map { ($0.device, $0.counters.receiverTimesDropped) })
        #expect(dropped == ["/dev/ttyS0": 3, "/dev/ttyS1": 0])
    }
}
