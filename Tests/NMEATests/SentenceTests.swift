import NMEA
import Testing

@Suite("Typed sentences")
struct SentenceTests {
    @Test("GGA: time, position, quality, satellites, HDOP, altitude and geoid separation")
    func gga() throws {
        guard case .gga(let gga) = try decode("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A")
        else { Issue.record("not a GGA"); return }
        #expect(gga.time == NMEATime(hour: 8, minute: 14, second: 12))
        #expect(abs(gga.latitude!.degrees - 55.686593333) < 1e-9)
        #expect(abs(gga.longitude!.degrees - 37.621461667) < 1e-9)
        #expect(gga.quality == 1)
        #expect(gga.satellitesUsed == 5)
        #expect(gga.hdop == NMEADecimal("4.87"))
        #expect(gga.altitude == NMEADecimal("66.2"))
        #expect(gga.geoidSeparation == NMEADecimal("14.5"))
        #expect(gga.differentialAge == nil)
    }

    @Test("a high-precision GGA keeps every digit; south and west are negative")
    func highPrecisionGGA() throws {
        let text = "$GPGGA,113938.50,3842.86006889,N,11705.43645510,W,2,09,1.5,1864.182,M,-44.296,M,1.4,0000*45"
        guard case .gga(let gga) = try decode(text) else { Issue.record("not a GGA"); return }
        #expect(gga.time == NMEATime(hour: 11, minute: 39, second: 38, nanosecond: 500_000_000))
        #expect(gga.latitude?.degreesAndMinutes.description == "3842.86006889")
        #expect(abs(gga.longitude!.degrees - -117.090607585) < 1e-9)
        #expect(gga.geoidSeparation == NMEADecimal("-44.296"))
        #expect(gga.differentialAge == NMEADecimal("1.4"))
        #expect(gga.differentialStation == 0)
    }

    @Test("RMC with NMEA 4.10 navigational status, and an empty no-fix RMC")
    func rmc() throws {
        guard case .rmc(let rmc) = try decode("$GNRMC,003956.00,A,4552.65403,S,17030.00668,E,0.025,,120419,,,A,V*07")
        else { Issue.record("not an RMC"); return }
        #expect(rmc.isValid == true)
        #expect(rmc.latitude!.degrees < 0)
        #expect(rmc.speedKnots == NMEADecimal("0.025"))
        #expect(rmc.track == nil)
        #expect(rmc.date == NMEADate(year: 19, month: 4, day: 12, hasCentury: false))
        #expect(rmc.mode == .autonomous)
        #expect(rmc.navigationalStatus == UInt8(ascii: "V"))

        guard case .rmc(let empty) = try decode("$GNRMC,074150.799,V,,,,,,,250215,,,N*52")
        else { Issue.record("not an RMC"); return }
        #expect(empty.isValid == false)
        #expect(empty.latitude == nil && empty.longitude == nil && empty.speedKnots == nil)
        #expect(empty.mode == .notValid)
    }

    @Test("RMC magnetic variation west is negative")
    func magneticVariation() throws {
        guard case .rmc(let rmc) = try decode(withChecksum("$GPRMC,225446,A,4916.45,N,12311.12,W,000.5,054.7,191194,020.3,W"))
        else { Issue.record("not an RMC"); return }
        #expect(rmc.magneticVariation == NMEADecimal("-20.3"))
    }

    @Test("GSA with 24 satellite fields keeps them all and reads the DOPs after them")
    func longGSA() throws {
        guard case .gsa(let gsa) = try decode("$GPGSA,A,3,23,13,07,25,,,,,,,,,,,,,,,,,,,,,09.2,07.2,05.7*0D")
        else { Issue.record("not a GSA"); return }
        #expect(Array(gsa.satellites) == [23, 13, 7, 25])
        #expect(gsa.pdop == NMEADecimal("09.2") && gsa.hdop == NMEADecimal("7.2") && gsa.vdop == NMEADecimal("5.7"))
        #expect(gsa.systemID == nil)
        #expect(gsa.fixType == 3)
    }

