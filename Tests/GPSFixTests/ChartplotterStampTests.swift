import Foundation
import GPSFix
import TestSupport
import Testing

/// A chartplotter's stream as its output queue really sends it: GGA and GLL stamped with
/// second s, RMC, VTG and ZDA with s+1, the other instruments' sentences anywhere between,
/// any sentence left out now and then (a 4800-baud port cannot carry them all every
/// second), and, on some plotters, RMC without a date (ZDA carries it). Whatever is sent,
/// each TPV carries the values stamped with its own second.
@Suite("A chartplotter's stamps")
struct ChartplotterStampTests {
    /// What the receiver stamped with one second.
    struct Stamped {
        var position: (latitude: Double, longitude: Double)?
        var speed: Double?
        var track: Double?
    }

    static let instruments = [
        "$SDDPT,12.4,0.5,", "$SDHDG,43.0,,,1.5,W", "$SDHDG,44.0,,,1.5,W", "$WIMWV,80.0,R,12.3,N,A",
        "$IIXDR,C,14.2,C,AIRTEMP", "$SDVHW,,T,,M,5.2,N,9.6,K",
    ]

    /// `seconds` seconds of such a stream from 12:30:00 on 25 November 2026, and what each
    /// second's sentences said.
    static func stream(seconds: Int, dated: Bool, using random: inout SeededGenerator) -> (log: String, stamped: [Int: Stamped]) {
        func coordinate(_ degrees: Double, _ positive: String, _ negative: String, width: Int) -> String {
            let whole = Int(abs(degrees))
            let minutes = (abs(degrees) - Double(whole)) * 60
            return String(format: "%0\(width)d%07.4f,%@", whole, minutes, degrees >= 0 ? positive : negative)
        }
        func stamp(_ second: Int) -> String { String(format: "1230%02d.00", second) }
        // Positions rounded to what four decimals of minutes say, so the expected values
        // are the ones on the wire.
        func onTheWire(_ degrees: Double) -> Double { (degrees * 600_000).rounded() / 600_000 }
        var positions: [(Double, Double)] = []
        for _ in 0...seconds {
            let latitude = 51.5 + Double.random(in: 0..<0.001, using: &random)
            let longitude = -1.08 - Double.random(in: 0..<0.001, using: &random)
            positions.append((onTheWire(latitude), onTheWire(longitude)))
        }
        var stamped: [Int: Stamped] = [:]
        var log = ""
        for second in 0..<seconds {
            var burst: [String] = []
            let (latitude, longitude) = positions[second]
            let place = coordinate(latitude, "N", "S", width: 2) + "," + coordinate(longitude, "E", "W", width: 3)
            if Int.random(in: 0..<10, using: &random) > 0 {
                burst.append("$GPGGA,\(stamp(second)),\(place),1,09,0.9,10.0,M,47.0,M,,")
                stamped[second, default: Stamped()].position = (latitude, longitude)
            }
            if Int.random(in: 0..<10, using: &random) > 0 {
                burst.append("$GPGLL,\(place),\(stamp(second)),A,A")
                stamped[second, default: Stamped()].position = (latitude, longitude)
            }
            if Bool.random(using: &random) { burst.append("$GPGSA,A,3,02,05,12,13,15,18,20,25,29,,,,1.6,0.9,1.3") }
            if Bool.random(using: &random) {
                burst += ["$GPGSV,2,1,06,02,35,140,42,05,60,290,45,12,25,060,38,13,45,210,40", "$GPGSV,2,2,06,15,70,100,47,18,15,320,33"]
            }
            let next = second + 1
            let (nextLatitude, nextLongitude) = positions[next]
            let knots = (Double.random(in: 0..<6, using: &random) * 10).rounded() / 10
            let track = (Double.random(in: 0..<360, using: &random) * 10).rounded() / 10
            if Int.random(in: 0..<10, using: &random) > 0 {
                let nextPlace = coordinate(nextLatitude, "N", "S", width: 2) + "," + coordinate(nextLongitude, "E", "W", width: 3)
                burst.append("$GPRMC,\(stamp(next)),A,\(nextPlace),\(knots),\(track),\(dated ? "251126" : ""),1.5,W,A")
                if Bool.random(using: &random) { burst.append("$GPVTG,\(track),T,,M,\(knots),N,\(knots * 1.852),K,A") }
                var values = stamped[next, default: Stamped()]
                values.speed = knots * 1852 / 3600
                values.track = track
                values.position = values.position ?? (nextLatitude, nextLongitude)
                stamped[next] = values
            }
            burst += ["$GPZDA,\(stamp(next)),25,11,2026,00,00", "$GPAPB,,,,,,,,,,,,,,", "$GPBOD,,T,,M,,", "$GPAAM,,,,,"]
            for instrument in instruments + instruments.prefix(Int.random(in: 0...3, using: &random)) {
                burst.insert(instrument, at: Int.random(in: 0...burst.count, using: &random))
            }
            log += burst.map(sentence).joined()
        }
        return (log, stamped)
    }

    @Test("every TPV carries the position, speed and track stamped with its second", arguments: [true, false])
    func stampsKept(datedRMC: Bool) throws {
        var random = SeededGenerator(seed: datedRMC ? 0x6368_6172 : 0x706C_6F74)
        for round in 0..<20 {
            let (log, stamped) = Self.stream(seconds: 30, dated: datedRMC, using: &random)
            var last: [Int: Fix] = [:]
            for case .fix(let fix) in updates(of: log) {
                guard let time = fix.time else { continue }
                last[Int(time.time.second)] = fix
            }
            #expect(last.count >= 25, "round \(round)")
            for (second, fix) in last {
                guard let values = stamped[second] else {
                    // Only a ZDA of that second came through: a time, no position.
                    #expect(fix.mode < .twoDimensional, "round \(round), 12:30:\(second)")
                    continue
                }
                let position = try #require(values.position)
                #expect(abs(try #require(fix.latitude) - position.latitude) < 1e-9, "round \(round), 12:30:\(second)")
                #expect(abs(try #require(fix.longitude) - position.longitude) < 1e-9, "round \(round), 12:30:\(second)")
                // A measured speed and track are reported as measured, never derived.
                if let speed = values.speed { #expect(abs(try #require(fix.speed) - speed) < 1e-3, "round \(round), 12:30:\(second)") }
                if let track = values.track { #expect(fix.track == track, "round \(round), 12:30:\(second)") }
            }
        }
    }

    @Test("a heading sentence is not a course: HDG gives no track where RMC has none")
    func headingIsNoTrack() throws {
        let log = [
            "$GPRMC,123001.00,A,5130.0000,N,00105.0000,W,0.0,,251126,1.5,W,A", "$SDHDG,46.0,,,1.5,W",
            "$GPGGA,123001.00,5130.0000,N,00105.0000,W,1,09,0.9,10.0,M,47.0,M,,", "$SDHDG,47.0,,,1.5,W",
            "$GPRMC,123002.00,A,5130.0000,N,00105.0000,W,0.0,,251126,1.5,W,A", "$SDHDG,48.0,,,1.5,W",
        ].map(sentence).joined()
        let fixes = updates(of: log).compactMap(\.fix).filter { $0.time != nil }
        #expect(fixes.count == 2)
        #expect(fixes.allSatisfy { $0.track == nil && $0.speed == 0 })
    }
}
