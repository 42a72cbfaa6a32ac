import Foundation
import GPSFix
import NMEA
import Testing

/// Receivers whose forms the project had no capture of, each from a fixture written from
/// the form described.
@Suite("Unseen receivers")
struct UnseenReceiverTests {
    @Test("Quectel EG25-G: PQGSV's signal and system ids put each satellite in its constellation, PQGSA's used flags on BeiDou and QZSS")
    func quectelTwoTrailingFields() throws {
        let sky = try #require(updates(ofLog: try Fixtures.bytes("quectel-eg25.nmea")).compactMap(\.sky).last)
        let bySystem = Dictionary(grouping: sky.satellites, by: \.identity.gnss)
        #expect(bySystem[.beidou]?.map(\.identity.prn) == [404, 412, 419, 425, 433, 437])
        #expect(bySystem[.beidou]?.filter(\.used).map(\.identity.prn) == [412, 419, 433])
        #expect(bySystem[.qzss]?.map(\.identity.prn) == [194] && bySystem[.qzss]?.first?.used == true)
        #expect(bySystem[.gps]?.count == 7 && bySystem[.glonass]?.count == 3 && bySystem[.galileo]?.count == 2)
        #expect(sky.visibleCount == 19 && sky.usedCount == 14)
        // A BeiDou satellite's angles are the PQGSV's, not a GPS satellite's of the same number.
        #expect(sky.satellites.first { $0.identity.prn == 412 }?.elevation == 46)
    }

    @Test("a chartplotter stamping RMC a second after GGA: each TPV carries the position, speed and track stamped with its time")
    func chartplotterStamps() throws {
        let bytes = try Fixtures.bytes("chartplotter.nmea")
        let fixes = updates(ofLog: bytes).compactMap(\.fix).filter { $0.time != nil }
        #expect(fixes.count == 8)
        for fix in fixes {
            let second = Int(try #require(fix.time).time.second)  // 12:30:01 to 12:30:08
            // GGA of second s (s < 8) is at 51° 30.00' + 0.01' s; RMC of s at the same place,
            // 5.6 + 0.1 s knots, track 40 + 2 s.
            let latitude = 51 + (30 + 0.01 * Double(min(second, 8))) / 60
            #expect(abs(try #require(fix.latitude) - latitude) < 1e-9, "12:30:0\(second) latitude")
            #expect(abs(try #require(fix.speed) - (5.6 + 0.1 * Double(second)) * 1852 / 3600) < 1e-3, "12:30:0\(second) speed")
            #expect(fix.track == 40 + 2 * Double(second), "12:30:0\(second) track")
        }
        // Empty route sentences change nothing.
        let withoutRoutes = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("$GPAPB") && !$0.hasPrefix("$GPBOD") && !$0.hasPrefix("$GPAAM") }.joined(separator: "\n")
        #expect(updates(of: withoutRoutes).compactMap(\.fix) == updates(ofLog: bytes).compactMap(\.fix))
    }

    @Test("SiRFstar V's two GNGSA without a system id: uSat is the cycle's whole count, where gpsd reports the last GSA's")
    func sirfFiveWholeCount() throws {
        let skies = updates(ofLog: try Fixtures.bytes("sirf5-two-gngsa.nmea")).compactMap(\.sky)
        let last = try #require(skies.last)
        #expect(last.usedCount == 13)
        #expect(last.satellites.filter(\.used).map(\.identity.prn) == [2, 5, 7, 9, 13, 16, 20, 26, 29, 66, 67, 76, 82])
    }
}
