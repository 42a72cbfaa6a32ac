@testable import GPSFix
import NMEA
import Testing

/// What a receiver's stream, however wrong, can make the NMEA assembler hold: its GSV
/// groups and its counts of sentences are bounded, and what they refuse is counted.
@Suite("Bounds on what the NMEA assembler holds")
struct SkyBoundsTests {
    /// Decodes `text` and returns the updates, with the decoder to read its counts.
    func decode(_ text: String) -> (updates: [LocationUpdate], decoder: ReceiverStreamDecoder) {
        let decoder = ReceiverStreamDecoder()
        var updates: [LocationUpdate] = []
        Array(text.utf8).withUnsafeBytes { decoder.feed($0) { updates.append($0) } }
        decoder.finish { updates.append($0) }
        return (updates, decoder)
    }

    /// Part `number` of a GPS GSV group of `count` parts, listing four satellites.
    func gsvPart(_ number: Int, of count: Int, signal: String? = nil) -> String {
        let satellites = (0..<4).map { String(format: "%02d,40,100,30", (number * 4 + $0) % 32 + 1) }
        return sentence("$GPGSV,\(count),\(number),99,\(satellites.joined(separator: ","))" + (signal.map { ",\($0)" } ?? ""))
    }

    func rmc(second: Int) -> String {
        sentence("$GPRMC,0814\(String(format: "%02d", second)).000,A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A")
    }

    @Test("a GGA's count of satellites used or differential station no receiver can have (-5, 999999999; station 9999, -7) is left out and counted; the position and the corrections' age stay")
    func absurdCounts() throws {
        func gga(satellites: String, station: String) -> String {
            sentence("$GPGGA,081412.000,5541.1956,N,03737.2877,E,2,\(satellites),0.9,66.2,M,14.5,M,1.4,\(station)")
        }
        for (satellites, station) in [("-5", "9999"), ("999999999", "-7")] {
            let (updates, decoder) = decode(gga(satellites: satellites, station: station) + rmc(second: 12) + rmc(second: 13))
            let fix = try #require(updates.compactMap(\.fix).first, "\(satellites)")
            #expect(fix.latitude != nil && fix.differentialStation == nil && fix.differentialAge == 1.4, "\(station)")
            #expect(updates.compactMap(\.sky).allSatisfy { $0.usedCount == nil }, "\(satellites)")
            #expect(decoder.assembler.statistics.valuesOutOfRange >= 2, "\(satellites), \(station)")
        }
        let (plausible, decoder) = decode(gga(satellites: "12", station: "4095") + rmc(second: 12) + rmc(second: 13))
        #expect(plausible.compactMap(\.fix).first?.differentialStation == 4095)
        #expect(plausible.compactMap(\.sky).first?.usedCount == 12)
        #expect(decoder.assembler.statistics.valuesOutOfRange == 0)
    }

    @Test("a GSV group claiming more satellites than a sky view holds is refused and counted, not reported")
    func oversizedGroup() throws {
        let parts = 100  // 400 satellites
        let group = (1...parts).map { gsvPart($0, of: parts) }.joined()
        let (updates, decoder) = decode(rmc(second: 12) + group + rmc(second: 13) + rmc(second: 14))
        #expect(decoder.assembler.statistics.decodingErrors == 1)
        for sky in updates.compactMap(\.sky) { #expect(sky.satellites.count <= SkyView.maximumSatellites) }
        // The group's next whole list is read.
        let (renewed, _) = decode(rmc(second: 12) + group + gsvPart(1, of: 1) + rmc(second: 13) + rmc(second: 14))
        let sky = try #require(renewed.compactMap(\.sky).last)
        #expect(sky.satellites.map(\.identity.prn) == [5, 6, 7, 8])
    }

    @Test("a GSV group that never ends is refused once it passes a view's size, and the next group is read whole")
    func endlessGroup() throws {
        let endless = (1...1000).map { gsvPart($0, of: 999_999_999) }.joined()
        let whole = gsvPart(1, of: 1)
        let (updates, decoder) = decode(rmc(second: 12) + endless + whole + rmc(second: 13) + rmc(second: 14))
        #expect(decoder.assembler.statistics.decodingErrors == 1)
        let sky = try #require(updates.compactMap(\.sky).last)
        #expect(sky.satellites.map(\.identity.prn) == [5, 6, 7, 8])
    }

    @Test("GSV groups of more signals than any receiver sends are refused past the most held, and counted")
    func tooManyGroups() throws {
        // NMEA 4.11 signal ids, hexadecimal: 255 groups of one system, one sentence each.
        let groups = (1...255).map { gsvPart(1, of: 1, signal: String($0, radix: 16, uppercase: true)) }.joined()
        let (updates, decoder) = decode(rmc(second: 12) + groups + rmc(second: 13) + rmc(second: 14))
        let sky = try #require(updates.compactMap(\.sky).last)
        #expect(sky.satellites.count == SatelliteTracker.maximumGroups * 4)
        #expect(decoder.assembler.statistics.decodingErrors == 255 - SatelliteTracker.maximumGroups)
    }

    @Test("a maker's whole list with no room left is refused whole: the used flags and the sky stay as they were")
    func wholeListWithoutRoom() throws {
        let used = sentence("$PUBX,03,2,08,U,067,31,42,025,10,U,195,33,46,026")
        let nearlyFull = (1...63).map { gsvPart($0, of: 63) }.joined()  // 252 satellites: room for 3 more
        let sbas = (120...123).map { "\($0),U,100,20,40,010" }.joined(separator: ",")
        let tooMany = sentence("$PUBX,03,4,\(sbas)")
        let (updates, decoder) = decode(
            rmc(second: 12) + used + rmc(second: 13) + nearlyFull + tooMany + rmc(second: 14) + rmc(second: 15))
        #expect(decoder.assembler.statistics.decodingErrors == 1)
        let sky = try #require(updates.compactMap(\.sky).last)
        #expect(sky.satellites.count == 2 + 252)
        #expect(Set(sky.satellites.filter(\.used).map(\.identity.prn)) == [8, 10])
    }

    @Test("a tally counts a bounded number of distinct keys, and counts the occurrences it could not place")
    func tallyBound() {
        var tally = Tally(placeholder: 0)
        for key in 1...1000 { tally.count(key) }
        tally.count(1)
        #expect(tally.counts.count == Tally<Int>.maximumKeys)
        #expect(tally.uncounted == 1000 - Tally<Int>.maximumKeys)
        #expect(tally.occurrences(of: 1) == 2)
        #expect(tally.occurrences(of: 1000) == 0)
        tally.reset()
        #expect(tally.counts.isEmpty && tally.uncounted == 0)
    }
}