    @Test("GSA with an NMEA 4.10 system id")
    func gsaSystemID() throws {
        guard case .gsa(let gsa) = try decode("$GNGSA,A,3,82,66,81,,,,,,,,,,1.05,0.64,0.83,2*0C")
        else { Issue.record("not a GSA"); return }
        #expect(Array(gsa.satellites) == [82, 66, 81])
        #expect(gsa.systemID == 2)
        #expect(gsa.vdop == NMEADecimal("0.83"))
        #expect(gsa.talker == .multiGNSS)
    }

    @Test("GSA with a decimal where the system id goes (SiRF BeiDou receivers): no system id, the DOPs kept")
    func gsaDecimalAfterDOPs() throws {
        guard case .gsa(let gsa) = try decode("$BDGSA,A,3,02,03,04,,,,,,,,,,2.1,1.1,1.8,1.2*2D")
        else { Issue.record("not a GSA"); return }
        #expect(Array(gsa.satellites) == [2, 3, 4])
        #expect(gsa.systemID == nil)
        #expect(gsa.pdop == NMEADecimal("2.1") && gsa.hdop == NMEADecimal("1.1") && gsa.vdop == NMEADecimal("1.8"))
    }

    @Test("GSV with an NMEA 4.11 signal id")
    func gsvSignalID() throws {
        guard case .gsv(let gsv) = try decode("$GPGSV,3,3,12,26,04,276,,27,15,218,31,29,24,004,13,30,00,159,,1*69")
        else { Issue.record("not a GSV"); return }
        #expect(gsv.satellites.map(\.id) == [26, 27, 29, 30])
        #expect(gsv.satellites[0].snr == nil)
        #expect(gsv.satellites[1].snr == 31 && gsv.satellites[1].elevation == 15 && gsv.satellites[1].azimuth == 218)
        #expect(gsv.signalID == 1)
        #expect(gsv.isLast)
    }

    @Test("a pre-4.10 GSV with four satellites has no signal id")
    func gsvWithoutSignalID() throws {
        guard case .gsv(let gsv) = try decode("$GPGSV,3,1,12,28,14,150,41,09,15,254,41,10,43,192,47,13,06,081,36*7A")
        else { Issue.record("not a GSV"); return }
        #expect(gsv.satellites.map(\.id) == [28, 9, 10, 13])
        #expect(gsv.satellites[3].snr == 36)
        #expect(gsv.signalID == nil)
        #expect(gsv.messageNumber == 1 && gsv.messageCount == 3 && gsv.satellitesInView == 12)
        #expect(!gsv.isLast)
    }

    @Test("a GSV with no satellites in view")
    func emptyGSV() throws {
        guard case .gsv(let gsv) = try decode("$GPGSV,1,1,00*79") else { Issue.record("not a GSV"); return }
        #expect(gsv.satellites.isEmpty && gsv.satellitesInView == 0 && gsv.signalID == nil)
    }

    @Test("VTG: the empty no-fix form, the 2.3 form, and the old form without unit letters")
    func vtg() throws {
        guard case .vtg(let empty) = try decode("$GPVTG,,T,,M,,N,,K,N*2C") else { Issue.record("not a VTG"); return }
        #expect(empty.trackTrue == nil && empty.speedKnots == nil && empty.mode == .notValid)
        guard case .vtg(let modern) = try decode("$GPVTG,,T,,M,0.020,N,0.038,K,A*2A") else { Issue.record("not a VTG"); return }
        #expect(modern.speedKnots == NMEADecimal("0.020") && modern.speedKilometresPerHour == NMEADecimal("0.038"))
        guard case .vtg(let old) = try decode(withChecksum("$GPVTG,054.7,034.4,005.5,010.2")) else {
            Issue.record("not a VTG")
            return
        }
        #expect(old.trackTrue == NMEADecimal("54.7") && old.speedKnots == NMEADecimal("5.5"))
    }

