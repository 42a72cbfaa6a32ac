import Foundation
import GPSDProtocol
@testable import GPSFix
import NMEA
import Testing

/// Sentences beyond the position core that the assembler uses rather than drops: u-blox's
/// PUBX,00 and PUBX,03, Ashtech's PASHR,POS and PASHR,SAT, SkyTraq's PSTI,030, GBS error
/// estimates, and HDT and THS headings. Each is written from its documentation (u-blox's
/// protocol specification, NMEA 0183) and checksummed here.
@Suite("Receiver extras")
struct ReceiverExtrasTests {
    static let rmc = sentence("$GPRMC,081350.00,A,4717.11321,N,00833.91519,E,0.004,77.52,091202,,,A")

    @Test("PUBX,00: altitude above the ellipsoid, mode from its navigation status, climb, accuracies and DOPs with TDOP")
    func pubxPosition() throws {
        let log = Self.rmc + sentence("$PUBX,00,081350.00,4717.113210,N,00833.915187,E,546.589,G3,2.1,2.0,0.007,77.52,0.007,,0.92,1.19,0.77,9,0,0")
        let all = updates(of: log)
        let fix = try #require(all.compactMap(\.fix).first)
        #expect(fix.mode == .threeDimensional)
        #expect(fix.altitudeHAE == 546.589 && fix.altitudeMSL == nil)
        #expect(fix.climb == -0.007)  // u-blox's vertical velocity is positive downwards
        #expect(fix.horizontalError == 2.1 && fix.verticalError == 2.0)
        let sky = try #require(all.compactMap(\.sky).first)
        #expect(sky.hdop == 0.92 && sky.vdop == 1.19 && sky.tdop == 0.77)
    }

    @Test("PUBX,00 navigation status: D3 is differential 3D, G2 2D, DR dead reckoning, NF no fix")
    func pubxStatus() throws {
        func fix(_ status: String) -> Fix? {
            updates(of: Self.rmc + sentence("$PUBX,00,081350.00,4717.113210,N,00833.915187,E,546.589,\(status),2.1,2.0,0.007,77.52,0.007,,0.92,1.19,0.77,9,0,0"))
                .compactMap(\.fix).first
        }
        #expect(fix("D3")?.mode == .threeDimensional && fix("D3")?.status == .differential)
        #expect(fix("G2")?.mode == .twoDimensional && fix("G2")?.altitudeHAE == nil)
        #expect(fix("DR")?.status == .deadReckoning)
        // RMC alone says 2D; PUBX's NF adds nothing to it.
        #expect(fix("NF")?.mode == .twoDimensional && fix("NF")?.altitudeHAE == nil)
    }

    @Test("PUBX,03: every tracked satellite, used where its status is U, positioned where it has both angles")
    func pubxSatellites() throws {
        let log = Self.rmc + sentence(
            "$PUBX,03,11,23,-,,,45,010,29,-,,,46,013,07,-,,,42,015,08,U,067,31,42,025,10,U,195,33,46,026,18,U,326,08,39,026,"
                + "17,-,,,32,015,26,U,306,66,48,025,27,U,073,10,36,026,28,U,089,61,46,024,15,-,,,39,014")
        let sky = try #require(updates(of: log).compactMap(\.sky).first)
        #expect(sky.visibleCount == 11)
        #expect(sky.usedCount == 6)
        #expect(sky.satellites.filter(\.used).map(\.identity.prn) == [8, 10, 18, 26, 27, 28])
        let eight = try #require(sky.satellites.first { $0.identity.prn == 8 })
        #expect(eight.azimuth == 67 && eight.elevation == 31 && eight.snr == 42)
        #expect(sky.satellites.first { $0.identity.prn == 23 }?.elevation == nil)
    }

