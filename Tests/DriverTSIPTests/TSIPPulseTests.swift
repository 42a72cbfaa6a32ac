import GPSFix
import Testing

/// A Trimble timing receiver's word on its pulses: 0x8F-AB names the second of the pulse
/// just past, the 0x8F-AC after it that pulse's quantisation error.
@Suite("TSIP, pulse announcements")
struct TSIPPulseTests {
    @Test("SMT 360: each 0x8F-AB/0x8F-AC pair announces the pulse just past, its UTC second and the capture's quantisation error")
    func smt360() throws {
        let announcements = try TSIPCaptureTests.decode("trimble-smt-360.log").updates.compactMap {
            update -> PulseAnnouncement? in
            if case .nextPulse(let announcement) = update { announcement } else { nil }
        }
        // 59 pairs, GPS week 2076 seconds 239909 to 239967, 18 leap seconds: from
        // 2019-10-22 18:38:11 UTC, one a second.
        #expect(announcements.count == 59)
        #expect(announcements.map(\.second) == Array(1_571_769_491..<(1_571_769_491 + 59)))
        #expect(announcements.allSatisfy { $0.pulse == .past })
        // 0x8F-AC bytes 60-63, nanoseconds, to the picosecond: 1.5957497, 1.7000433,
        // 9.418816, 3.0411186 ... 7.973.
        func picoseconds(_ value: Int64) -> Duration { Duration(secondsComponent: 0, attosecondsComponent: value * 1_000_000) }
        #expect(announcements.prefix(4).map(\.quantisationError) == [1596, 1700, 9419, 3041].map(picoseconds))
        #expect(announcements.last?.quantisationError == picoseconds(7973))
        #expect(announcements.allSatisfy { $0.quantisationError > .zero && $0.quantisationError < .nanoseconds(16) })
    }
}

/// TSIPv1 (RES 720): each A1-00 names the second of the pulse just past and gives its
/// quantisation error in bytes 18–21.
@Suite("TSIPv1, pulse announcements")
struct TSIPVersion1PulseTests {
    @Test("RES 720: each A1-00 announces the pulse just past, its UTC second and the quantisation error in nanoseconds")
    func res720() throws {
        let announcements = try TSIPCaptureTests.decode("trimble-res720.log").updates.compactMap {
            update -> PulseAnnouncement? in
            if case .nextPulse(let announcement) = update { announcement } else { nil }
        }
        // 17 A1-00, GPS week 2198 seconds 161505 to 161521, 18 leap seconds, time and
        // UTC valid (flags 3): from 2022-02-21 20:51:27 UTC, one a second.
        #expect(announcements.count == 17)
        #expect(announcements.map(\.second) == Array(1_645_476_687..<(1_645_476_687 + 17)))
        #expect(announcements.allSatisfy { $0.pulse == .past })
        // Bytes 18-21 (R4): 0.751993, 0.0367345, 0.394361, 0.871196 ... 0.513545: a
        // sawtooth of eight steps of 0.1192 below one, a nanosecond's tick (in seconds, as
        // the manual names the unit, they would be three quarters of a second).
        func picoseconds(_ value: Int64) -> Duration { Duration(secondsComponent: 0, attosecondsComponent: value * 1_000_000) }
        #expect(announcements.prefix(4).map(\.quantisationError) == [752, 37, 394, 871].map(picoseconds))
        #expect(announcements.last?.quantisationError == picoseconds(514))
    }
}