    @Test("ZDA has a four-digit year")
    func zda() throws {
        guard case .zda(let zda) = try decode("$GPZDA,081411.000,26,05,2014,,*5D") else { Issue.record("not a ZDA"); return }
        #expect(zda.date == NMEADate(year: 2014, month: 5, day: 26, hasCentury: true))
        #expect(zda.time?.second == 11)
    }

    @Test("GLL, GNS, GST, GBS, DTM, HDT")
    func others() throws {
        guard case .gll(let gll) = try decode(withChecksum("$GPGLL,4916.45,N,12311.12,W,225444,A,A")) else {
            Issue.record("not a GLL")
            return
        }
        #expect(gll.isValid == true && gll.mode == .autonomous && gll.time?.hour == 22)
        guard case .gns(let gns) = try decode("$GPGNS,112257.00,3844.24011,N,00908.43828,W,AN,03,10.5,,,,*57") else {
            Issue.record("not a GNS")
            return
        }
        #expect(gns.modeIndicators?.description == "AN" && gns.mode == .autonomous && gns.satellitesUsed == 3)
        guard case .gst(let gst) = try decode("$GNGST,181141.00,46,,,,4.7,1.9,5.3*4A") else { Issue.record("not a GST"); return }
        #expect(gst.rangeRMS == NMEADecimal("46") && gst.latitudeError == NMEADecimal("4.7") && gst.semiMajor == nil)
        guard case .gbs(let gbs) = try decode("$GNGBS,181141.00,4.7,1.9,5.3,87,,-54902.0,57.5*41") else {
            Issue.record("not a GBS")
            return
        }
        #expect(gbs.failedSatellite == 87 && gbs.bias == NMEADecimal("-54902.0"))
        guard case .dtm(let dtm) = try decode(withChecksum("$GPDTM,W84,,0.0,N,0.0,E,0.0,W84")) else {
            Issue.record("not a DTM")
            return
        }
        #expect(dtm.datum?.description == "W84" && dtm.referenceDatum?.description == "W84")
        guard case .hdt(let hdt) = try decode(withChecksum("$HEHDT,274.07,T")) else { Issue.record("not an HDT"); return }
        #expect(hdt.heading == NMEADecimal("274.07"))
        guard case .ths(let ths) = try decode(withChecksum("$GNTHS,350.74,A")) else { Issue.record("not a THS"); return }
        #expect(ths.heading == NMEADecimal("350.74") && ths.isValid == true)
        guard case .ths(let void) = try decode(withChecksum("$GNTHS,,V")) else { Issue.record("not a THS"); return }
        #expect(void.heading == nil && void.isValid == false)
    }

    @Test("TXT keeps its text")
    func txt() throws {
        guard case .txt(let id, let text) = try decode("$GNTXT,01,01,02,u-blox AG - www.u-blox.com*4E") else {
            Issue.record("not a TXT")
            return
        }
        #expect(id == 2 && text == "u-blox AG - www.u-blox.com")
    }

    @Test("Garmin PGRME and u-blox PUBX,00 and PUBX,03")
    func proprietary() throws {
        guard case .pgrme(let pgrme) = try decode("$PGRME,9.1,M,15.0,M,12.0,M*21") else { Issue.record("not PGRME"); return }
        #expect(pgrme.horizontalError == NMEADecimal("9.1") && pgrme.sphericalError == NMEADecimal("12.0"))
        let position = withChecksum(
            "$PUBX,00,081350.00,4717.113210,N,00833.915187,E,546.589,G3,2.1,2.0,0.007,77.52,0.007,,0.92,1.19,0.77,9,0,0")
        guard case .pubxPosition(let pubx) = try decode(position) else { Issue.record("not PUBX,00"); return }
        #expect(pubx.navigationStatus?.description == "G3" && pubx.satellitesUsed == 9)
        #expect(pubx.altitudeHAE == NMEADecimal("546.589") && pubx.tdop == NMEADecimal("0.77"))
        let satellites = withChecksum("$PUBX,03,2,23,-,,,45,010,29,U,171,67,44,064")
        guard case .pubxSatellites(let list) = try decode(satellites) else { Issue.record("not PUBX,03"); return }
        #expect(list.map(\.id) == [23, 29])
        #expect(list[1].status == UInt8(ascii: "U") && list[1].elevation == NMEADecimal("67"))
    }

