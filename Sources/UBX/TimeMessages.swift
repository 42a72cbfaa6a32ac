import ReceiverFraming

/// UBX-NAV-TIMEGPS: GPS time of the epoch and the leap seconds, with their validity.
public struct NavTIMEGPS: Sendable, Hashable {
    public static let message: UInt16 = 0x0120

    public var iTOW: UInt32
    /// Nanoseconds to add to iTOW.
    public var fractionalTOW: Int
    public var week: Int
    /// GPS minus UTC, seconds.
    public var leapSeconds: Int
    /// towValid (bit 0), weekValid (bit 1), leapSValid (bit 2).
    public var validity: UInt8
    /// Seconds.
    public var timeAccuracy: Double

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 16) else { return nil }
        iTOW = p.u32(0)
        fractionalTOW = Int(p.i32(4))
        week = Int(p.i16(8))
        leapSeconds = Int(p.i8(10))
        validity = p.u8(11)
        timeAccuracy = Double(p.u32(12)) * 1e-9
    }

    public var hasValidTime: Bool { validity & 0x03 == 0x03 }
    public var hasValidLeapSeconds: Bool { validity & 0x04 != 0 }
}

/// UBX-NAV-TIMEUTC: UTC of the epoch as the receiver keeps it.
public struct NavTIMEUTC: Sendable, Hashable {
    public static let message: UInt16 = 0x0121

    public var iTOW: UInt32
    public var timeAccuracy: Double
    public var utc: UBXCalendarTime
    /// validTOW (bit 0), validWKN (bit 1), validUTC (bit 2).
    public var validity: UInt8

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 20) else { return nil }
        iTOW = p.u32(0)
        timeAccuracy = Double(p.u32(4)) * 1e-9
        utc = UBXCalendarTime(p, of: Self.message)
        validity = p.u8(19)
    }

    /// Whether the time is UTC as the receiver knows it (validUTC: the leap seconds known).
    public var hasValidUTC: Bool { validity & 0x04 != 0 }
}

/// UBX-NAV-TIMELS: the current leap seconds, and the next change the receiver knows of.
public struct NavTIMELS: Sendable, Hashable {
    public static let message: UInt16 = 0x0126

    public var iTOW: UInt32
    /// GPS minus UTC, seconds, when ``hasValidCurrent``.
    public var currentLeapSeconds: Int
    /// Where the receiver has ``currentLeapSeconds`` from (srcOfCurrLs): 0 the firmware's
    /// default, which can be outdated; 1 the difference of GPS and GLONASS time; 2 GPS;
    /// 3 SBAS; 4 BeiDou; 5 Galileo; 6 aiding; 7 configured; 255 unknown.
    public var currentSource: UInt8
    /// The scheduled change (lsChange): +1 a second inserted, -1 one deleted, 0 none
    /// scheduled (or none known).
    public var change: Int
    /// Seconds from this epoch to the change, or since the last one when none is
    /// scheduled (timeToLsEvent: negative once past), when ``hasValidTimeToEvent``.
    public var secondsToEvent: Int32
    /// validCurrLs (bit 0), validTimeToLsEvent (bit 1).
    public var validity: UInt8

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 24) else { return nil }
        iTOW = p.u32(0)
        currentSource = p.u8(8)
        currentLeapSeconds = Int(p.i8(9))
        change = Int(p.i8(11))
        secondsToEvent = p.i32(12)
        validity = p.u8(23)
    }

    /// Whether ``currentLeapSeconds`` is known: marked valid (validCurrLs) and learned,
    /// from the satellites, aiding or the user, not the firmware's default (which u-blox
    /// says can be outdated) or a source the receiver cannot name.
    public var hasValidCurrent: Bool { validity & 0x01 != 0 && currentSource != 0 && currentSource != 255 }
    /// Whether ``secondsToEvent`` (and so the change's date) is known.
    public var hasValidTimeToEvent: Bool { validity & 0x02 != 0 }
}

/// UBX-TIM-TP: the time of the next time pulse and how far the pulse will miss it.
///
/// A receiver can place its pulse only on its own clock's ticks; qErr says by how much the
/// next pulse will be early or late, so that a time service can correct the pulse it sees.
public struct TimTP: Sendable, Hashable {
    public static let message: UInt16 = 0x0D01

    /// Time of week of the next pulse, milliseconds, in the time base of ``flags``.
    public var towMilliseconds: UInt32
    /// The sub-millisecond part, in 2^-32 milliseconds.
    public var towSubMilliseconds: UInt32
    /// Quantisation error of the next pulse, picoseconds.
    public var quantisationError: Int
    public var week: Int
    /// timeBase (bit 0: 0 GNSS, 1 UTC), utc available (bit 1), raim (bits 2-3), qErrInvalid (bit 4).
    public var flags: UInt8
    /// With a GNSS time base, which system's time (bits 0-3: 0 GPS, 1 GLONASS, 2 BeiDou, 3 Galileo).
    public var referenceInfo: UInt8

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 16) else { return nil }
        towMilliseconds = p.u32(0)
        towSubMilliseconds = p.u32(4)
        quantisationError = Int(p.i32(8))
        week = Int(p.u16(12))
        flags = p.u8(14)
        referenceInfo = p.u8(15)
    }

    /// Whether the time of week is UTC's, the receiver having UTC: the pulse's second as is.
    public var isUTC: Bool { flags & 0x03 == 0x03 }
    /// Whether the time of week is GPS time (a GNSS time base on GPS), to take the leap
    /// seconds from.
    public var isGPS: Bool { flags & 0x01 == 0 && referenceInfo & 0x0F == 0 }
    /// Whether ``quantisationError`` may be used (protocol 24 on sets bit 4 when it may not).
    public var hasValidQuantisationError: Bool { flags & 0x10 == 0 }
}

/// UBX-NAV-EOE: the end of an epoch's navigation messages.
public struct NavEOE: Sendable, Hashable {
    public static let message: UInt16 = 0x0161

    public var iTOW: UInt32

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 4) else { return nil }
        iTOW = p.u32(0)
    }
}
