import GPSFix
import NMEA
import ReceiverDrivers
import Testing

@testable import DriverTSIP

/// A Trimble timing receiver says in 0x8F-AB's flags whether its time can be trusted: set
/// (bit 2 clear), with the UTC parameters known (bit 3 clear), from the satellites rather
/// than the user (bit 4 clear). A time it doubts may be shown, but never set a clock.
@Suite("TSIP: a time the receiver doubts feeds no clock")
struct TSIPTimeTrustTests {
    /// `value`'s bytes, most significant first, as TSIP sends them.
    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    /// Feeds `packets` to `assembler` in turn, handing on each update it completes.
    static func feed(_ packets: [[UInt8]], to assembler: TSIPAssembler, _ handle: (LocationUpdate) -> Void) {
        for packet in packets { packet.withUnsafeBytes { assembler.add($0, handle) } }
    }

    /// 0x8F-AB for `second` seconds into week 2412 (March 2026), UTC offset 18, `flags`.
    static func primaryTiming(second: UInt32, flags: UInt8) -> [UInt8] {
        primaryTiming(week: 2412, timeOfWeek: 72_000 + second, offset: 18, flags: flags)
    }

    /// 0x8F-AB (its broken-down time is not read: the week and time of week say it).
    static func primaryTiming(week: UInt16, timeOfWeek: UInt32, offset: Int16, flags: UInt8) -> [UInt8] {
        let fields = Self.bigEndian(timeOfWeek) + Self.bigEndian(week) + Self.bigEndian(offset) + [flags]
        return TSIPFrameRule.frame(id: 0x8F, data: [0xAB] + fields + [0, 0, 20, 26, 3, 0x07, 0xEA])
    }

    /// 0x8F-AC: an overdetermined clock (receiver mode 7) at a surveyed position, with
    /// `minorAlarms`.
    static func supplementalTiming(minorAlarms: UInt16 = 0) -> [UInt8] {
        var data = [UInt8](repeating: 0, count: 68)
        data[0] = 0xAC
        data[1] = 7
        data.replaceSubrange(10..<12, with: [UInt8(minorAlarms >> 8), UInt8(minorAlarms & 0xFF)])
        for (offset, value) in [(36, 0.9), (44, 0.1), (52, 100.0)] {
            data.replaceSubrange(offset..<(offset + 8), with: Self.bigEndian(value.bitPattern))
        }
        return TSIPFrameRule.frame(id: 0x8F, data: data)
    }

    /// TSIPv1's second: A1-00 (timing, with `flags`), A1-11 (a 3D position), A3-11 (status,
    /// which ends the epoch).
    static func version1Second(_ second: UInt32, flags: UInt8) -> [[UInt8]] {
        var timing = [UInt8](repeating: 0, count: 30)
        timing.replaceSubrange(0..<4, with: Self.bigEndian(72_000 + second))
        timing.replaceSubrange(4..<6, with: Self.bigEndian(UInt16(2412)))
        timing[15] = flags
        timing.replaceSubrange(16..<18, with: Self.bigEndian(Int16(18)))
        var position = [UInt8](repeating: 0, count: 50)
        position[1] = 2  // 3D
        for (offset, value) in [(2, 48.1), (10, 11.5), (18, 500.0)] {
            position.replaceSubrange(offset..<(offset + 8), with: Self.bigEndian(value.bitPattern))
        }
        return [
            TSIPFrameRule.version1Frame(id: 0xA1, sub: 0x00, data: timing),
            TSIPFrameRule.version1Frame(id: 0xA1, sub: 0x11, data: position),
            TSIPFrameRule.version1Frame(id: 0xA3, sub: 0x11, data: [UInt8](repeating: 0, count: 23)),
        ]
    }

    /// The time samples ten seconds of `packets` give.
    static func samples(_ packets: (UInt32) -> [[UInt8]]) -> [TimeSample] {
        let assembler = TSIPAssembler(AssemblyContext())
        var sampler = ReceiverTimeSampler()
        var samples: [TimeSample] = []
        for second in UInt32(0)..<10 {
            feed(packets(second), to: assembler) { update in
                guard case .fix(let fix) = update else { return }
                if let sample = sampler.sample(for: fix, readAt: WallTime(seconds: 1_800_000_000 + Int(second))) { samples.append(sample) }
            }
        }
        return samples
    }