    @Test("Ashtech PASHR,POS and PASHR,SAT: a 3D fix with its position type's status, speed from km/h, climb, DOPs; satellites with azimuth before elevation")
    func ashtech() throws {
        let all = updates(ofLog: try Fixtures.bytes("ashtech-pashr.nmea"))
        let fixes = all.compactMap(\.fix)
        try #require(fixes.count == 3)
        let first = fixes[0]
        #expect(first.time == GPSTime(year: 2026, month: 11, day: 23, time: NMEATime(hour: 15, minute: 14, second: 49)))
        #expect(first.mode == .threeDimensional && first.status == .differential)
        #expect(abs(first.latitude! - 37.391175) < 1e-9 && abs(first.longitude! + 122.037696667) < 1e-9)
        #expect(first.altitudeHAE == 29.6 && first.altitudeMSL == nil)
        #expect(abs(first.speed! - 3.0) < 1e-9 && first.track == 137.2 && first.climb == 0.5)
        // Position type 3 is a carrier-phase fixed solution; an empty one, no position.
        #expect(fixes[1].status == .rtkFixed)
        #expect(fixes[2].mode == .noFix && fixes[2].latitude == nil && fixes[2].time != nil)
        let skies = all.compactMap(\.sky)
        #expect(skies[0].pdop == 2.3 && skies[0].hdop == 1.4 && skies[0].vdop == 1.8 && skies[0].tdop == 1.1)
        #expect(skies[0].satellites.map(\.identity.prn) == [3, 23, 16, 22, 26, 31, 8])
        #expect(skies[0].satellites.map(\.used) == [true, true, true, true, true, true, false])
        let three = skies[0].satellites[0]
        #expect(three.azimuth == 103 && three.elevation == 56 && three.snr == 50)
        #expect(skies[1].satellites[0].snr == 51 && skies[1].usedCount == 6)
        #expect(skies[2].satellites.map(\.identity.prn) == [3, 23] && skies[2].usedCount == 0)
    }

    @Test("SkyTraq PSTI,030 alone: time, position, RTK status and the receiver's velocity; speed, track and climb from it only where nothing was derived")
    func skytraq() throws {
        let all = updates(ofLog: try Fixtures.bytes("skytraq-psti.nmea"))
        let fixes = all.compactMap(\.fix)
        try #require(fixes.count == 3)
        let first = fixes[0]
        #expect(first.time?.iso8601 == "2019-12-11T03:30:10.000Z")
        #expect(first.mode == .threeDimensional && first.status == .rtkFloat)
        #expect(abs(first.latitude! - (24 + 47.0895508 / 60)) < 1e-9 && first.altitudeMSL == 94.615)
        #expect(first.velocity == NEDVelocity(north: 4, east: 3, down: -0.5))
        // The first fix has nothing to derive motion from: the velocity gives it.
        #expect(abs(first.speed! - 5) < 1e-9 && abs(first.track! - 36.869_897_6) < 1e-6 && first.climb == 0.5)
        let second = fixes[1]
        #expect(second.status == .rtkFixed && second.velocity == first.velocity)
        // As gpsd reports it: the altitude change over the second (0.3 m), not the stated
        // 0.5 m/s up; speed and track from the positions, which agree with the velocity.
        #expect(abs(second.climb! - 0.3) < 1e-9)
        #expect(abs(second.speed! - 5) < 0.05 && abs(second.track! - 36.87) < 0.5)
        #expect(fixes[2].mode == .noFix && fixes[2].latitude == nil && fixes[2].velocity == nil)
        #expect(fixes[2].time?.iso8601 == "2019-12-11T03:30:12.000Z")
        let skies = all.compactMap(\.sky)
        try #require(skies.count == 3)
        #expect(skies[0].usedCount == 6 && skies[0].visibleCount == 7 && skies[0].pdop == 1.6)
        #expect(skies[1].usedCount == 6 && skies[1].visibleCount == 7)
        #expect(skies[2].usedCount == 0 && skies[2].visibleCount == 2 && skies[2].pdop == nil)
    }

    @Test("GBS of the cycle's time gives epx, epy and epv; a GBS of another time is not this cycle's")
    func gbsErrors() throws {
        let matching = try #require(updates(of: Self.rmc + sentence("$GPGBS,081350.00,3.0,1.9,4.2,,,,")).compactMap(\.fix).first)
        #expect(matching.longitudeError == 1.9 && matching.latitudeError == 3.0 && matching.verticalError == 4.2)
        let other = try #require(updates(of: Self.rmc + sentence("$GPGBS,081349.00,3.0,1.9,4.2,,,,")).compactMap(\.fix).first)
        #expect(other.longitudeError == nil && other.latitudeError == nil && other.verticalError == nil)
    }

