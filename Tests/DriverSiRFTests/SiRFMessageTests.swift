import DriverSiRF
import GPSFix
import NMEA
import Testing

@Suite("SiRF messages and assembler")
struct SiRFMessageTests {
    /// 2005-06-09, the BU-303 captures' date, as a capture's `# Date:` gives it.
    static let june2005 = RolloverRule(
        referenceDay: GPSTime(year: 2005, month: 6, day: 9, time: NMEATime(hour: 0, minute: 0, second: 0))
            .daysSince1970)

    @Test("MID 2 read in place, field by field, from the BU-303's frame")
    func navigation() throws {
        let message = try #require(bu303Navigation.withUnsafeBytes { SiRFNavigation(SiRFFrameRule.payload(of: $0)) })
        #expect((message.x, message.y, message.z) == (4_360_967, 579_356, 4_604_554))
        #expect((message.velocityX, message.velocityY, message.velocityZ) == (-0.125, 0, 0))
        #expect(message.mode1 == 0x04 && message.mode2 == 0x02)
        #expect(message.hdop == 2.4)
        #expect(message.week == 302 && message.timeOfWeek == 39_807_028)
        #expect(message.satellitesUsed == 5)
    }

    @Test("MID 2 alone: the fix gpsd reports, GPS time less 18 s in the capture's era")
    func navigationFix() throws {
        let updates = assemble([bu303Navigation], assembler: SiRFAssembler(rolloverRule: Self.june2005))
        let fix = try #require(updates.compactMap(\.fix).first)
        let expected = NMEATime(hour: 14, minute: 34, second: 12, nanosecond: 280_000_000)
        #expect(fix.time == GPSTime(year: 2005, month: 6, day: 9, time: expected))
        #expect(fix.mode == .threeDimensional && fix.status == .gps)
        #expect(abs(try #require(fix.latitude) - 46.498167579) < 1e-8)
        #expect(abs(try #require(fix.longitude) - 7.567452213) < 1e-8)
        #expect(abs(try #require(fix.altitudeHAE) - 1397.6895) < 1e-3)
        #expect(abs(try #require(fix.speed) - 0.091) < 1e-3)
        #expect(abs(try #require(fix.climb) - -0.085) < 1e-3)
        #expect(abs(try #require(fix.track) - 10.3789) < 1e-3)
    }

    @Test("a live receiver's ten-bit week is placed from GPSFix's build on: week 0 of the cycle is 2038-11-21, not 2019-04-07, and the BU-303's 302 is 2044-09-04")
    func weekFromTheBuildOn() throws {
        func fixTime(week: UInt16) throws -> GPSTime? {
            var payload = Array(bu303Navigation[4..<(4 + 0x29)])
            payload.replaceSubrange(22..<24, with: [UInt8(week >> 8), UInt8(week & 0xFF)])
            payload.replaceSubrange(24..<28, with: [0, 0, 0, 0])  // time of week 0
            return try #require(assemble([sirfFrame(payload)]).compactMap(\.fix).first).time
        }
        let lessLeapSeconds = NMEATime(hour: 23, minute: 59, second: 42)  // GPS midnight less 18 s
        #expect(try fixTime(week: 0) == GPSTime(year: 2038, month: 11, day: 20, time: lessLeapSeconds))
        #expect(try fixTime(week: 302) == GPSTime(year: 2044, month: 9, day: 3, time: lessLeapSeconds))
        // The week the build year began in (2399, 351 of its cycle) is the first, the one
        // before it the last.
        #expect(try fixTime(week: 351) == GPSTime(year: 2025, month: 12, day: 27, time: lessLeapSeconds))
        #expect(try fixTime(week: 350) == GPSTime(year: 2045, month: 8, day: 5, time: lessLeapSeconds))
    }

    @Test("a MID 2 cut short is a decoding error, counted, and no fix")
    func shortFrame() {
        let assembler = SiRFAssembler()
        let updates = assemble([sirfFrame(Array(bu303Navigation[4..<30]))], assembler: assembler)
        #expect(updates.isEmpty)
        #expect(assembler.reports.statistics.decodingErrors == 1)
        #expect(assembler.solutions == 0)
    }

