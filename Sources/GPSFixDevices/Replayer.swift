#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import NMEA
import ReceiverFraming
import UBX

/// Plays a recorded log into a pseudo-terminal, paced by the receiver's own times.
///
/// The log is cut into receiver cycles: a new cycle starts where a sentence's time
/// changes, or, in a u-blox capture, where a NAV message's time of week does (its NMEA,
/// if any, then goes with the UBX epoch it came in). Each cycle is written in one go, then
/// the replayer waits for the time to the next cycle, divided by ``speed``, as gpsfake
/// does. Gaps are capped at two seconds and a log with no times is paced at one cycle a
/// second. Every byte of the log's payload is written as recorded, binary frames and
/// garbage included.
public struct Replayer: Sendable {
    /// The log's receiver bytes, cut into cycles, each with the pause that follows it.
    public let cycles: [(bytes: [UInt8], pause: Duration)]
    /// Seconds of the log's own time from each cycle to the next (1 where it gives none,
    /// 0.05 to 2, in steps of 0.05): the spacing of retimed cycles.
    private let intervals: [Double]

    /// Plans the replay of `log` at `speed` times real time (`nil`: as fast as possible).
    /// `startingAtFirstFix` leaves out the cycles before the first 3D fix (a GGA or GNS
    /// with an altitude from four satellites or more), so a demo has a 3D fix at once; a
    /// log with none is played whole.
    public init(log: CaptureLog, speed: Double? = 1, startingAtFirstFix: Bool = false) {
        var plan = Self.plan(log, speed: speed, startingAtFirstFix: startingAtFirstFix)
        if plan.cycles.isEmpty, startingAtFirstFix { plan = Self.plan(log, speed: speed, startingAtFirstFix: false) }
        (cycles, intervals) = plan
    }

    /// The cycles of `log` with their pauses, and the log's intervals between them.
    private static func plan(_ log: CaptureLog, speed: Double?, startingAtFirstFix: Bool)
        -> (cycles: [(bytes: [UInt8], pause: Duration)], intervals: [Double])
    {
        var cycles: [(bytes: [UInt8], pause: Duration)] = []
        var intervals: [Double] = []
        var current: [UInt8] = []
        var currentTime: NMEATime?
        let framer = NMEAFramer(configuration: .lenient)
        // Rounded to 50 ms, a multiple of every receiver rate (1 to 20 Hz): recorded
        // times jitter by a millisecond, which retimed cycles would otherwise accumulate.
        func interval(from earlier: NMEATime?, to later: NMEATime?) -> Double {
            guard let earlier, let later else { return 1 }
            let difference = Double(later.nanosecondsSinceMidnight - earlier.nanosecondsSinceMidnight) / 1e9
            return difference > 0 ? max(0.05, min((difference * 20).rounded() / 20, 2)) : 1
        }
        func pause(_ seconds: Double) -> Duration {
            speed.map { .milliseconds(Int64(seconds / $0 * 1000)) } ?? .zero
        }
        var fixed = !startingAtFirstFix
        let payload = log.payload
        // A capture with UBX navigation messages is timed by their time of week alone.
        let units = CaptureUnits.units(of: payload)
        let epochs = units.map { Self.ubxEpoch(of: payload[$0]) }
        let timedByUBX = epochs.contains { $0 != nil }
        var currentTOW: UInt32?
        for (unit, epoch) in zip(units, epochs) {
            let bytes = payload[unit]
            var time: NMEATime?
            var hasFix = false
            var gap: Double?
            if let (tow, fix) = epoch {
                if let previous = currentTOW, (tow > previous ? tow - previous : previous - tow) > 10 {
                    gap = Double(Int64(tow) - Int64(previous)) / 1000
                }
                currentTOW = tow
                hasFix = fix
            } else if bytes.first != UBXFrame.sync1 {
                Array(bytes).withUnsafeBytes { line in
                    framer.feed(line) { sentence in (time, hasFix) = Self.timeAndFix(of: sentence) }
                }
                framer.finish { sentence in (time, hasFix) = Self.timeAndFix(of: sentence) }
                if timedByUBX { time = nil }
            }
            let changed = gap != nil || (time != nil && currentTime != nil && time != currentTime)
            if changed, !current.isEmpty {
                if fixed {
                    let seconds = gap.map { max(0.05, min(($0 * 20).rounded() / 20, 2)) } ?? interval(from: currentTime, to: time)
                    cycles.append((current, pause(seconds)))
                    intervals.append(seconds)
                }
                current = []
            }
            fixed = fixed || hasFix
            if let time { currentTime = time }
            current += bytes
        }
        if !current.isEmpty, fixed {
            cycles.append((current, pause(1)))
            intervals.append(1)
        }
        return (cycles, intervals)
    }