    @Test("Garmin PGRMF after a cycle's GSA: its PDOP and TDOP stand; alone it gives time, date, position, mode, speed and course")
    func garminFixData() throws {
        let garmin = sentence("$GPRMC,093802,A,5213.1439,N,02100.6511,E,000.0,226.0,160305,004.2,E,D")
            + sentence("$GPGGA,093802,5213.1439,N,02100.6511,E,2,10,0.9,137.2,M,36.2,M,,")
            + sentence("$GPGSA,A,3,03,06,15,16,18,19,21,22,,27,29,,1.6,0.9,1.3")
            + sentence("$PGRMF,290,293895,160305,093802,13,5213.1439,N,02100.6511,E,A,2,0,226,2,1")
        let sky = try #require(updates(of: garmin).compactMap(\.sky).last)
        #expect(sky.pdop == 2 && sky.tdop == 1 && sky.hdop == 0.9 && sky.vdop == 1.3)
        let alone = updates(of: sentence("$PGRMF,290,293895,160305,093802,13,5213.1439,N,02100.6511,E,A,1,36,226,2,1"))
        let fix = try #require(alone.compactMap(\.fix).first)
        #expect(fix.mode == .twoDimensional)
        #expect(fix.time?.iso8601 == "2005-03-16T09:38:02.000Z")
        #expect(abs((fix.latitude ?? 0) - 52.219_065) < 1e-6 && abs((fix.longitude ?? 0) - 21.010_851_7) < 1e-6)
        #expect(abs((fix.speed ?? 0) - 10) < 1e-9 && fix.track == 226)
        // A position the user entered (mode M) is not the receiver's fix.
        let manual = updates(of: sentence("$PGRMF,290,293895,160305,093802,13,5213.1439,N,02100.6511,E,M,2,0,226,2,1"))
        #expect(manual.compactMap(\.fix).allSatisfy { $0.mode < .twoDimensional && $0.latitude == nil })
    }

    @Test("Magellan PMGNST states the mode: 3 with T makes an RMC's fix 3D; F adds nothing to it")
    func magellanStatus() throws {
        let rmc = sentence("$GPRMC,093802,A,5213.1439,N,02100.6511,E,000.0,226.0,160305,004.2,E,A")
        let threeD = try #require(updates(of: rmc + sentence("$PMGNST,01.75,3,T,816,11.1,+00000,20")).compactMap(\.fix).first)
        #expect(threeD.mode == .threeDimensional)
        let noFix = try #require(updates(of: rmc + sentence("$PMGNST,01.75,3,F,816,11.1,+00000,20")).compactMap(\.fix).first)
        #expect(noFix.mode == .twoDimensional)
        let alone = try #require(updates(of: sentence("$GPGGA,093802,,,,,0,00,,,M,,M,,") + sentence("$PMGNST,01.75,2,F,816,11.1,+00000,20"))
            .compactMap(\.fix).first)
        #expect(alone.mode == .noFix)
    }

    @Test("SiRF PSRFEPE gives eph, epv, eps and epd and an HDOP that gives way to the GGA's; a V status gives nothing")
    func sirfErrors() throws {
        let rmc = sentence("$GPRMC,100542.000,A,5213.1439,N,02100.6511,E,0.0,226.0,160305,,,A")
        let fix = try #require(updates(of: rmc + sentence("$PSRFEPE,100542.000,A,0.7,6.82,10.69,0.0,180.0")).compactMap(\.fix).first)
        #expect(fix.horizontalError == 6.82 && fix.verticalError == 10.69 && fix.speedError == 0 && fix.trackError == 180)
        #expect(updates(of: rmc + sentence("$PSRFEPE,100542.000,A,0.7,6.82,10.69,0.0,180.0")).compactMap(\.sky).first?.hdop == 0.7)
        let withGGA = rmc + sentence("$GPGGA,100542.000,5213.1439,N,02100.6511,E,1,08,1.1,137.2,M,36.2,M,,")
            + sentence("$PSRFEPE,100542.000,A,0.7,6.82,10.69,0.0,180.0")
        #expect(updates(of: withGGA).compactMap(\.sky).first?.hdop == 1.1)
        let invalid = try #require(updates(of: rmc + sentence("$PSRFEPE,100542.000,V,0.7,6.82,10.69,0.0,180.0")).compactMap(\.fix).first)
        #expect(invalid.horizontalError == nil && invalid.speedError == nil)
    }

    @Test("HDT's heading is reported once per cycle as an attitude; an empty HDT reports none")
    func hdtHeading() throws {
        let heading = updates(of: Self.rmc + sentence("$GPHDT,274.07,T")).compactMap { update -> Attitude? in
            if case .attitude(let attitude) = update { attitude } else { nil }
        }
        #expect(heading.map(\.heading) == [274.07])
        #expect(heading.first?.time == GPSTime(year: 2002, month: 12, day: 9, time: NMEATime(hour: 8, minute: 13, second: 50)))
        let empty = updates(of: Self.rmc + sentence("$GPHDT,,T")).filter { if case .attitude = $0 { true } else { false } }
        #expect(empty.isEmpty)
    }

    @Test("THS, HDT's NMEA 4 successor: its heading is an attitude unless its mode is V (not valid)")
    func thsHeading() throws {
        func headings(_ ths: String) -> [Double?] {
            updates(of: Self.rmc + sentence(ths)).compactMap { update -> Attitude? in
                if case .attitude(let attitude) = update { attitude } else { nil }
            }.map(\.heading)
        }
        #expect(headings("$GNTHS,350.74,A") == [350.74])
        #expect(headings("$GNTHS,350.74,E") == [350.74])  // dead reckoning still points somewhere
        #expect(headings("$GNTHS,350.74,V").isEmpty)
        #expect(headings("$GNTHS,,V").isEmpty)
    }
}

