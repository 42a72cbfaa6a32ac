import DriverSiRF
import GPSFix
import NMEA
import Testing

/// MID 98 counts milliseconds of the minute; only the last minute of a UTC day can hold a
/// 61st second (a leap second), as u-blox's UTC reads.
@Suite("SiRF MID 98: a 61st second only at 23:59")
struct SiRFLeapSecondTests {
    /// MID 98 at `hour`:`minute` and `milliseconds` into the minute, 2026-12-31.
    static func extended(hour: UInt8, minute: UInt8, milliseconds: UInt16) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: 39)
        payload[0] = 98
        payload[25] = 0x44  // 3D, UTC valid
        payload[26...27] = [0x07, 0xEA]  // 2026
        (payload[28], payload[29], payload[30], payload[31]) = (12, 31, hour, minute)
        payload[32...33] = [UInt8(milliseconds >> 8), UInt8(milliseconds & 0xFF)]
        return sirfFrame(payload)
    }

    static func time(hour: UInt8, minute: UInt8, milliseconds: UInt16) -> GPSTime? {
        assemble([extended(hour: hour, minute: minute, milliseconds: milliseconds)]).compactMap(\.fix).first?.time
    }

    @Test("23:59:60.500 is the leap second; 12:34:60.500 is no time")
    func sixtiethSecond() {
        #expect(Self.time(hour: 23, minute: 59, milliseconds: 60_500)?.isLeapSecond == true)
        #expect(Self.time(hour: 12, minute: 34, milliseconds: 60_500) == nil)
        #expect(Self.time(hour: 12, minute: 34, milliseconds: 59_500) != nil)
    }
}
