import GPSDProtocol
import GPSFix
import GPSFixDevices
import NMEA
import TestSupport
import Testing

/// A source that yields the chunks given, each with its read time, then ends.
struct StampedSource: ByteSource {
    let name = "/dev/stamped"
    let script: [ByteChunk]

    func chunks() -> ByteChunks {
        let chunks = script
        return ByteChunks(AsyncThrowingStream { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        })
    }
}

@Suite("Receiver time samples")
struct TimeSampleTests {
    static func fix(_ mode: FixMode, at seconds: Int, milliseconds: Int = 0) -> Fix {
        var fix = Fix()
        fix.mode = mode
        let time = GPSTime(millisecondsSince1970: seconds * 1000 + milliseconds)
        fix.time = time
        return fix
    }

    let second = 1_795_428_000  // 2026-11-23
    let readAt = WallTime(seconds: 1_795_428_000, nanoseconds: 150_000_000)

    @Test("a sample per receiver second, from the fourth fix in a row of mode 2D or better")
    func sampling() {
        var sampler = ReceiverTimeSampler()
        let samples = (0..<6).map { sampler.sample(for: Self.fix(.threeDimensional, at: second + $0), readAt: readAt + .seconds($0)) }
        #expect(samples.prefix(3).allSatisfy { $0 == nil })
        #expect(samples[3] == TimeSample(real: WallTime(seconds: second + 3), clock: readAt + .seconds(3)))
        #expect(samples.compactMap { $0 }.map(\.real.seconds) == [second + 3, second + 4, second + 5])
        // 10 Hz: the rest of a second gives no more.
        #expect(sampler.sample(for: Self.fix(.threeDimensional, at: second + 5, milliseconds: 100), readAt: readAt) == nil)
        #expect(sampler.sample(for: Self.fix(.twoDimensional, at: second + 6, milliseconds: 0), readAt: readAt)?.real.seconds == second + 6)
    }

    @Test("no sample without a fix, without a read time, or with a date before GPSFix existed (a week rollover); a lost fix starts the count again")
    func refusals() {
        var sampler = ReceiverTimeSampler()
        for offset in 0..<4 { _ = sampler.sample(for: Self.fix(.threeDimensional, at: second + offset), readAt: readAt) }
        #expect(sampler.sample(for: Self.fix(.threeDimensional, at: second + 4), readAt: nil) == nil)
        #expect(sampler.sample(for: Self.fix(.noFix, at: second + 5), readAt: readAt) == nil)
        let afterLoss = (6..<10).map { sampler.sample(for: Self.fix(.threeDimensional, at: second + $0), readAt: readAt) }
        #expect(afterLoss.map { $0 != nil } == [false, false, false, true])
        // 1024 weeks earlier: 2007.
        var rolledOver = ReceiverTimeSampler()
        let weeks = 1024 * 7 * 86_400
        let samples = (0..<5).map { rolledOver.sample(for: Self.fix(.threeDimensional, at: second - weeks + $0), readAt: readAt) }
        #expect(samples.allSatisfy { $0 == nil })
        #expect(rolledOver.distrusted == 2)
        sampler.restart()
        #expect(sampler.sample(for: Self.fix(.threeDimensional, at: second + 20), readAt: readAt) == nil, "a restart starts the count again")
    }

    @Test("a time before the last one sampled gives no sample (a fix of an earlier second read now: it would be paired with a read time a second late), counted; a receiver whose times stay behind for four fixes has stepped back, and is followed")
    func timesBehind() {
        func sampled(_ offsets: [Int]) -> (sampled: [Bool], behind: Int) {
            var sampler = ReceiverTimeSampler()
            let sampled = offsets.map { sampler.sample(for: Self.fix(.threeDimensional, at: second + $0), readAt: readAt) != nil }
            return (sampled, sampler.behind)
        }
        let stale = sampled([0, 1, 2, 3, 4, 5, 4, 5, 6, 7])
        #expect(stale.sampled == [false, false, false, true, true, true, false, false, true, true])
        #expect(stale.behind == 1)
        let steppedBack = sampled([0, 1, 2, 3, 4, 5, -100, -99, -98, -97, -96])
        #expect(steppedBack.sampled == [false, false, false, true, true, true, false, false, false, true, true])
        #expect(steppedBack.behind == 3)
    }

    @Test("a time ahead of the last one sampled by more than the read clock went on (one RMC with tomorrow's date) gives no sample, counted; a receiver whose times stay ahead for four fixes has stepped on, and is followed")
    func timesAhead() {
        // Each fix read a second after the one before, as a receiver sends them, unless
        // `reads` says when.
        func sampled(_ offsets: [Int], reads: [Int]? = nil) -> (sampled: [Bool], ahead: Int) {
            var sampler = ReceiverTimeSampler()
            let sampled = zip(offsets, reads ?? Array(offsets.indices)).map { offset, read in
                sampler.sample(for: Self.fix(.threeDimensional, at: second + offset), readAt: readAt + .seconds(read)) != nil
            }
            return (sampled, sampler.ahead)
        }
        let oneDayAhead = sampled([0, 1, 2, 3, 4, 5, 86_406, 7, 8, 9, 10])
        #expect(oneDayAhead.sampled == [false, false, false, true, true, true, false, true, true, true, true])
        #expect(oneDayAhead.ahead == 1)
        let steppedOn = sampled([0, 1, 2, 3, 4, 5, 86_406, 86_407, 86_408, 86_409, 86_410])
        #expect(steppedOn.sampled == [false, false, false, true, true, true, false, false, false, true, true])
        #expect(steppedOn.ahead == 3)
        // Seconds without a fix, the read clock going on with the receiver's, are no jump.
        let gap = sampled([0, 1, 2, 3, 4, 5, 30, 31], reads: [0, 1, 2, 3, 4, 5, 30, 31])
        #expect(gap.sampled == [false, false, false, true, true, true, true, true])
        #expect(gap.ahead == 0)
    }