/// Sky state that outlives the cycle that brought it (issue: receivers that send GSA and
/// GSV only every few cycles) and dilutions computed from geometry.
@Suite("Held sky and computed dilutions")
struct HeldSkyTests {
    static func gga(_ second: Int) -> String {
        sentence("$GPGGA,1852\(second).000,4854.2575,N,00219.9816,E,1,05,1.7,124.4,M,47.3,M,,0000")
    }
    static func rmc(_ second: Int) -> String {
        sentence("$GPRMC,1852\(second).000,A,4854.2575,N,00219.9816,E,0.00,296.61,210706,,,A")
    }
    static let sky = sentence("$GPGSA,A,3,14,01,30,06,09,,,,,,,,2.8,1.7,2.2")
        + sentence("$GPGSV,3,1,11,30,79,308,20,05,54,079,16,06,43,204,29,14,39,247,41")
        + sentence("$GPGSV,3,2,11,01,31,303,31,02,28,077,20,25,17,309,,09,17,138,25")
        + sentence("$GPGSV,3,3,11,04,14,040,,24,02,020,,20,00,342,")

    @Test("between GSAs every cycle's SKY keeps the receiver's last DOPs and satellites")
    func heldBetweenUpdates() throws {
        let log = Self.gga(44) + Self.sky + Self.rmc(44) + Self.gga(45) + Self.rmc(45) + Self.gga(46) + Self.rmc(46)
        let skies = updates(of: log).compactMap(\.sky)
        #expect(skies.count == 3)
        for sky in skies {
            #expect(sky.pdop == 2.8 && sky.hdop == 1.7 && sky.vdop == 2.2, "\(sky)")
            #expect(sky.visibleCount == 11 && sky.usedCount == 5)
        }
    }

    @Test("a cycle that opens with a sentence without DOPs (RMC first) does not hold the last GSA's: they are computed from the held view")
    func dilutionsNotCarriedPastRMC() throws {
        let log = Self.rmc(44) + Self.gga(44) + Self.sky + Self.rmc(45) + Self.gga(45) + Self.rmc(46) + Self.gga(46)
        let skies = updates(of: log).compactMap(\.sky)
        try #require(skies.count == 3)
        #expect(skies[0].pdop == 2.8 && skies[0].vdop == 2.2)
        for sky in skies.dropFirst() {
            // The view and its flags are held; the GGA gives the HDOP, the geometry the rest.
            let computed = try #require(DilutionOfPrecision(usedSatellitesOf: sky.satellites))
            #expect(sky.visibleCount == 11 && sky.hdop == 1.7)
            #expect(sky.pdop == computed.pdop && sky.vdop == computed.vdop && sky.pdop != 2.8, "\(sky)")
        }
    }

