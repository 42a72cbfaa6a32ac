import Foundation
import GPSDProtocol
import GPSFix
import GPSFixDevices
import NMEA
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
        #expect(!fixes.isEmpty && fixes.allSatisfy { $0.leapSecondWarning == .none })
        #expect(updates(ofLog: try Fixtures.bytes("leap-second.ubx")).compactMap(\.fix).contains { $0.leapSecondWarning == .insertion })
    }
}