    @Test("a time set from the satellites gives samples; one not yet set, without UTC parameters, or set by the user, none",
          arguments: [(UInt8(0x03), true), (0x07, false), (0x0B, false), (0x13, false)])
    func flags(flags: UInt8, trusted: Bool) {
        let samples = Self.samples { [Self.primaryTiming(second: $0, flags: flags), Self.supplementalTiming()] }
        #expect(samples.isEmpty != trusted, "\(samples.count) samples with flags \(flags)")
    }

    @Test("a Thunderbolt's minor alarm 'leap second pending' warns of an inserted second in its fixes, and its end ends the warning")
    func leapSecondPending() {
        let assembler = TSIPAssembler(AssemblyContext())
        var warnings: [LeapSecondWarning] = []
        for (second, alarms) in [(UInt32(0), UInt16(0x0080)), (1, 0x0080 | 0x0040), (2, 0)] {
            Self.feed([Self.primaryTiming(second: second, flags: 0x03), Self.supplementalTiming(minorAlarms: alarms)], to: assembler) { update in
                if case .fix(let fix) = update { warnings.append(fix.leapSecondWarning) }
            }
        }
        #expect(warnings == [.insertion, .insertion, .none])
    }

    @Test("a Thunderbolt's inserted second, timed in GPS time while it warns of it (0x8F-AC's leap second pending) on December 31, is 23:59:60 whether it changes its offset after it or during it: no sample of it, and midnight sampled when it comes, not a second early",
          arguments: [Int16(18), 19])
    func insertedSecond(offsetDuringIt: Int16) throws {
        // 2026-12-31 23:59:54 to 2027-01-01 00:00:00 UTC: GPS week 2451, 432_012 s on.
        let assembler = TSIPAssembler(AssemblyContext())
        var sampler = ReceiverTimeSampler()
        var times: [GPSTime] = [], samples: [TimeSample] = [], announced: [Int] = []
        for index in 0..<8 {
            let offset: Int16 = index < 6 ? 18 : index == 6 ? offsetDuringIt : 19
            // The GPS time base (flags bit 0 clear), as the captures' receivers send it.
            let timing = Self.primaryTiming(week: 2451, timeOfWeek: 432_012 + UInt32(index), offset: offset, flags: 0x02)
            Self.feed([timing, Self.supplementalTiming(minorAlarms: index < 7 ? 0x0080 : 0)], to: assembler) { update in
                if case .nextPulse(let pulse) = update { announced.append(pulse.second) }
                guard case .fix(let fix) = update, let time = fix.time else { return }
                if times.last != time { times.append(time) }
                if let sample = sampler.sample(for: fix, readAt: Self.readAt(index)) { samples.append(sample) }
            }
        }
        let midnight = 1_798_761_600
        let lastSecond = GPSTime(year: 2026, month: 12, day: 31, time: NMEATime(hour: 23, minute: 59, second: 59))
        let inserted = GPSTime(year: 2026, month: 12, day: 31, time: NMEATime(hour: 23, minute: 59, second: 60))
        let newYear = GPSTime(year: 2027, month: 1, day: 1, time: NMEATime(hour: 0, minute: 0, second: 0))
        // Named 23:59:59 again by the new offset, it is a repeated second.
        #expect(times.suffix(2) == (offsetDuringIt == 18 ? [inserted, newYear] : [lastSecond, newYear]))
        #expect(samples.map(\.real.seconds) == [midnight - 3, midnight - 2, midnight - 1, midnight])
        #expect(samples.last?.clock == Self.readAt(7), "read with the packets of midnight, not of the inserted second")
        if offsetDuringIt == 18 {
            // The inserted second's pulse names no second: its quantisation error is not
            // announced as midnight's.
            #expect(announced == Array((midnight - 6)...midnight))
        }
    }