    @Test("held values expire: more than 30 s without GSA or GSV forgets the satellites and their DOPs")
    func heldValuesExpire() throws {
        let log = Self.gga(14) + Self.sky + Self.rmc(14) + Self.gga(44) + Self.rmc(44) + Self.gga(50) + Self.rmc(50)
        let skies = updates(of: log).compactMap(\.sky)
        #expect(skies.count == 3)
        // 36 s later: only what the GGA itself says, its HDOP and used count.
        let expired = try #require(skies.last)
        #expect(expired.time?.time.second == 50)
        #expect(expired.hdop == 1.7 && expired.vdop == nil && expired.pdop == nil)
        #expect(expired.satellites.isEmpty && expired.usedCount == 5)
        // 30 s later, at the limit, they still stood.
        #expect(skies[1].pdop == 2.8 && skies[1].visibleCount == 11)
    }

    @Test("GSA after the GSV groups: the view goes out when the GSA comes, with the last GSA's flags; the cycle's end adds the new GSA's DOPs and count without the satellites")
    func gsaAfterGSV() throws {
        let all = updates(ofLog: try Fixtures.bytes("gsv-before-gsa.nmea"))
        let fixes = all.compactMap(\.fix)
        try #require(fixes.count == 3)
        // Per cycle: the view when its first GSA arrives, then the fix, then the GSAs' word.
        let kinds = all.map { $0.fix != nil ? "TPV" : $0.sky.map { $0.satellitesReportedEarlier ? "DOP" : "SKY" } ?? "?" }
        #expect(kinds == ["SKY", "TPV", "DOP", "SKY", "TPV", "DOP", "SKY", "TPV", "DOP"])
        let skies = all.compactMap(\.sky)
        let used = { (sky: SkyView) in sky.satellites.filter(\.used).map(\.identity.prn) }
        // The first view: no GSA yet, so nothing used, and only the GGA's HDOP.
        #expect(skies[0].visibleCount == 8 && used(skies[0]).isEmpty && skies[0].usedCount == 0)
        #expect(skies[0].hdop == 1.1 && skies[0].pdop == nil)
        // Each later view carries the previous cycle's used flags and this cycle's GGA
        // HDOP. Its cycle opened with an RMC, which carries no DOP, so the last GSA's
        // PDOP and VDOP are not held: they are computed from the view's geometry (the
        // cycle's end has the GSAs' own).
        #expect(used(skies[2]) == [1, 3, 4, 9, 70, 79] && skies[2].hdop == 1.0)
        let computed = try #require(DilutionOfPrecision(usedSatellitesOf: skies[2].satellites))
        #expect(skies[2].pdop == computed.pdop && skies[2].vdop == computed.vdop && skies[2].pdop != 1.9)
        #expect(skies[3].pdop == 1.7 && skies[3].vdop == 1.4 && skies[3].usedCount == 7)
        #expect(used(skies[4]) == [1, 3, 4, 9, 17, 70, 79] && skies[4].hdop == 0.9 && skies[4].pdop != 1.7)
        let last = skies[5]
        #expect(last.pdop == 1.5 && last.vdop == 1.2 && last.hdop == 0.9 && last.usedCount == 8)
        // The later report keeps the view, with this cycle's flags, for the daemon's state;
        // its JSON carries the DOPs and uSat only, as gpsd's does.
        #expect(used(last) == [1, 3, 4, 9, 17, 70, 79, 84])
        let json = String(decoding: GPSDReport.sky(last, device: nil), as: UTF8.self)
        #expect(json.contains("\"uSat\":8") && json.contains("\"pdop\":1.50"))
        #expect(!json.contains("satellites") && !json.contains("nSat"))
        let early = String(decoding: GPSDReport.sky(skies[4], device: nil), as: UTF8.self)
        #expect(early.contains("\"nSat\":8") && early.contains("\"satellites\":["))
    }

