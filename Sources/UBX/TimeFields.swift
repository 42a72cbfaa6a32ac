import ReceiverFraming

/// Where u-blox's messages keep their times, for reading an epoch's time of week from any
/// NAV message and for rewriting a capture's times (a replay stamped with today's time).
public enum UBXTimeFields {
    /// The offset of the GPS time of week (iTOW, milliseconds) in the payload of NAV
    /// message `message` (class in the high byte): most begin with it, a few put a
    /// version and reserved bytes first. `nil` for a message without one.
    public static func timeOfWeekOffset(of message: UInt16) -> Int? {
        guard message >> 8 == 0x01 else { return nil }
        switch message & 0xFF {
        case 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x11, 0x12, 0x17, 0x20, 0x21, 0x22, 0x26, 0x30, 0x31, 0x32, 0x35,
            0x36, 0x3D, 0x43, 0x60, 0x61:
            return 0
        case 0x09, 0x13, 0x14, 0x3B, 0x3C:
            return 4
        default:
            return nil
        }
    }

    /// The time of week the NAV frame `frame` carries, if it carries one.
    public static func timeOfWeek(of frame: UBXFrame) -> UInt32? {
        guard let offset = timeOfWeekOffset(of: frame.message), frame.payload.count >= offset + 4 else { return nil }
        return frame.payload.u32(offset)
    }

    /// The offset of the UTC calendar fields (year as two bytes, then month, day, hour,
    /// minute, second) and of the signed nanoseconds that go with them, in the payload of
    /// NAV-PVT, NAV-TIMEUTC and HNR-PVT.
    public static func calendarOffsets(of message: UInt16) -> (calendar: Int, nanosecond: Int)? {
        switch message {
        case NavPVT.message: (4, 16)
        case NavTIMEUTC.message: (12, 8)
        case HNRPVT.message: (4, 12)
        default: nil
        }
    }

    /// The offset of the GPS week number (two bytes) in NAV-SOL, NAV-TIMEGPS and TIM-TP.
    public static func weekOffset(of message: UInt16) -> Int? {
        switch message {
        case NavSOL.message, NavTIMEGPS.message: 8
        case TimTP.message: 12
        default: nil
        }
    }
}
