import GPSFix
import NMEA
import Testing

@Suite("Fix assembler")
struct AssemblerTests {
    let cycle1 = [
        sentence("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,"),
        sentence("$GNGSA,A,3,03,19,27,13,,,,,,,,,4.97,4.87,1.00"),
        sentence("$GNGSA,A,3,88,,,,,,,,,,,,4.97,4.87,1.00"),
        sentence("$GPGSV,1,1,04,03,40,100,30,19,50,200,35,27,10,300,,13,20,45,25"),
        sentence("$GLGSV,1,1,02,88,60,120,31,80,05,10,"),
        sentence("$GNRMC,081412.000,A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A"),
        sentence("$GPZDA,081412.000,26,05,2014,,"),
    ].joined()

    func cycle(second: Int) -> String {
        cycle1.replacingOccurrences(of: "081412.000", with: String(format: "0814%02d.000", second))
            .split(separator: "\r\n").map { line -> String in
                let body = line.split(separator: "*")[0]
                return sentence(String(body))
            }.joined()
    }

    @Test("one fix and one sky view per cycle, merged from all of the cycle's sentences")
    func oneFixPerCycle() throws {
        let all = updates(of: cycle(second: 12) + cycle(second: 13) + cycle(second: 14))
        let fixes = all.compactMap(\.fix)
        #expect(fixes.count == 3)
        #expect(all.compactMap(\.sky).count == 3)
        let fix = try #require(fixes.first)
        #expect(fix.time == GPSTime(year: 2014, month: 5, day: 26, time: NMEATime(hour: 8, minute: 14, second: 12)))
        #expect(fix.mode == .threeDimensional)
        #expect(abs(fix.latitude! - 55.686593333) < 1e-9 && abs(fix.longitude! - 37.621461667) < 1e-9)
        #expect(fix.altitudeMSL == 66.2 && fix.geoidSeparation == 14.5)
        #expect(abs(fix.altitudeHAE! - 80.7) < 1e-9)
        #expect(abs(fix.speed! - 0.52 * 0.514_444_44) < 1e-9 && fix.track == 301.26)
        #expect(fixes[1].climb == 0)
    }

    @Test("satellites of several constellations merge, numbered as gpsd numbers them, used from every GSA")
    func multiConstellationSky() throws {
        let sky = try #require(updates(of: cycle(second: 12)).compactMap(\.sky).first)
        #expect(sky.satellites.map(\.identity.prn) == [3, 19, 27, 13, 88, 80])
        let glonass = sky.satellites[4]
        #expect(glonass.identity.gnss == .glonass && glonass.identity.svid == 24)
        #expect(sky.satellites.map(\.used) == [true, true, false, true, true, false])  // 27 has no signal
        #expect(sky.usedCount == 4 && sky.visibleCount == 6)
        #expect(sky.hdop == 4.87 && sky.pdop == 4.97 && sky.vdop == 1.0)
    }

    @Test("once learned, the cycle's last sentence sends the fix without waiting for the next cycle")
    func learnsCycleEnd() {
        var assembler = FixAssembler()
        let framer = NMEAFramer(configuration: .lenient)
        var fixesAfterEachSentence: [Int] = []
        var fixes = 0
        let text = cycle(second: 12) + cycle(second: 13) + cycle(second: 14) + cycle(second: 15)
        Array(text.utf8).withUnsafeBytes { bytes in
            framer.feed(bytes) { sentence in
                assembler.add(sentence) { if case .fix = $0 { fixes += 1 } }
                fixesAfterEachSentence.append(fixes)
            }
        }
        // Sentences 7, 14: the time-change rule sends cycles 1 and 2 at the next GGA (8, 15);
        // from cycle 3 on, the ZDA that ended two cycles running sends it at once.
        #expect(fixesAfterEachSentence[6] == 0 && fixesAfterEachSentence[7] == 1)
        #expect(fixesAfterEachSentence[20] == 3)
        #expect(fixesAfterEachSentence[27] == 4)
    }

