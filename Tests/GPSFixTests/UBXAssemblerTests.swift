import GPSDProtocol
import GPSFix
import ReceiverFraming
import Testing
import UBX

/// A little-endian payload written field by field at u-blox's offsets.
struct Payload {
    var bytes: [UInt8]

    init(count: Int) { bytes = [UInt8](repeating: 0, count: count) }

    mutating func set<T: FixedWidthInteger>(_ offset: Int, _ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }

    /// UTC year, month, day, hour, minute and second at offsets 4 to 10, as NAV-PVT and
    /// HNR-PVT lay them out.
    mutating func setCalendar(_ time: (Int, Int, Int, Int, Int, Int)) {
        set(4, UInt16(time.0))
        for (offset, value) in [(6, time.1), (7, time.2), (8, time.3), (9, time.4), (10, time.5)] { set(offset, UInt8(value)) }
    }
}

/// NAV-PVT as u-blox's interface description lays it out (92 bytes, protocol 15 on).
func navPVT(
    iTOW: UInt32, fixType: UInt8 = 3, flags: UInt8 = 0x01, latitude: Double = 48.1173, longitude: Double = 11.5167,
    height: Int32 = 592_000, heightMSL: Int32 = 545_400, hAcc: UInt32 = 1_500, vAcc: UInt32 = 2_500,
    velocityDown: Int32 = -100, time: (Int, Int, Int, Int, Int, Int) = (2026, 11, 26, 12, 0, 0), valid: UInt8 = 0x07
) -> [UInt8] {
    var p = Payload(count: 92)
    p.set(0, iTOW)
    p.setCalendar(time)
    p.set(11, valid)
    p.set(12, UInt32(30))  // tAcc, ns
    p.set(20, fixType)
    p.set(21, flags)
    p.set(23, UInt8(12))
    p.set(24, Int32((longitude * 1e7).rounded()))
    p.set(28, Int32((latitude * 1e7).rounded()))
    p.set(32, height)
    p.set(36, heightMSL)
    p.set(40, hAcc)
    p.set(44, vAcc)
    p.set(48, Int32(1_000))  // velN
    p.set(56, velocityDown)
    p.set(60, Int32(1_000))  // gSpeed
    p.set(64, Int32(9_000_000))  // headMot: 90°
    p.set(68, UInt32(200))  // sAcc
    p.set(76, UInt16(130))  // pDOP
    return UBXFrame.encode(messageClass: 0x01, id: 0x07, payload: p.bytes)
}

func navEOE(iTOW: UInt32) -> [UInt8] {
    var p = Payload(count: 4)
    p.set(0, iTOW)
    return UBXFrame.encode(messageClass: 0x01, id: 0x61, payload: p.bytes)
}

func navTIMEGPS(iTOW: UInt32, week: Int16, leapSeconds: Int8, valid: UInt8 = 0x07) -> [UInt8] {
    var p = Payload(count: 16)
    p.set(0, iTOW)
    p.set(8, week)
    p.set(10, leapSeconds)
    p.set(11, valid)
    return UBXFrame.encode(messageClass: 0x01, id: 0x20, payload: p.bytes)
}

/// NAV-TIMELS with the current leap seconds marked valid, learned from `source`
/// (srcOfCurrLs: 2 GPS).
func navTIMELS(iTOW: UInt32, current: Int8, source: UInt8 = 2) -> [UInt8] {
    var p = Payload(count: 24)
    p.set(0, iTOW)
    p.set(8, source)
    p.set(9, current)
    p.set(23, UInt8(0x01))  // validCurrLs
    return UBXFrame.encode(messageClass: 0x01, id: 0x26, payload: p.bytes)
}

/// Decodes `stream` through the whole stream decoder, as the daemon does.
func decodedUpdates(_ stream: [UInt8], chunkSize: Int = 4096) -> [LocationUpdate] {
    updates(ofLog: stream, chunkSize: chunkSize)
}