    /// The time of week of a UBX NAV frame (milliseconds: every message of an epoch
    /// carries it), and whether the frame states a 3D fix (NAV-PVT or NAV-SOL).
    private static func ubxEpoch(of unit: ArraySlice<UInt8>) -> (timeOfWeek: UInt32, hasFix: Bool)? {
        guard unit.first == UBXFrame.sync1 else { return nil }
        return unit.withUnsafeBytes { bytes in
            guard let frame = UBXFrame(validating: bytes), let timeOfWeek = UBXTimeFields.timeOfWeek(of: frame) else {
                return nil
            }
            let fix = NavPVT(frame).map { ($0.fixType, $0.gnssFixOK) } ?? NavSOL(frame).map { ($0.fixType, $0.gnssFixOK) }
            return (timeOfWeek, fix.map { $0.0 == 3 && $0.1 } ?? false)
        }
    }

    /// The sentence's time, and whether it states a 3D fix.
    private static func timeAndFix(of sentence: NMEASentence) -> (NMEATime?, Bool) {
        switch try? NMEAMessage(decoding: sentence) {
        case .gga(let gga)?:
            (gga.time, (gga.quality ?? 0) > 0 && gga.latitude != nil && gga.altitude != nil && (gga.satellitesUsed ?? 0) >= 4)
        case .gns(let gns)?:
            (gns.time, gns.mode != nil && gns.mode != .notValid && gns.altitude != nil && (gns.satellitesUsed ?? 0) >= 4)
        case .rmc(let rmc)?: (rmc.time, false)
        case .gll(let gll)?: (gll.time, false)
        case .zda(let zda)?: (zda.time, false)
        default: (nil, false)
        }
    }

    /// Whether the log holds nothing to write.
    public var isEmpty: Bool { cycles.allSatisfy { $0.bytes.isEmpty } }

    /// Writes the cycles into `terminal`, pausing on `clock` between them, once or forever.
    /// The writes wait for the pty's reader off the tasks' threads (see ``PseudoTerminal/write(_:)``).
    ///
    /// - `retime`: each cycle's times and dates are rewritten (``Retimer``) to the wall
    ///   clock's current second as it is written, or to the previous cycle's time plus the
    ///   log's interval when that is later, so times keep increasing, across loops too;
    ///   each cycle is written when the wall clock reaches its time, as a live receiver
    ///   sends it, so its time and the moment it is read agree as a clock expects.
    /// - `burst`: this many cycles go out at once before pacing starts, enough for a
    ///   reader to learn the cycle's end and report a fix straight away.
    /// - `now`: the wall clock, milliseconds since 1970 (a test's own clock).
    public func play(
        into terminal: PseudoTerminal, loop: Bool, retime: Bool = false, burst: Int = 0,
        clock: any Clock<Duration> = ContinuousClock(), now: @Sendable () -> Int = Replayer.wallClock
    ) async throws {
        // A burst is stamped back from now, so its last cycle is now's; each later cycle
        // is the previous one plus the log's gap before it, or now when that is later.
        let burstSpan = intervals.prefix(max(burst - 1, 0)).reduce(0) { $0 + Int($1 * 1000) }
        var stamp: Int?
        var gapBefore = 1000
        var written = 0
        // A log with nothing to write would loop without a pause, for ever.
        guard !isEmpty else { return }
        repeat {
            for (cycle, gapAfter) in zip(cycles, intervals) {
                try Task.checkCancellation()
                var bytes = cycle.bytes
                if retime {
                    let wholeSecond = now() / 1000 * 1000
                    let next = switch stamp {
                    case nil: wholeSecond - (burst > 0 ? burstSpan : 0)
                    case let previous? where written < burst: previous + gapBefore
                    case let previous?: max(wholeSecond, previous + gapBefore)
                    }
                    stamp = next
                    gapBefore = Int(gapAfter * 1000)
                    bytes = Retimer.retime(cycle: bytes, to: GPSTime(millisecondsSince1970: next))
                }
                try await terminal.write(bytes)
                written += 1
                guard written >= burst, cycle.pause > .zero else { continue }
                if retime, let stamp {
                    // Until the wall clock reaches the next cycle's time, as a live receiver
                    // sends each cycle just after the second it is stamped with.
                    try await clock.sleep(for: min(cycle.pause, .milliseconds(max(0, stamp + gapBefore - now()))))
                } else {
                    try await clock.sleep(for: cycle.pause)
                }
            }
        } while loop
    }

    /// The system's real-time clock, milliseconds since 1970.
    public static let wallClock: @Sendable () -> Int = {
        let now = WallTime.systemNow()
        return now.seconds * 1000 + now.nanoseconds / 1_000_000
    }
}
