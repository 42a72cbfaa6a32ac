import DriverSkytraq
import Foundation
import GPSFix
import NMEA
import ReceiverDrivers
import TestSupport
import Testing

/// gpsd's Skytraq capture (`fixtures/gpsd-binary/skytraq-bin.log`), read through the
/// decoder with every driver, against what gpsd reports for it (its `.chk`).
@Suite("Skytraq, from gpsd's capture")
struct SkytraqCaptureTests {
    /// 2016-04-01 03:35:SS.999 UTC, in the capture.
    static func time(_ second: UInt8, milliseconds: UInt32 = 999) -> GPSTime {
        GPSTime(
            year: 2016, month: 4, day: 1,
            time: NMEATime(hour: 3, minute: 35, second: second, nanosecond: milliseconds * 1_000_000))
    }

    static func decode(chunkSize: Int = 4096) throws -> (updates: [LocationUpdate], receiver: ReceiverIdentity) {
        let decoded = try DecodedCapture.fixture("skytraq-bin.log", drivers: ReceiverDrivers.all, chunkSize: chunkSize)
        return (decoded.updates, decoded.receiver)
    }

    static func fixes(_ updates: [LocationUpdate]) -> [Fix] {
        updates.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
    }

    @Test("nine fixes, one per 0xDF, in any chunking, 03:35:38.999 to 46.999; the device is named Skytraq")
    func epochs() throws {
        for chunkSize in [1, 5, 4096] {
            let (updates, receiver) = try Self.decode(chunkSize: chunkSize)
            #expect(Self.fixes(updates).map(\.time) == (38...46).map { Self.time($0) })
            #expect(receiver.driver == "Skytraq")
        }
    }

    @Test("the first fix is gpsd's: 2D, position, altitude above sea level, speed and track")
    func firstFix() throws {
        let fix = try #require(Self.fixes(try Self.decode().updates).first)
        // gpsd: "mode":2,"time":"2016-04-01T03:35:38.999Z","lat":44.068796225,"lon":-121.314519974,
        // "altMSL":1099.9092,"track":308.9814,"speed":0.141
        #expect(fix.mode == .twoDimensional)
        #expect(fix.time == Self.time(38))
        #expect(abs(try #require(fix.latitude) - 44.068_796_225) < 1e-9)
        #expect(abs(try #require(fix.longitude) - -121.314_519_974) < 1e-9)
        #expect(abs(try #require(fix.altitudeMSL) - 1099.9092) < 1e-4)
        #expect(abs(try #require(fix.speed) - 0.141) < 1e-3)
        #expect(abs(try #require(fix.track) - 308.9814) < 1e-4)
    }

    @Test("the 3D fix of 03:35:42.999 climbs as gpsd says, from the ECEF velocity")
    func threeDimensionalFix() throws {
        let fix = try #require(Self.fixes(try Self.decode().updates).first { $0.time == Self.time(42) })
        // gpsd: "mode":3,"lat":44.068876942,"lon":-121.314390414,"altMSL":1089.6634,"climb":-0.197
        #expect(fix.mode == .threeDimensional)
        #expect(abs(try #require(fix.latitude) - 44.068_876_942) < 1e-9)
        #expect(abs(try #require(fix.longitude) - -121.314_390_414) < 1e-9)
        #expect(abs(try #require(fix.altitudeMSL) - 1089.6634) < 1e-4)
        #expect(abs(try #require(fix.climb) - -0.197) < 1e-3)
    }

    @Test("the sky: the first view's DOPs computed, then the solution's; untimed until 0xDC, then 03:35:40.998")
    func sky() throws {
        let views = try Self.decode().updates.compactMap { if case .sky(let sky) = $0 { sky } else { nil } }
        let withSatellites = views.filter { !$0.satellitesReportedEarlier }
        #expect(withSatellites.count == 9)
        let first = try #require(withSatellites.first)
        #expect(first.visibleCount == 7 && first.usedCount == 4 && first.time == nil)
        #expect(abs(try #require(first.gdop) - 5.63) < 0.005)
        // gpsd's second view: the first 0xDF's DOPs, "hdop":1.73,"pdop":1.98,"uSat":3
        let second = withSatellites[1]
        #expect(second.usedCount == 3)
        #expect(abs(try #require(second.hdop) - 1.73) < 0.005)
        #expect(abs(try #require(second.pdop) - 1.98) < 0.005)
        #expect(withSatellites[2].time == Self.time(40, milliseconds: 998))
        #expect(withSatellites[8].time == Self.time(46, milliseconds: 998))
    }
}