    @Test("Ashtech PASHR,POS and PASHR,SAT; a POS without position; a POS cut short is an error")
    func ashtech() throws {
        let position = withChecksum(
            "$PASHR,POS,0,05,151449.50,3723.4705,N,12202.2618,W,00029.6,,137.2,000.3,-000.1,02.3,01.4,01.8,01.1,GG00")
        guard case .pashrPosition(let pos) = try decode(position) else { Issue.record("not PASHR,POS"); return }
        #expect(pos.positionType == 0 && pos.satellitesUsed == 5)
        #expect(pos.time == NMEATime(hour: 15, minute: 14, second: 49, nanosecond: 500_000_000))
        #expect(pos.altitudeHAE == NMEADecimal("00029.6") && pos.track == NMEADecimal("137.2"))
        #expect(pos.speedKilometresPerHour == NMEADecimal("000.3") && pos.verticalVelocity == NMEADecimal("-000.1"))
        #expect(pos.pdop == NMEADecimal("02.3") && pos.tdop == NMEADecimal("01.1"))
        guard case .pashrPosition(let empty) = try decode(withChecksum("$PASHR,POS,,02,151451.00,,,,,,,,,,,,,,GG00")) else {
            Issue.record("not PASHR,POS")
            return
        }
        #expect(empty.positionType == nil && empty.latitude == nil && empty.time != nil)
        #expect(throws: NMEADecodingError.self) { try decode(withChecksum("$PASHR,POS,0,05,151449.50")) }
        guard case .pashrSatellites(let list) = try decode(withChecksum("$PASHR,SAT,3,03,103,56,50,U,23,225,42,47,-,16")) else {
            Issue.record("not PASHR,SAT")
            return
        }
        // The third satellite is cut short after its PRN: the two whole ones are read.
        #expect(list.map(\.prn) == [3, 23] && list.map(\.used) == [true, false])
        #expect(list[0].azimuth == NMEADecimal("103") && list[0].elevation == NMEADecimal("56"))
    }

    @Test("SkyTraq PSTI,030: time, status, position, altitude, velocity, date, mode, RTK age and ratio; a void one; one cut short is an error")
    func skytraqPosition() throws {
        // SkyTraq's documented example (PX1122R), checksummed here.
        let line = withChecksum(
            "$PSTI,030,033010.000,A,2447.0895508,N,12100.5234656,E,94.615,0.00,-0.01,0.04,111219,R,0.999,3.724")
        guard case .pstiPosition(let psti) = try decode(line) else { Issue.record("not PSTI,030"); return }
        #expect(psti.time == NMEATime(hour: 3, minute: 30, second: 10) && psti.isValid == true)
        #expect(abs(psti.latitude!.degrees - (24 + 47.0895508 / 60)) < 1e-12)
        #expect(abs(psti.longitude!.degrees - (121 + 0.5234656 / 60)) < 1e-12)
        #expect(psti.altitudeMSL == NMEADecimal("94.615"))
        #expect(psti.velocityEast == NMEADecimal("0.00") && psti.velocityNorth == NMEADecimal("-0.01"))
        #expect(psti.velocityUp == NMEADecimal("0.04"))
        #expect(psti.date?.year == 19 && psti.date?.month == 12 && psti.date?.day == 11)
        #expect(psti.mode == .fixedRTK && psti.rtkAge == NMEADecimal("0.999") && psti.rtkRatio == NMEADecimal("3.724"))
        guard case .pstiPosition(let void) = try decode(withChecksum("$PSTI,030,212406.000,V,0000.0000000,N,00000.0000000,E,0.000,0.00,0.00,0.00,280316,N,0.0,0.0")) else {
            Issue.record("not PSTI,030")
            return
        }
        #expect(void.isValid == false && void.mode == .notValid && void.time != nil)
        #expect(throws: NMEADecodingError.self) { try decode(withChecksum("$PSTI,030,033010.000,A,2447.0895508,N")) }
    }

