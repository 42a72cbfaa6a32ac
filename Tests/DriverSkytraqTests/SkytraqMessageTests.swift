import DriverSkytraq
import Foundation
import GPSFix
import NMEA
import Testing

@Suite("Skytraq messages")
struct SkytraqMessageTests {
    /// The updates `frames` give a fresh assembler, and the assembler.
    func assemble(_ frames: [[UInt8]]) -> (updates: [LocationUpdate], assembler: SkytraqAssembler) {
        let assembler = SkytraqAssembler(AssemblyContext())
        var updates: [LocationUpdate] = []
        for frame in frames { frame.withUnsafeBytes { assembler.add($0) { updates.append($0) } } }
        return (updates, assembler)
    }

    @Test("0xDF from the capture: IOD, status, week, time of week, ECEF position and velocity, DOPs")
    func navigationStatus() throws {
        let payload = SkytraqFrames.payload(of: SkytraqFrames.navigationStatus)
        let status = try #require(payload.withUnsafeBytes { SkytraqNavigationStatus($0) })
        #expect(status.issueOfData == 0x93)
        #expect(status.fixStatus == 2)
        #expect(status.week == 1890)
        #expect(abs(try #require(status.timeOfWeek) - 444_956.999_088_54) < 1e-6)
        let position = try #require(status.position)
        #expect(abs(position.x - -2_386_073.733_913_67) < 1e-6)
        #expect(abs(position.y - -3_922_162.405_814_12) < 1e-6)
        #expect(abs(position.z - 4_414_336.764_937_8) < 1e-6)
        let velocity = try #require(status.velocity)
        #expect(abs(velocity.x - 0.009_073_59) < 1e-7)
        #expect(abs(velocity.y - 0.226_200_79) < 1e-7)
        #expect(abs(velocity.z - -0.067_951_71) < 1e-7)
        // gpsd's SKY after this fix: "gdop":2.22,"hdop":1.73,"pdop":1.98,"tdop":1.00,"vdop":0.97
        #expect(abs(try #require(status.gdop) - 2.219_394) < 1e-6)
        #expect(abs(try #require(status.pdop) - 1.979_019) < 1e-6)
        #expect(abs(try #require(status.hdop) - 1.725_753) < 1e-6)
        #expect(abs(try #require(status.vdop) - 0.968_656) < 1e-6)
        #expect(abs(try #require(status.tdop) - 1.004_585) < 1e-6)
    }