@Suite("UBX epochs into fixes and sky views")
struct UBXAssemblerTests {
    @Test("NAV-PVT gives the receiver's own position, time, status and error estimates")
    func navPVTFix() throws {
        let stream = navTIMEGPS(iTOW: 1000, week: 2412, leapSeconds: 18) + navPVT(iTOW: 1000, flags: 0x01 | 0x02 | 0x80)
            + navEOE(iTOW: 1000)
        let fix = try #require(decodedUpdates(stream).compactMap(\.fix).first)
        #expect(fix.mode == .threeDimensional)
        #expect(fix.status == .rtkFixed)
        #expect(fix.time == GPSTime(millisecondsSince1970: 1_795_694_400_000))
        #expect(fix.leapSeconds == 18)
        #expect(abs(try #require(fix.latitude) - 48.1173) < 1e-9)
        #expect(fix.altitudeHAE == 592 && fix.altitudeMSL == 545.4)
        #expect(fix.horizontalError == 1.5 && fix.verticalError == 2.5 && fix.speedError == 0.2)
        #expect(abs(try #require(fix.timeError) - 30e-9) < 1e-15)
        #expect(fix.speed == 1)
        #expect(abs(try #require(fix.track) - 90) < 1e-9)
        #expect(fix.velocity == NEDVelocity(north: 1, east: 0, down: -0.1))
        let report = String(decoding: GPSDReport.tpv(fix, device: nil), as: UTF8.self)
        #expect(report.contains("\"eph\":1.500") && report.contains("\"epv\":2.500") && report.contains("\"leapseconds\":18"))
    }

    @Test("leap seconds no GPS - UTC offset can be (127, -128 in NAV-TIMEGPS or NAV-TIMELS) are not taken: the time stays the one by the last plausible offset, or unconfirmed")
    func absurdLeapSeconds() throws {
        func fixes(_ offsets: [Int8], timeLS useTimeLS: Bool = false) -> [Fix] {
            var stream: [UInt8] = []
            for (index, offset) in offsets.enumerated() {
                let iTOW = UInt32(1000 * (index + 1))
                stream += useTimeLS
                    ? navTIMELS(iTOW: iTOW, current: offset) + navTIMEGPS(iTOW: iTOW, week: 2412, leapSeconds: 18, valid: 0x03)
                    : navTIMEGPS(iTOW: iTOW, week: 2412, leapSeconds: offset)
                stream += navEOE(iTOW: iTOW)
            }
            return decodedUpdates(stream).compactMap(\.fix)
        }
        let plausible = fixes([18, 18])
        for absurd: Int8 in [127, -128, 0] {
            let alone = fixes([absurd])
            #expect(alone.count == 1 && alone.allSatisfy { $0.leapSeconds == nil && $0.timeIsUnconfirmed }, "\(absurd)")
            #expect(alone.first?.time == plausible.first?.time, "\(absurd): timed by the default 18 s")
            let after = fixes([18, absurd])
            #expect(after.map(\.leapSeconds) == [18, 18] && after.map(\.time) == plausible.map(\.time), "\(absurd)")
            #expect(after.allSatisfy { !$0.timeIsUnconfirmed }, "\(absurd)")
            #expect(fixes([18, absurd], timeLS: true).map(\.leapSeconds) == [18, 18], "NAV-TIMELS \(absurd)")
        }
    }

    @Test("leap seconds the receiver has not learned confirm no time: NAV-TIMELS's from the firmware's default (source 0) or a source it cannot name (255), NAV-TIMEGPS's without leapSValid, which replaces NAV-PVT's time")
    func unlearnedLeapSeconds() throws {
        func fixes(source: UInt8, timeGPSValidity: UInt8) -> [Fix] {
            let epoch = navTIMELS(iTOW: 1000, current: 18, source: source) + navPVT(iTOW: 1000, valid: 0x03)
                + navTIMEGPS(iTOW: 1000, week: 2412, leapSeconds: 18, valid: timeGPSValidity) + navEOE(iTOW: 1000)
            return decodedUpdates(epoch).compactMap(\.fix)
        }
        for source: UInt8 in [0, 255] {
            let unlearned = fixes(source: source, timeGPSValidity: 0x03)
            #expect(unlearned.count == 1 && unlearned.allSatisfy { $0.timeIsUnconfirmed && $0.leapSeconds == nil }, "source \(source)")
        }
        let gpsTimeUnsure = fixes(source: 2, timeGPSValidity: 0x03)
        #expect(gpsTimeUnsure.count == 1 && gpsTimeUnsure.allSatisfy { $0.timeIsUnconfirmed && $0.leapSeconds == 18 })
        let learned = fixes(source: 2, timeGPSValidity: 0x07)
        #expect(learned.count == 1 && learned.allSatisfy { !$0.timeIsUnconfirmed && $0.leapSeconds == 18 })
    }