    @Test("no sample dated a 1024-week era or more after 2026: a two-digit year placed in the wrong century (an MTK chip's default 060180 read as 2080), or a receiver two eras behind, would step the clock decades ahead")
    func laterThanAnEra() {
        let weeks = 1024 * 7 * 86_400
        var sampler = ReceiverTimeSampler()
        let year2080 = Int(WallTime(GPSTime(year: 2080, month: 1, day: 6, time: NMEATime(hour: 0, minute: 0, second: 0))).seconds)
        let samples = (0..<5).map { sampler.sample(for: Self.fix(.threeDimensional, at: year2080 + $0), readAt: readAt) }
        #expect(samples.allSatisfy { $0 == nil })
        #expect(sampler.distrusted == 2)
        // The era's last second still gives samples; the first after it does not.
        let last = Int(ReceiverTimeSampler.defaultEarliestTrustedTime.seconds) + weeks - 1
        var atTheEdge = ReceiverTimeSampler()
        let edge = (0..<5).map { atTheEdge.sample(for: Self.fix(.threeDimensional, at: last - 3 + $0), readAt: readAt) }
        #expect(edge.map { $0 != nil } == [false, false, false, true, false])
    }

    @Test("the provider pairs each cycle's time with the read time of the chunk that opened the cycle")
    func providerStampsCycles() async {
        let base = WallTime(GPSTime(year: 2026, month: 11, day: 23, time: NMEATime(hour: 1, minute: 40, second: 10))).seconds
        var chunks: [ByteChunk] = []
        var opened: [Int: WallTime] = [:]
        for cycle in 0..<7 {
            let time = "0140\(String(cycle + 10)).000"  // 01:40:10 onwards, 2026-11-23
            let gga = sentence("$GPGGA,\(time),5541.1956,N,03737.2877,E,1,8,0.9,66.2,M,14.5,M,,")
            let rmc = sentence("$GPRMC,\(time),A,5541.1956,N,03737.2877,E,0.52,301.26,231126,,,A")
            let start = WallTime(seconds: second + 10 + cycle, nanoseconds: 80_000_000)
            opened[base + cycle] = start
            // The cycle's first sentence in one read, its second in a later one.
            chunks.append(ByteChunk(Array(gga.utf8), readAt: start))
            chunks.append(ByteChunk(Array(rmc.utf8), readAt: start + .milliseconds(300)))
        }
        let provider = NMEALocationProvider(source: StampedSource(script: chunks))
        var samples: [TimeSample] = []
        var fixesBefore: [Int] = []
        var fixes = 0
        for await update in provider.updateStream() {
            if case .fix = update { fixes += 1 }
            if case .receiverTime(let sample) = update {
                samples.append(sample)
                fixesBefore.append(fixes)
            }
        }
        // The RMC dates each cycle before it ends: from the fourth fix on, one sample per cycle.
        #expect(samples.map(\.real.seconds) == [3, 4, 5, 6].map { base + $0 })
        #expect(samples.allSatisfy { opened[$0.real.seconds] == $0.clock }, "\(samples)")
        #expect(fixesBefore == [4, 5, 6, 7], "each sample follows its own cycle's fix")
    }

    @Test("TOFF and PPS reports carry both times exactly, the precision and the segment, as gpsd writes them")
    func reports() {
        let sample = TimeSample(real: WallTime(seconds: 1_795_428_296), clock: WallTime(seconds: 1_795_428_296, nanoseconds: 1_017_714))
        let toff = String(decoding: GPSDReport.time(TimeReport(kind: .receiverTime, sample: sample, precision: -1, sharedMemoryUnit: 0), device: "/dev/ttyS0"), as: UTF8.self)
        #expect(toff == #"{"class":"TOFF","device":"/dev/ttyS0","real_sec":1795428296,"real_nsec":0,"clock_sec":1795428296,"clock_nsec":1017714,"precision":-1,"shm":"NTP0"}"# + "\r\n")
        let pps = String(decoding: GPSDReport.time(TimeReport(kind: .pulse, sample: sample, precision: -20), device: "/dev/ttyS0"), as: UTF8.self)
        #expect(pps == #"{"class":"PPS","device":"/dev/ttyS0","real_sec":1795428296,"real_nsec":0,"clock_sec":1795428296,"clock_nsec":1017714,"precision":-20}"# + "\r\n")
    }
}
