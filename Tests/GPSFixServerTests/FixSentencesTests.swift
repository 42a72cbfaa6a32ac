import GPSFix
import NMEA
import OutputFormats
import Testing

/// The NMEA 0183 written for a receiver that sends none of its own (UBX, TSIP, SiRF...), as
/// a chartplotter reads it: NMEA 2.3's status and mode letters, the receiver's own clock,
/// at most 82 characters a sentence.
@Suite("NMEA 0183 written from fixes")
struct FixSentencesTests {
    static let noon = GPSTime(year: 2026, month: 11, day: 26, time: NMEATime(hour: 12, minute: 0, second: 0))

    static func fix(mode: FixMode = .threeDimensional, status: FixStatus = .gps, time: GPSTime? = noon) -> Fix {
        var fix = Fix()
        fix.time = time
        fix.mode = mode
        fix.status = status
        if mode >= .twoDimensional {
            fix.latitude = 52.1
            fix.longitude = -4.3
            fix.altitudeMSL = 12.5
            fix.speed = 1
        }
        return fix
    }

    /// The sentences for `fix`, by type (`GGA`, `RMC`, `ZDA`), each split into its fields.
    static func sentences(_ fix: Fix, satellitesUsed: Int? = 8, hdop: Double? = 0.9) -> [String: [String]] {
        var byType: [String: [String]] = [:]
        for sentence in FixSentences.sentences(for: fix, satellitesUsed: satellitesUsed, hdop: hdop) {
            let text = String(decoding: sentence, as: UTF8.self)
            let fields = text.split(separator: "*")[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            byType[String(fields[0].suffix(3))] = fields
        }
        return byType
    }

    @Test("a dead-reckoned position is V with mode E (NMEA 2.3: A only for an autonomous or differential one); RTK is A with mode D")
    func statusAndMode() throws {
        let reckoned = Self.sentences(Self.fix(mode: .twoDimensional, status: .deadReckoning))
        #expect(reckoned["RMC"]?[2] == "V" && reckoned["RMC"]?.last == "E", "\(reckoned)")
        #expect(reckoned["GGA"]?[6] == "6")
        for status in [FixStatus.rtkFixed, .rtkFloat, .differential] {
            let corrected = Self.sentences(Self.fix(status: status))
            #expect(corrected["RMC"]?[2] == "A" && corrected["RMC"]?.last == "D", "\(status): \(corrected)")
        }
        let autonomous = Self.sentences(Self.fix())
        #expect(autonomous["RMC"]?[2] == "A" && autonomous["RMC"]?.last == "A")
        let simulated = Self.sentences(Self.fix(status: .simulated))
        #expect(simulated["RMC"]?[2] == "V" && simulated["RMC"]?.last == "S" && simulated["GGA"]?[6] == "8", "\(simulated)")
    }

    @Test("a leap second is written 23:59:60 of its own day, not the next midnight with the day before's date")
    func leapSecond() throws {
        let leap = GPSTime(year: 2026, month: 12, day: 31, time: NMEATime(hour: 23, minute: 59, second: 60))
        let written = Self.sentences(Self.fix(time: leap))
        #expect(written["GGA"]?[1] == "235960.00" && written["RMC"]?[1] == "235960.00" && written["ZDA"]?[1] == "235960.00")
        #expect(written["RMC"]?[9] == "311226" && written["ZDA"]?[2...4] == ["31", "12", "2026"])
    }

    @Test("a fix without a time (a cold start) is still said: GGA quality 0 and RMC V, without a time; no ZDA")
    func noTime() throws {
        let written = Self.sentences(Self.fix(mode: .noFix, time: nil), satellitesUsed: nil, hdop: nil)
        #expect(written["GGA"]?[1] == "" && written["GGA"]?[6] == "0", "\(written)")
        #expect(written["RMC"]?[1] == "" && written["RMC"]?[2] == "V" && written["RMC"]?.last == "N")
        #expect(written["ZDA"] == nil)
        // A position without a time: not one RMC may call valid.
        let untimed = Self.sentences(Self.fix(time: nil))
        #expect(untimed["RMC"]?[2] == "V" && untimed["RMC"]?.last == "N", "\(untimed)")
    }

    @Test("every sentence fits NMEA's 82 characters: a millimetre where it fits, fewer decimals where not")
    func lengthLimit() throws {
        var long = Self.fix(status: .rtkFixed)
        (long.latitude, long.longitude) = (39.739_200_5, -104.990_300_5)
        (long.altitudeMSL, long.geoidSeparation, long.speed, long.track) = (1609.3, -17.2, 123.456, 359.9)
        for fix in [long, Self.fix()] {
            for sentence in FixSentences.sentences(for: fix, satellitesUsed: 12, hdop: 10.5) {
                #expect(sentence.count + 2 <= 82, "\(String(decoding: sentence, as: UTF8.self))")
            }
        }
        // Short enough: seven decimals of a minute, about a millimetre.
        let short = Self.sentences(Self.fix())
        #expect(short["GGA"]?[2] == "5206.0000000" && short["RMC"]?[5] == "00418.0000000", "\(short)")
        let fitted = Self.sentences(long, satellitesUsed: 12, hdop: 10.5)
        #expect(fitted["GGA"]?[2].count == 10 || fitted["GGA"]?[2].count == 11, "\(fitted)")
    }

    @Test("a view that says the receiver tracks nothing clears a chartplotter's bars; a satellite not tracked has no signal figure")
    func emptyAndUntracked() throws {
        var none = SkyView()
        none.listsNoSatellites = true
        let cleared = FixSentences.sentences(for: none, mode: .noFix).map { String(decoding: $0, as: UTF8.self) }
        #expect(cleared.contains { $0.hasPrefix("$GPGSV,1,1,00*") }, "\(cleared)")
        var view = SkyView()
        view.satellites = [Satellite(identity: SatelliteIdentity(prn: 5, gnss: .gps, svid: 5), elevation: 40, azimuth: 100, snr: 0)]
        let listed = FixSentences.sentences(for: view, mode: .noFix).map { String(decoding: $0, as: UTF8.self) }
        #expect(listed.contains { $0.hasPrefix("$GPGSV,1,1,01,05,40,100,*") }, "\(listed)")
    }
}
