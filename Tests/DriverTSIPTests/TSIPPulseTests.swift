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