    @Test("a NAV-PVT or NAV-SOL solution without gnssFixOK (outside the receiver's DOP and accuracy masks) is no fix, as NAV-STATUS says it")
    func solutionOutsideMasks() throws {
        let masked = decodedUpdates(navPVT(iTOW: 1000, flags: 0x00) + navEOE(iTOW: 1000)).compactMap(\.fix)
        #expect(masked.count == 1 && masked.allSatisfy { $0.mode == .noFix && $0.latitude == nil }, "\(masked)")
        let kept = decodedUpdates(navPVT(iTOW: 1000) + navEOE(iTOW: 1000)).compactMap(\.fix)
        #expect(kept.first?.mode == .threeDimensional && kept.first?.latitude != nil)
        var payload = Array(GPSFixTests.navSOL(iTOW: 1000).dropFirst(6).dropLast(2))
        payload[11] = 0x0C  // weekSet and towSet, without gnssFixOK
        let sol = UBXFrame.encode(messageClass: 0x01, id: 0x06, payload: payload)
        let solutions = decodedUpdates(sol + navEOE(iTOW: 1000)).compactMap(\.fix)
        // Two reports: NAV-SOL's of the epoch so far (as gpsd reports those receivers), NAV-EOE's of the whole.
        #expect(solutions.count == 2 && solutions.allSatisfy { $0.mode == .noFix && $0.latitude == nil }, "\(solutions.count): \(solutions)")
    }

    @Test("a time the receiver has not resolved, or computed before the leap seconds are known, is reported but gives the time service no sample")
    func unconfirmedTime() throws {
        var sampler = ReceiverTimeSampler()
        func samples(_ stream: [UInt8]) -> Int {
            decodedUpdates(stream).compactMap(\.fix).reduce(0) { count, fix in
                count + (sampler.sample(for: fix, readAt: WallTime(seconds: 1)) == nil ? 0 : 1)
            }
        }
        // validDate and validTime, not fullyResolved: five epochs, no sample.
        let unresolved = (1...5).flatMap { navPVT(iTOW: UInt32($0) * 1000, time: (2026, 11, 26, 12, 0, $0), valid: 0x03) + navEOE(iTOW: UInt32($0) * 1000) }
        let reported = decodedUpdates(unresolved).compactMap(\.fix)
        #expect(reported.count == 5 && reported.allSatisfy { $0.time != nil && $0.timeIsUnconfirmed }, "\(reported.count) fixes")
        #expect(samples(unresolved) == 0)
        // Resolved: a sample for each fix after the first few of the run.
        let resolved = (1...5).flatMap { navPVT(iTOW: UInt32($0) * 1000, time: (2026, 11, 26, 12, 0, $0)) + navEOE(iTOW: UInt32($0) * 1000) }
        #expect(samples(resolved) == 5 - ReceiverTimeSampler.minimumFixes)
    }

    @Test("NAV-PVT's calendar fields each in range but no time as a whole (a 31 February, a second 60 before 23:59) give the fix no time; a leap day does")
    func impossibleCalendarTimes() throws {
        func time(_ calendar: (Int, Int, Int, Int, Int, Int)) -> GPSTime? {
            decodedUpdates(navPVT(iTOW: 1000, time: calendar) + navEOE(iTOW: 1000)).compactMap(\.fix).first?.time
        }
        #expect(time((2027, 2, 31, 12, 0, 0)) == nil)
        #expect(time((2027, 0, 1, 12, 0, 0)) == nil && time((2027, 13, 1, 12, 0, 0)) == nil)
        #expect(time((2027, 6, 30, 12, 34, 60)) == nil)
        #expect(time((2028, 2, 29, 12, 0, 0))?.day == 29)
        #expect(time((2027, 6, 30, 23, 59, 60))?.isLeapSecond == true)
    }

    @Test("carrier-phase solutions are RTK float and fixed, only with a differential solution")
    func rtkStatus() throws {
        func status(_ flags: UInt8) throws -> FixStatus {
            try #require(decodedUpdates(navPVT(iTOW: 1000, flags: flags) + navEOE(iTOW: 1000)).compactMap(\.fix).first).status
        }
        #expect(try status(0x01) == .gps)
        #expect(try status(0x03) == .differential)
        #expect(try status(0x43) == .rtkFloat)
        #expect(try status(0x83) == .rtkFixed)
    }

