import DriverTSIP
import Foundation
import GPSFix
import NMEA
import ReceiverDrivers
import TestSupport
import Testing

/// Trimble captures from gpsd's regression suite (`fixtures/gpsd-binary/`), read through
/// the decoder with every driver, against what gpsd reports for them (their `.chk`).
@Suite("TSIP, from the Trimble captures")
struct TSIPCaptureTests {
    static func decode(_ name: String, chunkSize: Int = 4096) throws -> DecodedCapture {
        try .fixture(name, drivers: ReceiverDrivers.all, chunkSize: chunkSize)
    }

    static func time(_ year: Int, _ month: Int, _ day: Int, _ hour: UInt8, _ minute: UInt8, _ second: UInt8) -> GPSTime {
        GPSTime(year: year, month: month, day: day, time: NMEATime(hour: hour, minute: minute, second: second))
    }

    @Test("SMTx: the first fix is gpsd's surveyed position at 20:14:30, status 7; the device is Trimble TSIP")
    func smtx() throws {
        for chunkSize in [1, 4096] {
            let decoded = try Self.decode("trimble-smtx.log", chunkSize: chunkSize)
            let fix = try #require(decoded.timedFixes.first)
            #expect(fix.time == Self.time(2019, 12, 22, 20, 14, 30))
            #expect(fix.mode == .threeDimensional)
            #expect(fix.status == .surveyedTime)
            #expect(abs((fix.latitude ?? 0) - 41.339427963) < 1e-6)
            #expect(abs((fix.longitude ?? 0) + 75.706073822) < 1e-6)
            #expect(abs((fix.altitudeMSL ?? 0) - 252.1386) < 0.01)
            #expect(fix.leapSeconds == 18)
            // gpsd's 30 epochs, one fix each.
            #expect(Set(decoded.timedFixes.compactMap(\.time)).count == 30)
            #expect(decoded.receiver.driver == "Trimble TSIP")
            // The first 0x5C run: ten GPS satellites, none used (0x6D is a clock-only fix).
            let view = try #require(decoded.views.first)
            #expect(view.visibleCount == 10)
            #expect(view.usedCount == 0)
            #expect(view.time == Self.time(2019, 12, 22, 20, 14, 33))
        }
    }

    @Test("Lassen iQ: 0x8F-20's 2D fix at 01:24:46 and gpsd's channel table (nSat 7, three listed)")
    func lassen() throws {
        let decoded = try Self.decode("trimble-lassen_iq.log")
        let fix = try #require(decoded.timedFixes.first { $0.latitude != nil })
        #expect(fix.time == Self.time(2006, 11, 26, 1, 24, 46))
        #expect(fix.mode == .twoDimensional)
        #expect(abs((fix.latitude ?? 0) - 53.53774809) < 1e-6)
        #expect(abs((fix.longitude ?? 0) + 113.493257926) < 1e-6)
        #expect(abs((fix.altitudeMSL ?? 0) - 957.6) < 0.01)
        #expect(fix.speed == 0)
        // 0x41 before it: a fix with a time and the mode of the last 0x6D, no position.
        let first = try #require(decoded.timedFixes.first)
        #expect(first.mode == .threeDimensional)
        #expect(first.latitude == nil)
        let view = try #require(decoded.views.first)
        #expect(view.visibleCount == 7)
        #expect(view.satellites.map(\.identity.prn) == [6, 29, 2])
        #expect(view.usedCount == 4)
        #expect(view.satellites.map(\.used) == [false, true, true])
        // No 0x6D since 0x8F-20 opened the epoch: gpsd's DOPs from its table's geometry.
        let computed = try #require(
            decoded.views.last { $0.time == GPSTime(millisecondsSince1970: 1_164_504_299_531) })
        #expect(abs((computed.hdop ?? 0) - 27.32) < 0.01)
        #expect(abs((computed.pdop ?? 0) - 29.68) < 0.01)
    }

    @Test("RES 720 (TSIPv1): the first fix at 20:51:27, status 7, climb from the receiver; 45 signals")
    func res720() throws {
        let decoded = try Self.decode("trimble-res720.log")
        let fix = try #require(decoded.timedFixes.first)
        #expect(fix.time == Self.time(2022, 2, 21, 20, 51, 27))
        #expect(fix.mode == .threeDimensional)
        #expect(fix.status == .surveyedTime)
        #expect(abs((fix.latitude ?? 0) - 44.0688674) < 1e-6)
        #expect(abs((fix.longitude ?? 0) + 121.3141093) < 1e-6)
        #expect(abs((fix.altitudeMSL ?? 0) - 1139.2155) < 0.01)
        #expect(abs((fix.climb ?? 0) + 0.055) < 0.001)
        #expect(decoded.timedFixes.count == 17)
        let view = try #require(decoded.views.first)
        #expect(view.visibleCount == 45)
        // Timed by the signals' measurement, a second before the epoch's A1-00, as gpsd times it.
        #expect(view.time == Self.time(2022, 2, 21, 20, 51, 26))
        // The last run is reported at the end of the capture.
        #expect(decoded.views.count == 17)
        #expect(view.usedCount == 44)
        #expect(view.satellites.contains { $0.identity == SatelliteIdentity(prn: 423, gnss: .beidou, svid: 23) })
        #expect(abs((view.hdop ?? 0) - 0.48) < 0.01)
    }

    @Test("ResSMT360: subtypes from 0x1C-81 and 0x1C-83 as gpsd 3.22 prints them")
    func identity() throws {
        let decoded = try Self.decode("trimble-ressmt360-dr.log")
        #expect(decoded.receiver.driver == "Trimble TSIP")
        #expect(decoded.receiver.subtype == "fw 1.5 0 03/04/2018 ResSMT 360")
        #expect(decoded.receiver.subtype1 == "hw 1195000112 11/04/2019 13 3023 ResSMT 360")
        // Dead reckoning while the antenna had no satellites (minor alarm bit 3).
        #expect(decoded.timedFixes.contains { $0.status == .deadReckoning })
    }
}
