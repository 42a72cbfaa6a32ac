import Foundation
import GPSDProtocol
import GPSFix
import GPSFixDevices
import NMEA
import ReceiverFraming
import Testing

/// The inserted second 23:59:60, decoded from captures made for it (`fixtures/leap-second.*`,
/// their headers say how) and compared with what gpsd 3.22's `gpsdecode -j` printed for
/// them (the `.chk` beside each).
@Suite("The inserted leap second, as gpsd reports it")
struct LeapSecondReportTests {
    /// A report's JSON object.
    static func object(_ line: some StringProtocol) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// gpsd's TPVs for a capture, in order.
    static func gpsdReports(_ name: String) throws -> [[String: Any]] {
        try String(decoding: Fixtures.bytes(name + ".chk"), as: UTF8.self).split(whereSeparator: \.isNewline)
            .map(object).filter { $0["class"] as? String == "TPV" }
    }

    /// Ours for the same capture: one TPV per cycle, as `gpsfix decode` prints them.
    static func ourReports(_ name: String) throws -> [[String: Any]] {
        try updates(ofLog: Fixtures.bytes(name)).compactMap(\.fix).map {
            try object(String(decoding: GPSDReport.tpv($0, device: nil), as: UTF8.self))
        }
    }

    @Test("NMEA's 23:59:60 is reported as gpsd reports it: as 2027-01-01T00:00:00.000Z, like the second after it; every value gpsd takes from the receiver agrees")
    func nmea() throws {
        let theirs = try Self.gpsdReports("leap-second.nmea")
        let ours = try Self.ourReports("leap-second.nmea")
        // gpsdecode reports a cycle from the second on; ours from the first.
        #expect(theirs.count == 4 && ours.count == 5)
        #expect(ours.first?["time"] as? String == "2026-12-31T23:59:58.000Z")
        #expect(ours.map { $0["time"] as? String } == [
            "2026-12-31T23:59:58.000Z", "2026-12-31T23:59:59.000Z", "2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z",
            "2027-01-01T00:00:01.000Z",
        ])
        for (index, (mine, gpsd)) in zip(ours.suffix(theirs.count), theirs).enumerated() {
            for key in ["time", "mode", "lat", "lon", "altHAE", "altMSL", "track", "speed", "climb", "geoidSep"] {
                #expect("\(mine[key] ?? "none")" == "\(gpsd[key] ?? "none")", "report \(index + 2), \(key)")
            }
        }
    }

    @Test("UBX's 23:59:60 (NAV-PVT) is reported as gpsd reports it, one fix per epoch; NAV-TIMELS warns of the insertion until it is reached")
    func ubx() throws {
        let theirs = try Self.gpsdReports("leap-second.ubx").compactMap { $0["time"] as? String }
        let ours = try Self.ourReports("leap-second.ubx").compactMap { $0["time"] as? String }
        #expect(ours == [
            "2026-12-31T23:59:58.000Z", "2026-12-31T23:59:59.000Z", "2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z",
            "2027-01-01T00:00:01.000Z",
        ])
        // gpsdecode reports after several messages of an epoch: the same times, repeated.
        func runs(_ times: [String]) -> [String] { times.enumerated().filter { $0.offset == 0 || times[$0.offset - 1] != $0.element }.map(\.element) }
        #expect(runs(ours) == runs(theirs))

        let fixes = updates(ofLog: try Fixtures.bytes("leap-second.ubx")).compactMap(\.fix)
        #expect(fixes.map { $0.time?.isLeapSecond } == [false, false, true, false, false])
        // timeToLsEvent 2, 1, 0, then none scheduled: gpsd's warning is for an event ahead.
        #expect(fixes.map(\.leapSecondWarning) == [.insertion, .insertion, .none, .none, .none])
        #expect(fixes.map(\.leapSeconds) == [18, 18, 18, 19, 19])
    }

    @Test("from GPS time (NAV-TIMEGPS), the second after a day warned of an insertion is 23:59:60 until the receiver's leap seconds change; NAV-PVT's 23:59:60 is not overwritten by it")
    func fromGPSTime() throws {
        func timeLS(iTOW: UInt32, change: Int8, secondsToEvent: Int32) -> [UInt8] {
            var p = Payload(count: 24)
            p.set(0, iTOW)
            p.set(8, UInt8(2))  // from GPS
            p.set(9, Int8(18))
            p.set(11, change)
            p.set(12, secondsToEvent)
            p.set(23, UInt8(0x03))
            return UBXFrame.encode(messageClass: 0x01, id: 0x26, payload: p.bytes)
        }
        // 2026-12-31T23:59:58Z in GPS time, 18 leap seconds.
        let first = 1_798_761_598 - GPSTime.gpsEpochSince1970 + 18
        var stream: [UInt8] = []
        for index in 0..<5 {
            let gps = first + index
            let iTOW = UInt32(gps % 604_800 * 1000)
            stream += navTIMEGPS(iTOW: iTOW, week: Int16(gps / 604_800), leapSeconds: index < 3 ? 18 : 19)
            stream += timeLS(iTOW: iTOW, change: index < 3 ? 1 : 0, secondsToEvent: Int32(2 - index)) + navEOE(iTOW: iTOW)
        }
        let times = updates(ofLog: stream).compactMap(\.fix).compactMap(\.time)
        #expect(times.map { "\($0.day) \($0.time.hour):\($0.time.minute):\($0.time.second)" } == [
            "31 23:59:58", "31 23:59:59", "31 23:59:60", "1 0:0:0", "1 0:0:1",
        ])

        // No warning, NAV-PVT and NAV-TIMEGPS in one epoch: the receiver's own 23:59:60 stays.
        let gps = first + 2
        let iTOW = UInt32(gps % 604_800 * 1000)
        let epoch = navPVT(iTOW: iTOW, time: (2026, 12, 31, 23, 59, 60))
            + navTIMEGPS(iTOW: iTOW, week: Int16(gps / 604_800), leapSeconds: 18) + navEOE(iTOW: iTOW)
        #expect(updates(ofLog: epoch).compactMap(\.fix).first?.time?.isLeapSecond == true)
    }

    @Test("the inserted second gives the time service no sample (the system clock has no number for it); the seconds around it do, in order")
    func noSampleOfTheInsertedSecond() throws {
        var sampler = ReceiverTimeSampler()
        let midnight = WallTime(GPSTime(year: 2027, month: 1, day: 1, time: NMEATime(hour: 0, minute: 0, second: 0)))
        let clock: [(hour: UInt8, minute: UInt8, second: UInt8, day: Int)] = [
            (23, 59, 57, 31), (23, 59, 58, 31), (23, 59, 59, 31), (23, 59, 60, 31), (0, 0, 0, 1), (0, 0, 1, 1),
        ]
        var samples: [TimeSample] = []
        for (index, time) in clock.enumerated() {
            var fix = Fix()
            fix.mode = .threeDimensional
            fix.time = GPSTime(
                year: time.day == 31 ? 2026 : 2027, month: time.day == 31 ? 12 : 1, day: time.day,
                time: NMEATime(hour: time.hour, minute: time.minute, second: time.second))
            if let sample = sampler.sample(for: fix, readAt: midnight - .seconds(3 - index)) { samples.append(sample) }
        }
        #expect(samples.map(\.real.seconds) == [midnight.seconds, midnight.seconds + 1])
    }
}