    @Test("NAV-EOE ends the epoch at once; without it, the learned last message does")
    func epochEnds() {
        // With EOE, the fix comes out with the EOE, before anything of the next epoch.
        var emitted: [Int] = []
        let decoder = ReceiverStreamDecoder()
        var count = 0
        for frame in [navPVT(iTOW: 1000), navEOE(iTOW: 1000), navPVT(iTOW: 2000), navEOE(iTOW: 2000)] {
            frame.withUnsafeBytes { decoder.feed($0) { if case .fix = $0 { count += 1 } } }
            emitted.append(count)
        }
        #expect(emitted == [0, 1, 1, 2])
        // Without EOE: the first epoch ends when the second begins; from then on the
        // epoch's last message (learned: NAV-TIMEGPS) ends it.
        emitted = []
        count = 0
        let learning = ReceiverStreamDecoder()
        for iTOW in [UInt32(1000), 2000, 3000] {
            for frame in [navPVT(iTOW: iTOW), navTIMEGPS(iTOW: iTOW, week: 2412, leapSeconds: 18)] {
                frame.withUnsafeBytes { learning.feed($0) { if case .fix = $0 { count += 1 } } }
                emitted.append(count)
            }
        }
        #expect(emitted == [0, 0, 1, 2, 2, 3])
    }

    @Test("the receiver is read in NMEA (gpsd's native 0) until its first UBX frame, in its binary protocol (native 1) after it")
    func binaryModeFromTheFirstFrame() {
        let decoder = ReceiverStreamDecoder()
        Array("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n".utf8).withUnsafeBytes { decoder.feed($0) { _ in } }
        #expect(decoder.receiver.driver == "NMEA0183" && !decoder.receiver.readsBinary)
        navPVT(iTOW: 1000).withUnsafeBytes { decoder.feed($0) { _ in } }
        #expect(decoder.receiver.driver == "u-blox" && decoder.receiver.readsBinary)
    }

    @Test("a position outside the Earth is left out and counted, not reported")
    func outOfRange() throws {
        let decoder = ReceiverStreamDecoder()
        var fixes: [Fix] = []
        (navPVT(iTOW: 1000, latitude: 95) + navEOE(iTOW: 1000)).withUnsafeBytes {
            decoder.feed($0) { if let fix = $0.fix { fixes.append(fix) } }
        }
        let fix = try #require(fixes.first)
        #expect(fix.latitude == nil && fix.longitude == nil)
        #expect(decoder.ubx.statistics.valuesOutOfRange >= 1)
    }

    @Test("a frame its message cannot be is refused by the framer or counted as undecodable, and ends nothing")
    func malformedFrames() {
        let decoder = ReceiverStreamDecoder()
        // NAV-PVT in 40 bytes: no NAV-PVT is that short, so the framer refuses its header.
        let short = UBXFrame.encode(messageClass: 0x01, id: 0x07, payload: [UInt8](repeating: 0, count: 40))
        // NAV-SAT of a version whose layout u-blox has not described: framed, not decoded.
        var unknownVersion = [UInt8](repeating: 0, count: 8 + 12)
        unknownVersion[4] = 2
        unknownVersion[5] = 1
        let sat = UBXFrame.encode(messageClass: 0x01, id: 0x35, payload: unknownVersion)
        var updates: [LocationUpdate] = []
        (short + sat).withUnsafeBytes { decoder.feed($0) { updates.append($0) } }
        decoder.finish { updates.append($0) }
        #expect(decoder.framer.binaryStatistics[UBXFrameRule.self].impossibleHeaders >= 1)
        #expect(decoder.ubx.statistics.decodingErrors == 1)
        #expect(updates.compactMap(\.sky).isEmpty)
    }

    @Test("MON-VER gives gpsd's DEVICE subtype and subtype1")
    func monVER() throws {
        func field(_ text: String, _ width: Int) -> [UInt8] { Array(text.utf8) + [UInt8](repeating: 0, count: width - text.utf8.count) }
        let payload = field("ROM CORE 3.01 (107888)", 30) + field("00080000", 10) + field("FWVER=SPG 3.01", 30)
            + field("PROTVER=18.00", 30) + field("MOD=NEO-M8N-0", 30)
        let frame = UBXFrame.encode(messageClass: 0x0A, id: 0x04, payload: payload)
        let version = try #require(frame.withUnsafeBytes { UBXFrame(validating: $0).flatMap(MonVER.init) })
        #expect(version.subtype == "SW ROM CORE 3.01 (107888),HW 00080000")
        #expect(version.subtype1 == "FWVER=SPG 3.01,PROTVER=18.00,MOD=NEO-M8N-0")
        #expect(version.protocolVersion == 18)
    }