    @Test("GSA after the GSV groups in cycles that open with a GGA: the early view keeps the last GSA's DOPs, as gpsd keeps them")
    func gsaAfterGSVOpenedByGGA() throws {
        let gsv = sentence("$GPGSV,2,1,05,01,38,160,35,03,80,057,29,04,65,211,44,09,26,227,36")
            + sentence("$GPGSV,2,2,05,17,30,269,29")
        func cycle(_ second: Int, hdop: String, gsa: String) -> String {
            sentence("$GPGGA,0804\(second).00,5002.453527,N,01958.831794,E,1,05,\(hdop),202.1,M,39.6,M,,") + gsv
                + sentence("$GPGSA,A,3,\(gsa)") + sentence("$GPRMC,0804\(second).00,A,5002.453527,N,01958.831794,E,0.0,16.6,301120,,,A")
        }
        let log = cycle(10, hdop: "1.1", gsa: "01,03,04,09,,,,,,,,,1.9,1.1,1.5")
            + cycle(11, hdop: "1.0", gsa: "01,03,04,09,17,,,,,,,,1.7,1.0,1.4")
        let skies = updates(of: log).compactMap(\.sky)
        try #require(skies.count == 4)
        // The second cycle's view: its GGA's HDOP, and the PDOP and VDOP of the GSA before.
        #expect(!skies[2].satellitesReportedEarlier && skies[2].hdop == 1.0 && skies[2].pdop == 1.9 && skies[2].vdop == 1.5)
        #expect(skies[3].satellitesReportedEarlier && skies[3].pdop == 1.7 && skies[3].vdop == 1.4)
    }

    @Test("GSA before the GSV groups (most receivers): one SKY per cycle, at its end, with the cycle's GSA")
    func gsaBeforeGSV() throws {
        let log = Self.gga(44) + Self.sky + Self.rmc(44) + Self.gga(45) + Self.sky + Self.rmc(45)
        let skies = updates(of: log).compactMap(\.sky)
        #expect(skies.count == 2)
        #expect(skies.allSatisfy { !$0.satellitesReportedEarlier && $0.visibleCount == 11 && $0.pdop == 2.8 })
    }

    @Test("DOPs a receiver does not send are computed from the used satellites' geometry; its own are kept")
    func computedDilutions() throws {
        var sky = SkyView()
        let positions: [(Int, Double, Double)] = [(1, 90, 0), (2, 30, 0), (3, 30, 120), (4, 30, 240)]
        sky.satellites = positions.map { prn, elevation, azimuth in
            Satellite(identity: SatelliteIdentity(prn: prn, gnss: .gps, svid: prn), elevation: elevation, azimuth: azimuth,
                      snr: 40, used: true)
        }
        sky.hdop = 9.9
        sky.fillMissingDilutions()
        #expect(sky.hdop == 9.9)  // the receiver's
        // One overhead and three 120° apart at 30°: east and north symmetric.
        let xdop = try #require(sky.xdop), ydop = try #require(sky.ydop)
        #expect(abs(xdop - ydop) < 1e-9)
        let pdop = try #require(sky.pdop), vdop = try #require(sky.vdop)
        #expect(abs(pdop * pdop - (xdop * xdop + ydop * ydop + vdop * vdop)) < 1e-9)
        // Three satellites cannot fix position and time: nothing is computed.
        var few = SkyView()
        few.satellites = Array(sky.satellites.prefix(3))
        few.fillMissingDilutions()
        #expect(few.pdop == nil)
    }

    @Test("DOPs of 0 and of 99 or more are a receiver's placeholders for none: left out, as gpsd leaves them out")
    func placeholderDilutions() throws {
        // BT-451 style: 99.99 while it has no fix.
        let unknown = sentence("$GPGGA,152506.00,,,,,0,00,99.99,,,,,,")
            + sentence("$GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99") + sentence("$GPRMC,152506.00,V,,,,,,,091209,,,N")
        let highSky = try #require(updates(of: unknown).compactMap(\.sky).first)
        #expect(highSky.hdop == nil && highSky.pdop == nil && highSky.vdop == nil && highSky.usedCount == 0)
        // SkyTraq style: 0.0.
        let zero = sentence("$GPGGA,212406.000,0000.0000000,N,00000.0000000,E,0,00,0.0,0.000,M,0.000,M,,0000")
            + sentence("$GPGSA,A,1,,,,,,,,,,,,,0.0,0.0,0.0")
            + sentence("$GPRMC,212406.000,V,0000.0000000,N,00000.0000000,E,000.0,000.0,280316,,,N")
        let zeroSky = try #require(updates(of: zero).compactMap(\.sky).first)
        #expect(zeroSky.hdop == nil && zeroSky.pdop == nil && zeroSky.vdop == nil)
        // A small DOP is a DOP.
        let small = sentence("$GPGGA,000145.00,4404.126998,N,12118.844143,W,1,15,0.4,1133.4,M,-20.1,M,,")
            + sentence("$GPGSA,A,3,01,07,11,13,15,17,19,28,30,,,,1.7,1.0,1.4")
            + sentence("$GPRMC,000145.00,A,4404.126998,N,12118.844143,W,000.0,,020220,,,A")
        let smallSky = try #require(updates(of: small).compactMap(\.sky).first)
        #expect(smallSky.hdop == 0.4 && smallSky.pdop == 1.7 && smallSky.vdop == 1.4)
    }