    @Test("Garmin PGRMF, Magellan PMGNST and SiRF PSRFEPE")
    func fixStatusSentences() throws {
        // Garmin's documented example fields (GPS 17 technical specification), checksummed here.
        let fixData = withChecksum("$PGRMF,290,293895,160305,093802,13,5213.1439,N,02100.6511,E,A,2,36,226,2,1")
        guard case .pgrmf(let pgrmf) = try decode(fixData) else { Issue.record("not PGRMF"); return }
        #expect(pgrmf.gpsWeek == 290 && pgrmf.gpsSeconds == 293_895 && pgrmf.leapSeconds == 13)
        #expect(pgrmf.date == NMEADate(year: 5, month: 3, day: 16, hasCentury: false))
        #expect(pgrmf.time == NMEATime(hour: 9, minute: 38, second: 2, nanosecond: 0))
        #expect(pgrmf.isAutomatic == true && pgrmf.fixType == 2)
        #expect(pgrmf.speedKilometresPerHour == NMEADecimal("36") && pgrmf.course == NMEADecimal("226"))
        #expect(pgrmf.pdop == NMEADecimal("2") && pgrmf.tdop == NMEADecimal("1"))
        guard case .pmgnst(let status) = try decode("$PMGNST,01.75,3,F,816,11.1,+00000,20*5E") else {
            Issue.record("not PMGNST")
            return
        }
        #expect(status.mode == 3 && status.hasFix == false)
        // SiRF's documented example.
        guard case .psrfepe(let epe) = try decode(withChecksum("$PSRFEPE,100542.000,A,0.7,6.82,10.69,0.0,180.0")) else {
            Issue.record("not PSRFEPE")
            return
        }
        #expect(epe.time == NMEATime(hour: 10, minute: 5, second: 42, nanosecond: 0) && epe.isValid == true)
        #expect(epe.hdop == NMEADecimal("0.7") && epe.horizontalError == NMEADecimal("6.82"))
        #expect(epe.verticalError == NMEADecimal("10.69") && epe.speedError == NMEADecimal("0.0"))
        #expect(epe.headingError == NMEADecimal("180.0"))
    }

    @Test("unknown sentences and unknown PUBX messages are returned with their fields, not errors")
    func unknown() throws {
        guard case .unknown(let address, let fields) = try decode("$PGRMM,WGS 84*06") else {
            Issue.record("not unknown")
            return
        }
        #expect(address == "PGRMM" && fields == ["WGS 84"])
        guard case .unknown(let ais, _) = try decode("!AIVDM,1,1,,A,13aEOK?P00PD2wVMdLDRhgvL289?,0*26") else {
            Issue.record("not unknown")
            return
        }
        #expect(ais == "AIVDM")
        guard case .unknown = try decode(withChecksum("$PUBX,04,073731.00,091202,113851.00,1196,15D,1930035,-2660.664,43")) else {
            Issue.record("not unknown")
            return
        }
    }

    @Test("any talker is read: BD, GQ, QZ, IN and unknown letters")
    func talkers() throws {
        for talker in ["BD", "GQ", "QZ", "GI", "IN", "ZZ"] {
            guard case .zda = try decode(withChecksum("$\(talker)ZDA,081411.000,26,05,2014,,")) else {
                Issue.record("\(talker) not read")
                continue
            }
        }
    }