    @Test("a cycle that ends with GSV groups ends at the last part of the last group, not at an earlier part")
    func learnsGroupEnd() {
        // RMC, GGA, then two GPGSV groups (4.11: L1, then L5): the L5 group's last part ends the cycle.
        func cycle(_ second: Int) -> String {
            let time = String(format: "1000%02d.00", second)
            return sentence("$GPRMC,\(time),A,5128.6757,N,00000.0927,W,0.13,271.2,221126,,,A")
                + sentence("$GPGGA,\(time),5128.6757,N,00000.0927,W,1,09,0.9,45.9,M,47.0,M,,")
                + sentence("$GPGSV,2,1,05,02,45,212,33,05,30,040,41,07,12,100,38,09,60,300,45,1")
                + sentence("$GPGSV,2,2,05,13,22,180,30,1")
                + sentence("$GPGSV,2,1,05,02,45,212,30,05,30,040,38,07,12,100,35,09,60,300,42,8")
                + sentence("$GPGSV,2,2,05,13,22,180,27,8")
        }
        var assembler = FixAssembler()
        let framer = NMEAFramer(configuration: .lenient)
        var emittedAfterEachSentence: [Int] = []
        var emitted = 0
        Array((0..<5).map(cycle).joined().utf8).withUnsafeBytes { bytes in
            framer.feed(bytes) { sentence in
                assembler.add(sentence) { if case .fix = $0 { emitted += 1 } }
                emittedAfterEachSentence.append(emitted)
            }
        }
        // Cycles 1 and 2 go out at the next RMC; from cycle 3 on, at their sixth sentence.
        #expect(emittedAfterEachSentence[5] == 0 && emittedAfterEachSentence[6] == 1)
        #expect(emittedAfterEachSentence[16] == 2 && emittedAfterEachSentence[17] == 3)
        #expect(emittedAfterEachSentence[22] == 3 && emittedAfterEachSentence[23] == 4)
    }

    /// A receiver's cycle: GGA, GSA, GSV, RMC; with a fix at `second`, or, without
    /// (`second` nil), with empty times and the satellites it is acquiring.
    static func cycle(second: Int?, satellites: [Int]) -> String {
        let listed = satellites.map { String(format: "%02d,40,100,30", $0) }.joined(separator: ",")
        let view = sentence("$GPGSV,1,1,\(String(format: "%02d", satellites.count)),\(listed)")
        guard let second else {
            return sentence("$GPGGA,,,,,,0,00,,,,,,,") + sentence("$GPGSA,A,1,,,,,,,,,,,,,,,") + view
                + sentence("$GNRMC,,V,,,,,,,,,,N")
        }
        let time = String(format: "1000%02d.00", second)
        let used = satellites.map { String(format: "%02d", $0) }.joined(separator: ",")
        return sentence("$GPGGA,\(time),5128.6757,N,00000.0927,W,1,\(satellites.count),0.9,45.9,M,47.0,M,,")
            + sentence("$GPGSA,A,3,\(used)" + String(repeating: ",", count: 12 - satellites.count) + ",1.6,0.9,1.3")
            + view + sentence("$GNRMC,\(time),A,5128.6757,N,00000.0927,W,0.13,271.2,221126,,,A")
    }

    /// Feeds `text` sentence by sentence; returns every update and how many fixes had gone
    /// out after each sentence.
    static func assemble(_ text: String) -> (updates: [LocationUpdate], fixesAfterEachSentence: [Int]) {
        var assembler = FixAssembler()
        let framer = NMEAFramer(configuration: .lenient)
        var all: [LocationUpdate] = []
        var fixesAfterEachSentence: [Int] = []
        Array(text.utf8).withUnsafeBytes { bytes in
            framer.feed(bytes) { sentence in
                assembler.add(sentence) { all.append($0) }
                fixesAfterEachSentence.append(all.count { $0.fix != nil })
            }
        }
        return (all, fixesAfterEachSentence)
    }