    @Test("whole degrees' sines and cosines come from a table holding libm's values; other angles from libm")
    func wholeDegreeTable() {
        for degrees in Array(stride(from: -90.0, through: 359.0, by: 1)) + [-0.5, 12.25, 359.5, 360] {
            let (sine, cosine) = DilutionOfPrecision.sineAndCosine(degrees: degrees)
            #expect(sine == sin(degrees * (.pi / 180)) && cosine == cos(degrees * (.pi / 180)), "\(degrees)°")
        }
    }
}

/// Talker and vendor variants of the standard satellite sentences.
@Suite("Sentence variants")
struct SentenceVariantTests {
    @Test("Quectel's PQGSV and PQGSA: BeiDou and QZSS satellites by their trailing system id, used flags included")
    func quectelSatellites() throws {
        let sky = try #require(updates(ofLog: try Fixtures.bytes("quectel-pq.nmea")).compactMap(\.sky).last)
        let bySystem = Dictionary(grouping: sky.satellites, by: \.identity.gnss)
        #expect(bySystem[.gps]?.map(\.identity.prn) == [5, 12, 24, 25])
        #expect(bySystem[.beidou]?.map(\.identity.prn) == [408, 414, 427])
        #expect(bySystem[.qzss]?.map(\.identity.prn) == [194, 195])
        #expect(sky.visibleCount == 9 && sky.usedCount == 8)
        #expect(sky.satellites.first { $0.identity.prn == 408 }?.elevation == 50)
        // Garmin's PGRMC (configuration) is still no RMC: only PQ's GSA and GSV are standard.
        #expect(SentenceAddress("PGRMC").isProprietary && !SentenceAddress("PQGSV").isProprietary)
    }
}

extension SentenceVariantTests {
    @Test("two GNGSA without a system id: each list is read as the system whose view holds it, never marking GPS 06 for BeiDou 06")
    func multiGNSSWithoutSystemIDs() throws {
        let sky = try #require(updates(ofLog: try Fixtures.bytes("gn-gsa-two-systems.nmea")).compactMap(\.sky).last)
        #expect(sky.satellites.filter(\.used).map(\.identity.prn).sorted() == [2, 5, 10, 406, 409, 416])
        #expect(sky.satellites.first { $0.identity.prn == 6 }?.used == false)
        #expect(sky.usedCount == 6 && sky.visibleCount == 7)
    }
}

extension SentenceVariantTests {
    @Test("a multiplexer's stream: every epoch's TPV carries its own position, never its neighbour's, with the heading beside it")
    func multiplexedEpochs() throws {
        let all = updates(ofLog: try Fixtures.bytes("multiplexer.nmea"))
        var positions: [Int: Double] = [:]
        for case .fix(let fix) in all {
            guard let time = fix.time, let latitude = fix.latitude else { continue }
            positions[Int(time.time.second)] = latitude
        }
        // Epoch 10 + k is at 54° 4.1000' + 0.0037' k north, whichever sentence arrived last.
        #expect(positions.count == 7)  // six GGA/RMC epochs and the last GLL's
        for (second, latitude) in positions {
            let expected = 54 + (4.1 + 0.0037 * Double(second - 10)) / 60
            #expect(abs(latitude - expected) < 1e-9, "epoch \(second): \(latitude)")
        }
        let headings = all.compactMap { update -> Double? in if case .attitude(let attitude) = update { attitude.heading } else { nil } }
        #expect(headings.count == 6)
    }
}