    @Test("no second is inserted at a midnight that is not the end of June or December, though the receiver warns (a Thunderbolt sets its bit months ahead)")
    func noInsertionOnOtherDays() {
        let assembler = TSIPAssembler(AssemblyContext())
        var times: [GPSTime] = []
        // 2026-11-30 23:59:58 to 2026-12-01 00:00:00 UTC: GPS week 2447, 172_816 s on.
        for index in 0..<3 {
            let timing = Self.primaryTiming(week: 2447, timeOfWeek: 172_816 + UInt32(index), offset: 18, flags: 0x02)
            Self.feed([timing, Self.supplementalTiming(minorAlarms: 0x0080)], to: assembler) { update in
                if case .fix(let fix) = update, let time = fix.time, times.last != time { times.append(time) }
            }
        }
        #expect(times.count == 3 && !times.contains { $0.isLeapSecond }, "\(times)")
    }

    /// When the `index`-th second's packets were read, on an observer's clock.
    static func readAt(_ index: Int) -> WallTime { WallTime(seconds: 1_798_000_000 + index) }

    /// 0x8F-20, last fix with extra information: a 3D fix `second` seconds into week 2412,
    /// with the receiver's GPS-UTC offset `utcOffset` (0 until it has the UTC parameters).
    static func lastFix(second: UInt32, utcOffset: UInt8) -> [UInt8] {
        var data = [UInt8](repeating: 0, count: 56)
        data[0] = 0x20
        data.replaceSubrange(8..<12, with: Self.bigEndian((72_000 + second) * 1000))
        data.replaceSubrange(12..<16, with: Self.bigEndian(Int32(574_000_000)))  // about 48.1°
        data.replaceSubrange(16..<20, with: Self.bigEndian(UInt32(137_000_000)))  // about 11.5°
        data.replaceSubrange(20..<24, with: Self.bigEndian(Int32(500_000)))
        data[28] = 8
        data[29] = utcOffset
        data.replaceSubrange(30..<32, with: Self.bigEndian(UInt16(2412)))
        return TSIPFrameRule.frame(id: 0x8F, data: data)
    }

    @Test("0x8F-20 before the receiver has the UTC parameters (a UTC offset of 0, up to 12.5 minutes after a cold start): its time is shown, converted by the usual 18 s, but sets no clock",
          arguments: [(UInt8(18), true), (0, false)])
    func lastFixOffset(utcOffset: UInt8, trusted: Bool) {
        let samples = Self.samples { [Self.lastFix(second: $0, utcOffset: utcOffset)] }
        #expect(samples.isEmpty != trusted, "\(samples.count) samples with a UTC offset of \(utcOffset)")
    }

    @Test("0x8F-AB's UTC offset while its flags say the receiver has no UTC parameters is not taken: the 0x8F-20 fixes after it, offset 0, stay unconfirmed")
    func primaryTimingOffsetWithoutParameters() {
        let samples = Self.samples { second in
            second == 0 ? [Self.primaryTiming(second: 0, flags: 0x0B)] : [Self.lastFix(second: second, utcOffset: 0)]
        }
        #expect(samples.isEmpty, "\(samples.count) samples")
    }

    @Test("TSIPv1: A1-00's UTC offset is taken only with its flags' UTC valid (bit 0); the fixes report it (gpsd's leapseconds) only then",
          arguments: [(UInt8(0x03), 18), (0x01, 18), (0x02, nil)])
    func version1Offset(flags: UInt8, reported: Int?) {
        let assembler = TSIPAssembler(AssemblyContext())
        var leapSeconds: [Int?] = []
        Self.feed(Self.version1Second(0, flags: flags), to: assembler) { update in
            if case .fix(let fix) = update { leapSeconds.append(fix.leapSeconds) }
        }
        #expect(leapSeconds == [reported], "flags \(flags)")
    }

    @Test("TSIPv1: A1-00 with the time and the UTC offset valid gives samples; without either, none",
          arguments: [(UInt8(0x03), true), (0x01, false), (0x02, false)])
    func version1Flags(flags: UInt8, trusted: Bool) {
        let samples = Self.samples { Self.version1Second($0, flags: flags) }
        #expect(samples.isEmpty != trusted, "\(samples.count) samples with flags \(flags)")
    }
}