    @Test("a receiver that loses its fix is still reported every cycle, at the cycle's last sentence: no fix, no time, the satellites it sees")
    func cyclesWithoutFix() throws {
        let lost = [[5, 7], [5, 7, 9], [7]]
        let text = [12, 13, 14].map { Self.cycle(second: $0, satellites: [2, 5, 7, 9]) }.joined()
            + lost.map { Self.cycle(second: nil, satellites: $0) }.joined()
            + Self.cycle(second: 18, satellites: [2, 5, 7])
        let (all, fixesAfter) = Self.assemble(text)
        // Four sentences a cycle; RMC is learned as the last from the third cycle on, and
        // each cycle without a fix goes out at its own RMC, not at the next time.
        #expect(fixesAfter[11] == 3 && fixesAfter[15] == 4 && fixesAfter[19] == 5 && fixesAfter[23] == 6)
        #expect(fixesAfter[27] == 7)
        let fixes = all.compactMap(\.fix)
        #expect(fixes.count == 7)
        for fix in fixes[3..<6] { #expect(fix.mode == .noFix && fix.time == nil && fix.latitude == nil) }
        let skies = all.compactMap(\.sky)
        #expect(skies.count == 7)
        for (sky, prns) in zip(skies[3..<6], lost) {
            #expect(sky.time == nil && sky.satellites.map(\.identity.prn) == prns)
            #expect(sky.usedCount == 0 && sky.hdop == nil)
        }
        // The fix that comes back has its own cycle's values, none of the lost cycles'.
        #expect(fixes[6].mode == .threeDimensional && fixes[6].time?.time.second == 18)
        #expect(skies[6].satellites.map(\.identity.prn) == [2, 5, 7] && skies[6].usedCount == 3)
    }

    @Test("from a cold start, before any time, a sentence that recurs begins the next cycle")
    func coldStartCycles() throws {
        let acquiring = [[], [3], [3, 8], [3, 8, 11]]
        let (all, fixesAfter) = Self.assemble(acquiring.map { Self.cycle(second: nil, satellites: $0) }.joined())
        // Cycles 1 and 2 end at the next cycle's GGA; then RMC has ended two and ends the rest.
        #expect(fixesAfter[3] == 0 && fixesAfter[4] == 1 && fixesAfter[8] == 2)
        #expect(fixesAfter[11] == 3 && fixesAfter[15] == 4)
        #expect(all.compactMap(\.fix).allSatisfy { $0.mode == .noFix && $0.time == nil })
        #expect(all.compactMap(\.sky).map { $0.satellites.map(\.identity.prn) } == acquiring)
    }

    @Test("sentences are counted by type, every type, also past the 32 kept inline")
    func countsSentenceTypes() {
        // 40 made-up types (A00...A39), type k sent k + 1 times, and 3 GGAs.
        var text = ""
        for kind in 0..<40 {
            for _ in 0...kind { text += sentence(String(format: "$GPA%02d,1", kind)) }
        }
        text += cycle(second: 12).components(separatedBy: "\r\n").filter { $0.hasPrefix("$GPGGA") }
            .map { $0 + "\r\n" }.joined()
        for _ in 0..<2 { text += sentence("$GPGGA,081413.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,") }
        var assembler = FixAssembler()
        let framer = NMEAFramer(configuration: .lenient)
        Array(text.utf8).withUnsafeBytes { bytes in framer.feed(bytes) { assembler.add($0) { _ in } } }
        var expected = Dictionary(uniqueKeysWithValues: (0..<40).map { (String(format: "A%02d", $0), $0 + 1) })
        expected["GGA"] = 3
        #expect(assembler.sentenceCountsByType == expected)
        #expect(assembler.statistics.unknownSentences == (1...40).reduce(0, +))
    }

    @Test("a time without a known date gives a fix without time")
    func noDateNoTime() throws {
        let fix = try #require(updates(of: sentence("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,")).first?.fix)
        #expect(fix.time == nil && fix.mode == .threeDimensional)
    }

    @Test("GGA quality 0, RMC status V and GGA from no satellites are no fix, without position")
    func noFix() throws {
        for text in [
            sentence("$GPGGA,081412.000,5541.1956,N,03737.2877,E,0,5,4.87,66.2,M,14.5,M,,"),
            sentence("$GPRMC,081412.000,V,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,N"),
            sentence("$GPGGA,194050.00,4221.8237733,N,07101.9411707,W,1,00,3.3,10.835,M,-33.320,M,,"),
        ] {
            let fix = try #require(updates(of: text).first?.fix)
            #expect(fix.mode == .noFix && fix.latitude == nil, "\(text)")
        }
    }

    @Test("a GGA from no satellites beside a valid RMC: a 2D fix that keeps the GGA's altitude, as gpsd reports it")
    func noSatellitesBesideValidRMC() throws {
        let text = sentence("$GPRMC,120326,A,4221.3871,N,01322.0800,E,000.0,000.0,150305,001.4,E")
            + sentence("$GPGGA,120326,4221.3871,N,01322.0800,E,1,00,3.1,746.1,M,44.2,M,,")
            + sentence("$GPGSA,A,2,01,03,,14,,,,,,,,,3.1,3.1,")
        let fix = try #require(updates(of: text).compactMap(\.fix).last)
        #expect(fix.mode == .twoDimensional)
        #expect(fix.altitudeMSL == 746.1)
        #expect(fix.altitudeHAE.map { abs($0 - 790.3) < 1e-9 } == true)
        #expect(fix.geoidSeparation == nil)
    }

    @Test("a GGA with a fix quality but no position is no fix: never a 3D TPV without lat and lon")
    func qualityWithoutPosition() throws {
        let text = sentence("$GPRMC,123519,A,,,,,,,230394,,,A")
            + sentence("$GPGGA,123519,,,,,1,08,0.9,545.4,M,46.9,M,,")
        let fix = try #require(updates(of: text).compactMap(\.fix).last)
        #expect(fix.mode == .noFix && fix.latitude == nil && fix.altitudeMSL == nil)
        // The position the next cycle gives makes it a fix again.
        let next = text + sentence("$GPRMC,123520,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W,A")
            + sentence("$GPGGA,123520,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
        let fixes = updates(of: next).compactMap(\.fix)
        #expect(fixes.last?.mode == .threeDimensional && fixes.last?.latitude == 48.1173)
    }

    @Test("a GNS with an altitude is 3D from four satellites; from three it is 2D (the altitude held, not measured)")
    func gnsDimension() throws {
        func fix(satellites: String) -> Fix? {
            let text = sentence("$GPZDA,224749.00,23,11,2026,00,00")
                + sentence("$GNGNS,224750.00,3333.4268304,N,11153.3538273,W,AA,\(satellites),1.6,406.110,-26.294,,,S")
            return updates(of: text).compactMap(\.fix).last
        }
        #expect(fix(satellites: "04")?.mode == .threeDimensional && fix(satellites: "04")?.altitudeMSL == 406.11)
        #expect(fix(satellites: "03")?.mode == .twoDimensional && fix(satellites: "03")?.altitudeMSL == nil)
        #expect(fix(satellites: "")?.mode == .twoDimensional)
        #expect(fix(satellites: "03")?.latitude.map { abs($0 - 33.557113840) < 1e-9 } == true)
    }

    @Test("uSat: a cycle's GSA says which satellites are used; without one, the cycle's GGA count stands over the held view's flags")
    func usedCountWithoutGSA() throws {
        func withGSA(second: Int) -> String {
            sentence("$GPGGA,09530\(second).802,2712.6520,S,15303.1397,E,1,00,17.0,3.0,M,42.2,M,,")
                + sentence("$GPGSA,A,2,05,12,30,,,,,,,,,,17.0,17.0,0.0")
                + sentence("$GPGSV,1,1,04,05,45,347,44,12,39,002,43,30,60,311,45,07,45,212,")
                + sentence("$GPRMC,09530\(second).802,A,2712.6520,S,15303.1397,E,0.00,133.96,080407,,,A")
        }
        let withoutGSA = sentence("$GPGGA,095305.802,2712.6547,S,15303.1350,E,1,04,21.1,3.0,M,42.2,M,,")
            + sentence("$GPRMC,095305.802,A,2712.6547,S,15303.1350,E,1.93,133.96,080407,,,A")
        let skies = updates(of: withGSA(second: 4) + withoutGSA + withGSA(second: 6)).compactMap(\.sky)
        #expect(skies.map(\.usedCount) == [3, 4, 3])
        #expect(skies[1].satellites.filter(\.used).count == 3)  // the held view's flags, unchanged
    }

    @Test("uSat: a cycle's GSA beside a held view counts every satellite it lists, also one the held view heard without signal")
    func usedCountOfHeldView() throws {
        // Satellites 05, 12, 30 (30 heard without signal) in view from the first cycle;
        // the second cycle sends no GSV, and its GSA lists 05, 12, 30 and 07.
        func cycle(second: Int, gsa: String, gsv: String?) -> String {
            let time = "09530\(second).802"
            return sentence("$GPGGA,\(time),2712.6520,S,15303.1397,E,1,04,1.2,3.0,M,42.2,M,,") + sentence(gsa)
                + (gsv.map(sentence) ?? "") + sentence("$GPRMC,\(time),A,2712.6520,S,15303.1397,E,0.00,133.96,080407,,,A")
        }
        let text = cycle(second: 4, gsa: "$GPGSA,A,3,05,12,30,,,,,,,,,,2.0,1.2,1.6",
                         gsv: "$GPGSV,1,1,04,05,45,347,44,12,39,002,43,30,60,311,,07,45,212,")
            + cycle(second: 5, gsa: "$GPGSA,A,3,05,12,30,07,,,,,,,,,1.8,1.1,1.4", gsv: nil)
        let skies = updates(of: text).compactMap(\.sky)
        // The first view is the cycle's own: a satellite without signal is not used (gpsd).
        #expect(skies.map(\.usedCount) == [2, 4])
        #expect(skies[1].satellites.map(\.used) == [true, true, false, false])
    }

    @Test("a log header's date sets the century, and the rollover rule moves a lost era forward")
    func datesAndRollover() throws {
        let rmc = sentence("$GPRMC,000345.03,A,4808.9993,N,01135.0798,E,000.1,000.0,220899,003.0,E,A")
        // No header: the build's century, as gpsd (2099, where gpsd 3.22 then moves it by its rollover guess).
        let plain = try #require(updates(of: rmc).first?.fix?.time)
        #expect(plain.year == 2099 && plain.month == 8 && plain.day == 22)
        let corrected = try #require(updates(of: "# Date: 2019-04-07\n" + rmc).first?.fix?.time)
        #expect(corrected.year == 2019 && corrected.month == 4 && corrected.day == 7)
        let early = sentence("$GPRMC,000345.03,A,4808.9993,N,01135.0798,E,000.1,000.0,220801,003.0,E,A")
        #expect(try #require(updates(of: "# Date: 1995-01-01\n" + early).first?.fix?.time).year == 2001)
        #expect(CenturyRule(referenceYear: 1995).fullYear(1) == 2001)
        #expect(CenturyRule(referenceYear: 2090).fullYear(1) == 2101)
        #expect(CenturyRule().fullYear(99) == 2099 && CenturyRule().fullYear(26) == 2026)
    }

    @Test("a cycle past midnight whose date did not come (its RMC lost, or a receiver that sends the date less often) is on the next day, at every midnight")
    func dateCarriedPastMidnight() throws {
        func gga(_ time: String) -> String {
            sentence("$GPGGA,\(time),4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
        }
        let text = gga("235959.00") + sentence("$GPRMC,235959.00,A,4807.038,N,01131.000,E,0.0,0.0,311226,,,A")
            + gga("000000.00") + gga("000001.00") + gga("120000.00") + gga("235959.00") + gga("000000.00")
        let times = updates(of: text).compactMap(\.fix).compactMap(\.time)
        func at(_ year: Int, _ month: Int, _ day: Int, _ hour: UInt8, _ minute: UInt8, _ second: UInt8) -> GPSTime {
            GPSTime(year: year, month: month, day: day, time: NMEATime(hour: hour, minute: minute, second: second))
        }
        #expect(times == [
            at(2026, 12, 31, 23, 59, 59), at(2027, 1, 1, 0, 0, 0), at(2027, 1, 1, 0, 0, 1), at(2027, 1, 1, 12, 0, 0),
            at(2027, 1, 1, 23, 59, 59), at(2027, 1, 2, 0, 0, 0),
        ])
        // A cycle from before midnight arriving late, after the first of the next day (a
        // multiplexer's other talker): on its own day, and the next day's stays.
        let late = gga("235958.00") + sentence("$GPRMC,235958.00,A,4807.038,N,01131.000,E,0.0,0.0,311226,,,A")
            + gga("000000.00") + gga("235959.00") + gga("000001.00") + gga("000002.00")
        #expect(updates(of: late).compactMap(\.fix).compactMap(\.time) == [
            at(2026, 12, 31, 23, 59, 58), at(2027, 1, 1, 0, 0, 0), at(2026, 12, 31, 23, 59, 59), at(2027, 1, 1, 0, 0, 1),
            at(2027, 1, 1, 0, 0, 2),
        ])
    }

    @Test("two-digit years with nothing to place them fall in the build's century, as gpsd places them: built in 2026, 80 is 2080, not 1980")
    func twoDigitYearsPivotOnTheBuild() throws {
        #expect(CenturyRule.buildYear >= 2026)
        let century = CenturyRule.buildYear - CenturyRule.buildYear % 100
        #expect(CenturyRule().fullYear(80) == century + 80 && CenturyRule().fullYear(0) == century)
        let rmc = sentence("$GPRMC,120000.00,A,4807.038,N,01131.000,E,0.0,0.0,010180,,,A")
        let time = try #require(updates(of: rmc).first?.fix?.time)
        #expect(time.year == century + 80 && time.month == 1 && time.day == 1)
    }

    @Test("calendar days convert both ways")
    func calendar() {
        let time = NMEATime(hour: 0, minute: 0, second: 0)
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let date = GPSTime(daysSince1970: days, time: time)
            #expect(date.daysSince1970 == days)
        }
        #expect(GPSTime(year: 2000, month: 2, day: 29, time: time).daysSince1970 == 11_016)
    }

    @Test("a constellation the receiver stops listing leaves the next view; one listed on alternate cycles stays")
    func groupsFollowTheReceiversBursts() throws {
        let gps = sentence("$GPGSV,1,1,02,03,40,100,30,19,50,200,35")
        let beidou = sentence("$BDGSV,1,1,01,08,09,030,39")
        let galileo = sentence("$GAGSV,1,1,01,07,11,134,11")
        let glonass = sentence("$GLGSV,1,1,01,88,60,120,31")
        func cycle(_ second: Int, _ groups: String...) -> String {
            let time = String(format: "0814%02d.000", second)
            return sentence("$GPGGA,\(time),5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,") + groups.joined()
                + sentence("$GNRMC,\(time),A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A")
        }
        // BeiDou is listed once, then the bursts pass it over; GLONASS comes every other cycle.
        let text = cycle(12, gps, beidou, galileo) + cycle(13, gps, galileo, glonass) + cycle(14, gps, galileo)
            + cycle(15, gps, galileo, glonass)
        let views = updates(of: text).compactMap(\.sky).map { $0.satellites.map(\.identity.prn) }
        #expect(views == [[3, 19, 408, 307], [3, 19, 307, 88], [3, 19, 307, 88], [3, 19, 307, 88]])
    }

    @Test("NMEA 4.11 signals map to gpsd's sigid; a GSV group keys on its first sentence's signal")
    func signals() throws {
        let text = [
            sentence("$GPGSV,2,1,05,02,25,260,39,04,15,092,27,05,,,14,06,12,215,45"),
            sentence("$GPGSV,2,2,05,06,,,40,8"),
            sentence("$GAGSV,1,1,01,07,11,134,11,7"),
            sentence("$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A"),
        ].joined()
        let sky = try #require(updates(of: text).compactMap(\.sky).first)
        #expect(sky.satellites.map(\.identity.prn) == [2, 4, 5, 6, 6, 307])
        #expect(sky.satellites.map(\.signal) == [nil, nil, nil, nil, 7, 4])
        #expect(sky.satellites[2].elevation == nil && sky.satellites[2].snr == 14)
    }

    @Test("gpsd's satellite numbering", arguments: [
        (3, "GP", nil, 3, GNSS.gps, 3), (40, "GP", nil, 40, .sbas, 127), (70, "GN", nil, 70, .glonass, 6),
        (5, "GL", nil, 69, .glonass, 5), (12, "GA", nil, 312, .galileo, 12), (21, "GB", nil, 421, .beidou, 21),
        (219, "BD", nil, 419, .beidou, 19), (2, "QZ", nil, 194, .qzss, 2), (8, "GN", 4, 408, .beidou, 8),
        (3, "GN", 3, 303, .galileo, 3), (193, "GP", nil, 193, .qzss, 1), (102, "GA", nil, 302, .galileo, 2),
    ] as [(Int, String, Int?, Int, GNSS, Int)])
    func numbering(id: Int, talker: String, system: Int?, prn: Int, gnss: GNSS, svid: Int) throws {
        let talker = Talker(UInt16(talker.utf8.first!) << 8 | UInt16(talker.utf8.last!))
        let identity = try #require(SatelliteIdentity(nmeaID: id, talker: talker, system: system.flatMap(GNSS.init(nmeaSystemID:))))
        #expect(identity == SatelliteIdentity(prn: prn, gnss: gnss, svid: svid))
    }
}
