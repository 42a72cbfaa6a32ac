import GPSFix
import GPSFixNTRIP
import NMEA
import OutputFormats
import Testing

/// The GGA sent to casters takes its numbers from fixes and from `--ntrip-position`: a
/// receiver's valid field or a typed value once stopped the daemon (a trap converting
/// an altitude of 1e17 to `Int`).
@Suite("The GGA sent to casters: every number finite and in range")
struct PositionValueTests {
    static let noon = WallTime(seconds: 1_764_158_400, nanoseconds: 0)

    /// The sentences `text` holds, decoded: the fixes, and what the assembler counted.
    static func fixes(_ text: String) -> (fixes: [Fix], statistics: FixAssembler.Statistics) {
        let decoder = ReceiverStreamDecoder()
        var fixes: [Fix] = []
        Array(text.utf8).withUnsafeBytes { bytes in
            decoder.feed(bytes) { if case .fix(let fix) = $0 { fixes.append(fix) } }
        }
        decoder.finish { if case .fix(let fix) = $0 { fixes.append(fix) } }
        return (fixes, decoder.assembler.statistics)
    }

    @Test("a report whose altitude is 99999999999999999 (a valid NMEA field) gives a GGA, not a trap")
    func hugeAltitude() {
        let report = PositionReport(latitude: 52.1, longitude: 4.3, altitude: Double("99999999999999999")!)
        let line = String(decoding: report.gga(at: Self.noon), as: UTF8.self)
        // The double nearest 99999999999999999 is 1e17, written exactly (to a decimetre:
        // more decimals would not fit NMEA's 82 characters).
        #expect(line.contains(",100000000000000000.0,M,"), "\(line)")
        #expect(line.hasSuffix("\r\n"))
    }

    @Test("minutes a hair under 10 that round up to 10.0000000 are written as two digits, not three (found by the outputs fuzzer)")
    func minutesRoundingUpToTen() {
        // 131 degrees and 9.99999999 minutes: rounded to seven decimals, 10.0000000.
        let report = PositionReport(latitude: 48.1173, longitude: 131 + 9.99999999 / 60)
        let line = String(decoding: report.gga(at: Self.noon), as: UTF8.self)
        #expect(line.contains(",13110.0000000,E,"), "\(line)")
        // And a hair under 60 carries into the degrees, as before.
        let carried = String(decoding: PositionReport(latitude: 48 + 59.99999999 / 60, longitude: 4).gga(at: Self.noon), as: UTF8.self)
        #expect(carried.contains(",4900.0000000,N,"), "\(carried)")
    }

    @Test("a position out of every range is sent as no position (quality 0), never formatted")
    func positionOutOfRange() {
        for (latitude, longitude) in [(Double.nan, 4.0), (52.0, .infinity), (1e300, 4.0), (52.0, -181.0)] {
            let line = String(decoding: PositionReport(latitude: latitude, longitude: longitude).gga(at: Self.noon), as: UTF8.self)
            #expect(line.hasPrefix("$GPGGA,120000.00,,,,,0,"), "\(line)")
        }
    }

    @Test("through the assembler: the GGA's huge altitude is left out of the fix and counted, and the GGA sent has none")
    func hugeAltitudeThroughTheAssembler() throws {
        let (fixes, statistics) = Self.fixes(
            "$GPGGA,120000.00,5206.0000,N,00418.0000,E,1,08,0.9,99999999999999999,M,46.9,M,,*7E\r\n"
                + "$GPRMC,120000.00,A,5206.0000,N,00418.0000,E,0.0,0.0,261126,,,A*51\r\n"
                + "$GPGGA,120001.00,5206.0000,N,00418.0000,E,1,08,0.9,2.5,M,46.9,M,,*6F\r\n"
                + "$GPRMC,120001.00,A,5206.0000,N,00418.0000,E,0.0,0.0,261126,,,A*50\r\n")
        #expect(fixes.count == 2)
        let first = try #require(fixes.first)
        #expect(abs((first.latitude ?? 0) - 52.1) < 1e-9 && first.altitudeMSL == nil && first.altitudeHAE == nil && first.climb == nil)
        // The altitude above sea level, and the one above the ellipsoid made from it.
        #expect(statistics.valuesOutOfRange == 2)
        let report = try #require(PositionReport(fix: first, satellitesUsed: 8, hdop: 0.9))
        let line = String(decoding: report.gga(at: Self.noon), as: UTF8.self)
        #expect(line.contains(",0.9,,M,46.900,M,"), "\(line)")
        // The next cycle's altitude is a good one, and goes out.
        #expect(fixes.last?.altitudeMSL == 2.5)
    }

    @Test(
        "a configured position is finite and in range: inf, nan and values past the poles are refused, saying which",
        arguments: [
            ("52,4,inf", "altitude"), ("52,4,nan", "altitude"), ("inf,4", "latitude"), ("91,4", "latitude"),
            ("52,-180.5", "longitude"), ("52,4,1e17", "altitude"), ("52", "LAT,LON"), ("52,4,", "altitude"),
        ])
    func configuredPosition(text: String, named: String) {
        #expect {
            _ = try PositionReport(parsing: text, allowingAltitude: true)
        } throws: { error in
            "\(error)".contains(named)
        }
    }

    @Test("a configured position in range is read as given")
    func configuredPositionInRange() throws {
        let position = try PositionReport(parsing: "52.37, 4.89, -12.5", allowingAltitude: true)
        #expect(position.latitude == 52.37 && position.longitude == 4.89 && position.altitude == -12.5)
        #expect(throws: PositionReport.ParsingError.self) { try PositionReport(parsing: "52,4,1", allowingAltitude: false) }
    }
}
