import DriverSiRF
import Foundation
import GPSFix
import NMEA
import ReceiverDrivers
import TestSupport
import Testing

/// gpsd's SiRF captures (`fixtures/gpsd-binary/`) through the decoder with every driver,
/// against what gpsd reports for them (their `.chk`).
@Suite("SiRF, from gpsd's captures")
struct SiRFCaptureTests {
    static func decode(_ name: String, chunkSize: Int = 4096) throws -> DecodedCapture {
        try .fixture(name, drivers: ReceiverDrivers.all, chunkSize: chunkSize)
    }

    static func time(_ day: Int, _ hour: UInt8, _ minute: UInt8, _ second: UInt8, milliseconds: UInt32) -> GPSTime {
        GPSTime(
            year: 2005, month: 6, day: day,
            time: NMEATime(hour: hour, minute: minute, second: second, nanosecond: milliseconds * 1_000_000))
    }

    @Test("BU-303 standing still: eleven fixes in any chunking, the first as gpsd's; the device is SiRF")
    func stillFix() throws {
        for chunkSize in [1, 13, 4096] {
            let decoded = try Self.decode("bu303-stillfix.log", chunkSize: chunkSize)
            #expect(decoded.fixes.count == 11)
            #expect(decoded.receiver.driver == "SiRF")
        }
        let decoded = try Self.decode("bu303-stillfix.log")
        let fix = try #require(decoded.fixes.first)
        #expect(fix.time == Self.time(9, 14, 34, 12, milliseconds: 280))
        #expect(fix.mode == .threeDimensional)
        #expect(abs(try #require(fix.latitude) - 46.498167579) < 1e-6)
        #expect(abs(try #require(fix.longitude) - 7.567452213) < 1e-6)
        #expect(abs(try #require(fix.altitudeMSL) - 1352.1000) < 0.01)
        #expect(decoded.fixes.last?.time == Self.time(9, 14, 34, 22, milliseconds: 280))
    }

    @Test("BU-303 sky: MID 4's channels, DOPs from the geometry of the satellites it used")
    func stillFixSky() throws {
        let view = try #require(try Self.decode("bu303-stillfix.log").views.first)
        #expect(view.time == Self.time(9, 14, 34, 12, milliseconds: 280))
        #expect(view.visibleCount == 8 && view.usedCount == 5)
        #expect(abs(try #require(view.hdop) - 2.38) < 0.01)
        #expect(abs(try #require(view.pdop) - 4.24) < 0.01)
        #expect(abs(try #require(view.vdop) - 3.51) < 0.01)
        let prn8 = try #require(view.satellites.first { $0.identity.prn == 8 })
        #expect(prn8.elevation == 65.5 && prn8.azimuth == 189 && prn8.used)
        #expect(abs(try #require(prn8.snr) - 44.8) < 0.05)
        let prn23 = try #require(view.satellites.first { $0.identity.prn == 23 })
        #expect(!prn23.used && prn23.snr == 0)
    }

    @Test("u-blox SiRF I: MID 2 until MID 98 comes, then MID 98's UTC, motion and DOPs")
    func extendedNavigation() throws {
        let decoded = try Self.decode("ublox-sirf1.log")
        #expect(decoded.fixes.count == 8)
        let first = try #require(decoded.fixes.first)
        #expect(first.time == Self.time(11, 9, 6, 8, milliseconds: 990))
        #expect(abs(try #require(first.latitude) - 52.062675883) < 1e-6)
        let extended = decoded.fixes[1]
        #expect(extended.time == Self.time(11, 9, 6, 13, milliseconds: 999))
        #expect(extended.mode == .threeDimensional)
        #expect(abs(try #require(extended.latitude) - 52.062675221) < 1e-6)
        #expect(abs(try #require(extended.longitude) - 5.138613239) < 1e-6)
        #expect(abs(try #require(extended.altitudeMSL) - 36.7544) < 0.01)
        #expect(abs(try #require(extended.speed) - 0.023) < 1e-3)
        #expect(abs(try #require(extended.climb) - 0.024) < 1e-3)
        #expect(abs(try #require(extended.track) - 54.4418) < 1e-3)
        // The next view holds MID 98's DOPs, as gpsd's does.
        let view = try #require(decoded.views.dropFirst().first)
        #expect(view.hdop == 1.8 && view.pdop == 0.8 && view.vdop == 1.0)
        #expect(view.visibleCount == 12 && view.usedCount == 8)
    }
}
