@testable import GPSFix
import NMEA
import Testing

/// Motion the receiver does not report, derived from consecutive fixes as gpsd derives it.
@Suite("Derived motion")
struct MotionTests {
    /// A GGA-and-ZDA receiver (no RMC, no VTG): it reports no speed or track of its own.
    static func cycle(second: Int, latitude: String, altitude: String = "66.2") -> String {
        let time = "0814\(second < 10 ? "0" : "")\(second).000"
        return sentence("$GPGGA,\(time),\(latitude),N,03737.2877,E,1,8,0.9,\(altitude),M,14.5,M,,")
            + sentence("$GPZDA,\(time),26,05,2014,,")
    }

    @Test("Vincenty's inverse on WGS-84 gives the textbook distance and bearing (Flinders Peak to Buninyong)")
    func vincenty() throws {
        let flindersPeak = (latitude: -(37 + 57 / 60.0 + 3.720_30 / 3600), longitude: 144 + 25 / 60.0 + 29.524_40 / 3600)
        let buninyong = (latitude: -(37 + 39 / 60.0 + 10.156_10 / 3600), longitude: 143 + 55 / 60.0 + 35.383_90 / 3600)
        let result = try #require(Geodesy.inverse(from: flindersPeak, to: buninyong))
        #expect(abs(result.distance - 54_972.271) < 0.001)
        #expect(abs(result.bearing - (306 + 52 / 60.0 + 5.37 / 3600)) < 1e-5)
    }

    @Test("a receiver without speed gets it from the distance between fixes over their interval, and a track when moving")
    func speedFromPositions() throws {
        // 0.6 arc-minutes north in a second: about 1112 m at 55.7 N.
        let fixes = updates(of: Self.cycle(second: 12, latitude: "5541.1956") + Self.cycle(second: 13, latitude: "5541.7956"))
            .compactMap(\.fix)
        #expect(fixes.count == 2)
        #expect(fixes[0].speed == nil)  // nothing to derive it from
        let distance = try #require(Geodesy.inverse(from: (fixes[0].latitude!, fixes[0].longitude!), to: (fixes[1].latitude!, fixes[1].longitude!)))
        #expect(fixes[1].speed == distance.distance)
        #expect(abs(distance.distance - 1113.3) < 1)
        #expect(fixes[1].track == 0)  // due north
        #expect(fixes[1].climb == 0)
    }

    @Test("standing still: speed 0 and no track; a climb from the altitudes")
    func standingStill() throws {
        let fixes = updates(of: Self.cycle(second: 12, latitude: "5541.1956") + Self.cycle(second: 14, latitude: "5541.1956", altitude: "67.2"))
            .compactMap(\.fix)
        #expect(fixes[1].speed == 0 && fixes[1].track == nil)
        #expect(fixes[1].climb == 0.5)
    }

    @Test("what the receiver reports is kept, and nothing is derived across a gap over an hour")
    func reportedAndGaps() throws {
        let rmc = sentence("$GPRMC,081413.000,A,5541.7956,N,03737.2877,E,0.52,301.26,260514,,,A")
        let reported = updates(of: Self.cycle(second: 12, latitude: "5541.1956") + Self.cycle(second: 13, latitude: "5541.7956") + rmc)
            .compactMap(\.fix)
        #expect(reported[1].speed == 0.52 * 0.514_444_44 && reported[1].track == 301.26)
        let later = sentence("$GPGGA,091413.000,5541.7956,N,03737.2877,E,1,8,0.9,66.2,M,14.5,M,,")
            + sentence("$GPZDA,091413.000,26,05,2014,,")
        let gap = updates(of: Self.cycle(second: 12, latitude: "5541.1956") + later).compactMap(\.fix)
        #expect(gap[1].speed == nil && gap[1].track == nil && gap[1].climb == nil)
    }
}