    @Test("MON-VER's texts keep no line break or terminal escape: the subtype is logged and shown")
    func monVERControlCharacters() throws {
        func field(_ text: String, _ width: Int) -> [UInt8] { Array(text.utf8) + [UInt8](repeating: 0, count: width - text.utf8.count) }
        let payload = field("1.0\n2026 critical: forged\u{1B}[2J", 30) + field("0008\r", 10) + field("MOD=\u{7F}\u{9B}", 30)
        let frame = UBXFrame.encode(messageClass: 0x0A, id: 0x04, payload: payload)
        let version = try #require(frame.withUnsafeBytes { UBXFrame(validating: $0).flatMap(MonVER.init) })
        #expect(version.subtype == "SW 1.0?2026 critical: forged?[2J,HW 0008?")
        #expect(version.subtype1 == "MOD=???")
    }

    @Test("a receiver sending NMEA and UBX gives one fix per epoch, UBX's")
    func oneFixPerEpoch() throws {
        let log = try Fixtures.bytes("gpsd-ubx/ublox-zed-f9t-ubx_nmea_l5.log")
        let fixes = updates(ofLog: log).compactMap(\.fix)
        let times = fixes.compactMap(\.time)
        #expect(times.count >= 8)
        #expect(Set(times).count == times.count, "two fixes for one epoch")
    }

    @Test("NAV-SOL's ECEF solution of an older receiver becomes latitude, longitude and heights")
    func navSOL() throws {
        let log = try Fixtures.bytes("gpsd-ubx/ublox-lea-4t.log")
        let updates = updates(ofLog: log)
        let fix = try #require(updates.compactMap(\.fix).last { $0.latitude != nil })
        // gpsd's report for this epoch: 53.563254092, -113.439545157, 635.4758 m above the ellipsoid.
        #expect(abs(try #require(fix.latitude) - 53.563254092) < 1e-8)
        #expect(abs(try #require(fix.longitude) + 113.439545157) < 1e-8)
        #expect(abs(try #require(fix.altitudeHAE) - 635.4758) < 1e-3)
        #expect(fix.leapSeconds == 15)
        let sky = try #require(updates.compactMap(\.sky).last { !$0.satellites.isEmpty })
        #expect(sky.satellites.allSatisfy { $0.health != nil && $0.quality != nil })
    }

    @Test("TIM-TP announces the next pulse's UTC second and its quantisation error, once the leap seconds are known, and not with an error of a microsecond or more")
    func timTP() throws {
        func frame(towMilliseconds: UInt32, quantisationError: Int32, flags: UInt8) -> [UInt8] {
            var p = Payload(count: 16)
            p.set(0, towMilliseconds)
            p.set(8, quantisationError)
            p.set(12, UInt16(2412))
            p.set(14, flags)
            return UBXFrame.encode(messageClass: 0x0D, id: 0x01, payload: p.bytes)
        }
        // GPS time base: nothing until the leap seconds are known, then UTC = GPS - 18 s.
        let stream = frame(towMilliseconds: 100_000, quantisationError: -12_345, flags: 0)
            + navTIMEGPS(iTOW: 99_000, week: 2412, leapSeconds: 18)
            + frame(towMilliseconds: 100_000, quantisationError: -12_345, flags: 0)
            + frame(towMilliseconds: 100_500, quantisationError: 0, flags: 0x03)  // not on a whole second
            // 2 µs: no tick of any receiver's oscillator (a u-blox 8's are about 20 ns).
            + frame(towMilliseconds: 101_000, quantisationError: 2_000_000, flags: 0x03)
        let announcements = decodedUpdates(stream).compactMap { update -> PulseAnnouncement? in
            if case .nextPulse(let announcement) = update { announcement } else { nil }
        }
        let second = 315_964_800 + 2412 * 604_800 + 100 - 18
        #expect(announcements == [PulseAnnouncement(second: second, quantisationError: Duration(secondsComponent: 0, attosecondsComponent: -12_345_000_000))])
    }

    @Test("a capture decodes the same whatever the reads", arguments: [1, 7, 100])
    func chunking(size: Int) throws {
        let log = try Fixtures.bytes("gpsd-ubx/ublox-neo-m8n.log")
        #expect(updates(ofLog: log, chunkSize: size) == updates(ofLog: log))
    }
}
