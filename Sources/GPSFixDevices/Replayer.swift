import GPSFix
import NMEA

/// Plays a recorded log into a pseudo-terminal, paced by the sentences' own UTC times.
///
/// The log is cut into receiver cycles (a new cycle starts where a sentence's time
/// changes); each cycle is written in one go, then the replayer waits for the time to the
/// next cycle, divided by ``speed``, as gpsfake does. Gaps are capped at two seconds and a
/// log with no times is paced at one cycle a second. Every byte of the log's payload is
/// written as recorded, garbage included.
public struct Replayer: Sendable {
    /// The log's receiver bytes, cut into cycles, each with the pause that follows it.
    public let cycles: [(bytes: [UInt8], pause: Duration)]

    /// Plans the replay of `log` at `speed` times real time (`nil`: as fast as possible).
    public init(log: CaptureLog, speed: Double? = 1) {
        var cycles: [(bytes: [UInt8], pause: Duration)] = []
        var current: [UInt8] = []
        var currentTime: NMEATime?
        let framer = NMEAFramer(configuration: .lenient)
        func pause(from earlier: NMEATime?, to later: NMEATime?) -> Duration {
            guard let speed else { return .zero }
            var seconds = 1.0
            if let earlier, let later {
                let difference = Double(later.nanosecondsSinceMidnight - earlier.nanosecondsSinceMidnight) / 1e9
                if difference > 0 { seconds = min(difference, 2) }
            }
            return .milliseconds(Int64(seconds / speed * 1000))
        }
        let payload = log.payload
        var lineStart = 0
        while lineStart < payload.count {
            let lineEnd = payload[lineStart...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? payload.count
            let line = Array(payload[lineStart..<lineEnd])
            var time: NMEATime?
            line.withUnsafeBytes { bytes in
                framer.feed(bytes) { sentence in time = Self.time(of: sentence) }
            }
            framer.finish { sentence in time = Self.time(of: sentence) }
            if let time, let previous = currentTime, time != previous, !current.isEmpty {
                cycles.append((current, pause(from: previous, to: time)))
                current = []
            }
            if let time { currentTime = time }
            current += line
            lineStart = lineEnd
        }
        if !current.isEmpty { cycles.append((current, pause(from: nil, to: nil))) }
        self.cycles = cycles
    }

    private static func time(of sentence: NMEASentence) -> NMEATime? {
        switch try? NMEAMessage(decoding: sentence) {
        case .gga(let gga)?: gga.time
        case .rmc(let rmc)?: rmc.time
        case .gll(let gll)?: gll.time
        case .gns(let gns)?: gns.time
        case .zda(let zda)?: zda.time
        default: nil
        }
    }

    /// Writes the cycles into `terminal`, pausing on `clock` between them, once or forever.
    /// The writes wait for the pty's reader off the cooperative pool (see ``PseudoTerminal/write(_:)``).
    public func play(into terminal: PseudoTerminal, loop: Bool, clock: any Clock<Duration> = ContinuousClock()) async throws {
        repeat {
            for cycle in cycles {
                try Task.checkCancellation()
                try await terminal.write(cycle.bytes)
                if cycle.pause > .zero { try await clock.sleep(for: cycle.pause) }
            }
        } while loop
    }
}