    @Test("0xDF becomes gpsd's first TPV: 2D, 03:35:38.999 (not rounded), position from ECEF, geoid altitude")
    func navigationStatusFix() throws {
        let (updates, assembler) = assemble([SkytraqFrames.channelStatus, SkytraqFrames.navigationStatus])
        let fix = try #require(updates.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }.first)
        #expect(fix.mode == .twoDimensional)
        #expect(fix.time == GPSTime(
            year: 2016, month: 4, day: 1, time: NMEATime(hour: 3, minute: 35, second: 38, nanosecond: 999_000_000)))
        // gpsd: "lat":44.068796225,"lon":-121.314519974,"altHAE":1077.7540,"altMSL":1099.9092,
        // "track":308.9814,"speed":0.141
        #expect(abs(try #require(fix.latitude) - 44.068_796_225) < 1e-9)
        #expect(abs(try #require(fix.longitude) - -121.314_519_974) < 1e-9)
        #expect(abs(try #require(fix.altitudeHAE) - 1077.7540) < 1e-4)
        #expect(abs(try #require(fix.altitudeMSL) - 1099.9092) < 1e-4)
        #expect(abs(try #require(fix.speed) - 0.141) < 1e-3)
        #expect(abs(try #require(fix.track) - 308.9814) < 1e-4)
        #expect(fix.climb == nil)
        #expect(assembler.solutions == 1)
        #expect(assembler.cyclesOpened == 1)
        #expect(assembler.statistics.epochs == 1)
    }

    @Test("0xDE: used by channel status bits 4-5, BeiDou 211 kept as PRN 211, DOPs from the geometry")
    func channelStatus() throws {
        let (updates, assembler) = assemble([SkytraqFrames.channelStatus])
        // The view alone: without its 0xDF the epoch has no fix, now or when flushed.
        #expect(updates.count == 1)
        assembler.flush { _ in Issue.record("nothing left to flush") }
        let view = try #require(updates.compactMap { if case .sky(let sky) = $0 { sky } else { nil } }.first)
        #expect(view.satellites.map(\.identity.prn) == [2, 28, 12, 24, 17, 19, 211])
        #expect(view.satellites.map(\.used) == [true, true, false, true, false, true, false])
        #expect(view.usedCount == 4)
        let beidou = try #require(view.satellites.last)
        #expect(beidou.identity.gnss == .beidou && beidou.identity.svid == 11)
        #expect(beidou.elevation == 77 && beidou.azimuth == 31 && beidou.snr == 0)
        #expect(view.satellites.first?.snr == 33)
        // gpsd: "gdop":5.63,"hdop":2.68,"pdop":4.68,"vdop":3.83
        #expect(abs(try #require(view.gdop) - 5.63) < 0.005)
        #expect(abs(try #require(view.hdop) - 2.68) < 0.005)
        #expect(abs(try #require(view.pdop) - 4.68) < 0.005)
        #expect(abs(try #require(view.vdop) - 3.83) < 0.005)
    }

    @Test("a 0xDE counting more channels than it holds, and a short 0xDF, are decoding errors, not values")
    func refusals() {
        var channels = SkytraqFrames.payload(of: SkytraqFrames.channelStatus)
        channels[2] = 8
        let shortStatus = Array(SkytraqFrames.payload(of: SkytraqFrames.navigationStatus).prefix(40))
        let (updates, assembler) = assemble([
            SkytraqFrameRule.frame(payload: channels), SkytraqFrameRule.frame(payload: shortStatus),
        ])
        #expect(updates.isEmpty)
        #expect(assembler.reports.statistics.decodingErrors == 2)
        #expect(assembler.solutions == 0)
    }

    /// A 0xA8 as AN0028 lays it out: 3D fix, 9 satellites, week 2300, TOW 345600.50 s,
    /// 47.6619584 N 122.3263763 W, 56.02 m above the ellipsoid and 77.63 m above sea
    /// level, DOPs 1.80/1.50/0.90/1.20/0.80, climbing at 2 m/s straight up.
    static func navigationData() -> [UInt8] {
        func be<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        let (latitude, longitude) = (47.661_958_4, -122.326_376_3)
        let (phi, lambda) = (latitude * .pi / 180, longitude * .pi / 180)
        let unit: [Double] = [cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi)]
        let up = unit.map { Int32(($0 * 200).rounded()) }
        var payload: [UInt8] = [0xA8, 2, 9] + be(UInt16(2300)) + be(UInt32(34_560_050))
        payload += be(Int32(476_619_584)) + be(Int32(-1_223_263_763)) + be(UInt32(5602)) + be(UInt32(7763))
        payload += be(UInt16(180)) + be(UInt16(150)) + be(UInt16(90)) + be(UInt16(120)) + be(UInt16(80))
        payload += be(Int32(-230_456_112)) + be(Int32(-363_771_534)) + be(Int32(469_550_006))
        payload += be(up[0]) + be(up[1]) + be(up[2])
        return SkytraqFrameRule.frame(payload: payload)
    }

    @Test("0xA8 (synthetic, from AN0028's layout): a whole epoch, its fix then its DOPs")
    func navigationData() throws {
        let frame = Self.navigationData()
        #expect(frame.count == 59 + 7)
        let data = try #require(SkytraqFrames.payload(of: frame).withUnsafeBytes { SkytraqNavigationData($0) })
        #expect(data.fixMode == 2 && data.satellitesUsed == 9 && data.week == 2300)
        #expect(data.timeOfWeekCentiseconds == 34_560_050)
        #expect(abs(data.position.z - 4_695_500.06) < 1e-6)

        let (updates, assembler) = assemble([frame])
        #expect(updates.count == 2)
        let fix = try #require(updates.first.flatMap { if case .fix(let fix) = $0 { fix } else { nil } })
        // Week 2300 began on Sunday 2024-02-04: GPS 2024-02-08 00:00:00.5, less 18 leap seconds.
        #expect(fix.time == GPSTime(
            year: 2024, month: 2, day: 7, time: NMEATime(hour: 23, minute: 59, second: 42, nanosecond: 500_000_000)))
        #expect(fix.mode == .threeDimensional && fix.status == .gps)
        #expect(abs(try #require(fix.latitude) - 47.661_958_4) < 1e-9)
        #expect(abs(try #require(fix.longitude) - -122.326_376_3) < 1e-9)
        #expect(abs(try #require(fix.altitudeHAE) - 56.02) < 1e-9)
        #expect(abs(try #require(fix.altitudeMSL) - 77.63) < 1e-9)
        #expect(abs(try #require(fix.climb) - 2) < 0.01)
        #expect(try #require(fix.speed) < 0.01)
        let dilutions = try #require(updates.last.flatMap { if case .sky(let sky) = $0 { sky } else { nil } })
        #expect(dilutions.gdop == 1.8 && dilutions.pdop == 1.5 && dilutions.hdop == 0.9)
        #expect(dilutions.vdop == 1.2 && dilutions.tdop == 0.8)
        #expect(assembler.solutions == 1 && assembler.cyclesOpened == 1)
    }
}