    @Test("coordinates at the poles and the antimeridian are read; a minute of 60 or a degree past them is refused")
    func coordinateBounds() throws {
        for (latitude, longitude, accepted) in [
            ("9000.0000", "18000.0000", true), ("8959.9999", "17959.9999", true), ("0000.0000", "00000.0000", true),
            ("9000.0001", "17000.0000", false), ("8000.0000", "18000.0001", false), ("8960.0000", "17000.0000", false),
            ("8000.0000", "17060.0000", false), ("9100.0000", "17000.0000", false),
        ] {
            let text = withChecksum("$GPGLL,\(latitude),N,\(longitude),W,081412.000,A,A")
            if accepted {
                guard case .gll(let gll) = try decode(text) else {
                    Issue.record("\(text) not a GLL")
                    continue
                }
                #expect(gll.latitude?.degreesAndMinutes == NMEADecimal(latitude), "\(text)")
                #expect(gll.longitude?.degreesAndMinutes == NMEADecimal(longitude), "\(text)")
            } else {
                #expect(throws: NMEADecodingError.self, "\(text)") { try decode(text) }
            }
        }
    }

    @Test("a coordinate of 18 fraction digits, the most a number may have, converts without overflowing")
    func longestCoordinateFraction() throws {
        for (latitude, degrees) in [("0.000000000000000000", 0.0), ("0.500000000000000000", 0.5 / 60)] {
            let text = withChecksum("$GPGLL,\(latitude),N,00418.0000,E,081412.000,A,A")
            guard case .gll(let gll) = try decode(text) else {
                Issue.record("\(text) not a GLL")
                continue
            }
            #expect(gll.latitude?.degrees == degrees, "\(text)")
        }
    }

    @Test("no time or date: a second 60 before 23:59, a 31 February, a 29 February of a common year, a month 0 or 13")
    func impossibleTimesAndDates() throws {
        let refused: [(String, Int)] = [
            ("$GPGGA,123460.00,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,", 1),
            ("$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.5,1.0,310227,,,A", 9),
            ("$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.5,1.0,290227,,,A", 9),
            ("$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.5,1.0,310427,,,A", 9),
            ("$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.5,1.0,150027,,,A", 9),
            ("$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.5,1.0,151327,,,A", 9),
            ("$GPZDA,081412.000,30,02,2028,,", 2),
        ]
        for (body, field) in refused {
            let address = SentenceAddress(String(body.dropFirst().prefix(5)))
            #expect(throws: NMEADecodingError(address: address, field: field, problem: .outOfRange), "\(body)") {
                try decode(withChecksum(body))
            }
        }
        // A leap second, and a leap day.
        for body in [
            "$GPGGA,235960.50,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,",
            "$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,0.5,1.0,290228,,,A", "$GPZDA,081412.000,29,02,2028,,",
        ] {
            _ = try decode(withChecksum(body))
        }
    }

    @Test("malformed fields throw errors that name the sentence and the field")
    func errors() {
        let cases: [(String, NMEADecodingError)] = [
            (
                "$GPGGA,081412.000,5561.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,",
                NMEADecodingError(address: SentenceAddress("GPGGA"), field: 2, problem: .outOfRange)
            ),
            (
                "$GPGGA,081412.000,5541.1956,X,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,",
                NMEADecodingError(address: SentenceAddress("GPGGA"), field: 3, problem: .unexpectedCharacter)
            ),
            (
                "$GPRMC,251412.000,A,5541.1956,N,03737.2877,E,0.5,1.0,260514,,,A",
                NMEADecodingError(address: SentenceAddress("GPRMC"), field: 1, problem: .outOfRange)
            ),
            (
                "$GPRMC,081412.000,A,5541.1956,N,03737.2877,E,fast,1.0,260514,,,A",
                NMEADecodingError(address: SentenceAddress("GPRMC"), field: 7, problem: .notANumber)
            ),
            ("$GPRMC,081412.000,A", NMEADecodingError(address: SentenceAddress("GPRMC"), field: 2, problem: .tooFewFields(minimum: 9))),
        ]
        for (body, expected) in cases {
            #expect(throws: expected) { try decode(withChecksum(body)) }
        }
        #expect(
            NMEADecodingError(address: SentenceAddress("GPGGA"), field: 2, problem: .outOfRange).description
                == "GPGGA field 2: value out of range")
    }
}