@Suite("Leap seconds in a retimed replay")
struct RetimedLeapSecondTests {
    @Test("a capture's NAV-TIMELS announcement is dropped when the replay is stamped with another day: no leap second today that the capture had on its own")
    func retimedAnnouncementIsDropped() throws {
        let log = CaptureLog(try Fixtures.bytes("leap-second.ubx")).payload
        let today = GPSTime(year: 2026, month: 12, day: 31, time: NMEATime(hour: 12, minute: 0, second: 0))
        let fixes = updates(ofLog: Retimer.retime(cycle: log, to: today)).compactMap(\.fix)
        // Its announcement made one that does not know: nothing scheduled, nothing ruled out.
        #expect(!fixes.isEmpty && fixes.allSatisfy { $0.leapSecondWarning == .unknown })
        #expect(updates(ofLog: try Fixtures.bytes("leap-second.ubx")).compactMap(\.fix).contains { $0.leapSecondWarning == .insertion })
    }

    @Test("the inserted second from GPS time: named by the warned day's count before its last second, a count learned that day replacing the default, one changed in the inserted second not; nothing after other days")
    func insertedSecondFromGPSTime() {
        func at(_ month: Int, _ day: Int, _ hour: UInt8, _ minute: UInt8, _ second: UInt8, year: Int = 2026) -> GPSTime {
            GPSTime(year: year, month: month, day: day, time: NMEATime(hour: hour, minute: minute, second: second))
        }
        var inserted = InsertedSecond()
        inserted.note(at(12, 31, 1, 0, 0), warning: .insertion, leapSeconds: 18)  // by the default, not yet learned
        inserted.note(at(12, 31, 23, 0, 0), warning: .insertion, leapSeconds: 19)  // learned
        inserted.note(at(12, 31, 23, 59, 59), warning: .insertion, leapSeconds: 20)  // changed in the inserted second
        let midnight = at(1, 1, 0, 0, 0, year: 2027)
        #expect(inserted.named(midnight, leapSeconds: 19) == at(12, 31, 23, 59, 60))
        #expect(inserted.named(midnight, leapSeconds: 18) == midnight && inserted.named(midnight, leapSeconds: 20) == midnight)
        #expect(inserted.named(at(1, 1, 0, 0, 1, year: 2027), leapSeconds: 19) == at(1, 1, 0, 0, 1, year: 2027))
        var november = InsertedSecond()
        november.note(at(11, 30, 12, 0, 0), warning: .insertion, leapSeconds: 18)
        #expect(november.named(at(12, 1, 0, 0, 0), leapSeconds: 18) == at(12, 1, 0, 0, 0))
    }

}