    @Test("a tracker message claiming more channels than it holds is refused")
    func shortTracker() {
        let assembler = SiRFAssembler()
        let tracker = sirfFrame([4, 0x01, 0x2E, 0x02, 0x5F, 0x68, 0x34, 12] + Array(repeating: 1, count: 20))
        let updates = assemble([tracker], assembler: assembler)
        #expect(updates.isEmpty)
        #expect(assembler.reports.statistics.decodingErrors == 1)
    }

    @Test("a MID 4 of twelve empty channels is a view listing no satellites, as gpsd's nSat 0")
    func emptyTracker() throws {
        // Week 302, 398070.28 s: the BU-303's first epoch, before it tracks anything.
        let tracker = sirfFrame([4, 0x01, 0x2E, 0x02, 0x5F, 0x68, 0x34, 12] + Array(repeating: 0, count: 12 * 15))
        let updates = assemble([tracker], assembler: SiRFAssembler(rolloverRule: Self.june2005))
        let view = try #require(updates.compactMap(\.sky).first)
        #expect(view.satellites.isEmpty && view.listsNoSatellites && view.usedCount == 0)
        #expect(view.time?.time == NMEATime(hour: 14, minute: 34, second: 12, nanosecond: 280_000_000))
    }

    @Test("MID 52 with valid UTC gives the leap seconds that time the next fix")
    func pulseTimeLeapSeconds() throws {
        // 14:33:59, 2005-06-09, offset 13 s, status 7.
        let pulse = sirfFrame([52, 14, 33, 59, 9, 6, 0x07, 0xD5, 0x00, 0x0D, 0, 0, 0, 0, 0x07, 0, 0, 0, 0])
        let updates = assemble([pulse, bu303Navigation], assembler: SiRFAssembler(rolloverRule: Self.june2005))
        let fix = try #require(updates.compactMap(\.fix).first)
        #expect(fix.time?.time == NMEATime(hour: 14, minute: 34, second: 17, nanosecond: 280_000_000))
        #expect(fix.leapSeconds == 13)
    }

    @Test("MID 52's UTC offset that no GPS - UTC offset can be (32767, 0) is not taken: the next fix is timed by the default and unconfirmed")
    func absurdPulseTimeLeapSeconds() throws {
        func fix(offset: UInt16) throws -> Fix {
            let pulse = sirfFrame([52, 14, 33, 59, 9, 6, 0x07, 0xD5, UInt8(offset >> 8), UInt8(offset & 0xFF), 0, 0, 0, 0, 0x07, 0, 0, 0, 0])
            return try #require(assemble([pulse, bu303Navigation], assembler: SiRFAssembler(rolloverRule: Self.june2005)).compactMap(\.fix).first)
        }
        let without = try #require(assemble([bu303Navigation], assembler: SiRFAssembler(rolloverRule: Self.june2005)).compactMap(\.fix).first)
        for offset: UInt16 in [0x7FFF, 0, 0x8000] {
            let timed = try fix(offset: offset)
            #expect(timed.leapSeconds == nil && timed.timeIsUnconfirmed, "\(offset)")
            #expect(timed.time == without.time, "\(offset)")
        }
    }

    @Test("MID 6 names the firmware as DEVICE's subtype, once")
    func softwareVersion() {
        let assembler = SiRFAssembler()
        let version = sirfFrame([6] + Array("GSW2-2.05.024".utf8) + [0, 0])
        _ = assemble([version, version], assembler: assembler)
        #expect(assembler.subtypes.subtype == "GSW2-2.05.024")
        #expect(assembler.identityChanges == 1)
    }

    @Test("messages not read are counted; those read for nothing are not")
    func unknownMessages() {
        let assembler = SiRFAssembler()
        _ = assemble([sirfFrame([200, 1]), sirfFrame([9, 0, 0, 0, 0, 0, 0xBA, 0, 0x47])], assembler: assembler)
        #expect(assembler.reports.statistics.unknownMessages == 1)
        #expect(assembler.reports.statistics.decodingErrors == 0)
    }
}
