import ReceiverFraming

/// UTC as NAV-PVT, HNR-PVT and NAV-TIMEUTC carry it: calendar fields and the signed
/// nanoseconds to add (u-blox rounds the second, so they may be negative).
public struct UBXCalendarTime: Sendable, Hashable {
    public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    public var nanosecond: Int

    /// Reads the fields of message `message` where ``UBXTimeFields/calendarOffsets(of:)`` says.
    init(_ p: UnsafeRawBufferPointer, of message: UInt16) {
        let (calendar, nanosecond) = UBXTimeFields.calendarOffsets(of: message) ?? (0, 0)
        year = Int(p.u16(calendar))
        month = Int(p.u8(calendar + 2))
        day = Int(p.u8(calendar + 3))
        hour = Int(p.u8(calendar + 4))
        minute = Int(p.u8(calendar + 5))
        second = Int(p.u8(calendar + 6))
        self.nanosecond = Int(p.i32(nanosecond))
    }
}

/// A position as u-blox's LLH messages give it, with its accuracy estimates.
public protocol UBXGeodeticPosition {
    /// Degrees.
    var latitude: Double { get }
    var longitude: Double { get }
    /// Metres above the ellipsoid and above mean sea level.
    var height: Double { get }
    var heightMSL: Double { get }
    /// Metres.
    var horizontalAccuracy: Double { get }
    var verticalAccuracy: Double { get }
}

/// UBX-NAV-PVT: the whole navigation solution of an epoch, in one message (u-blox 7 on).
public struct NavPVT: UBXGeodeticPosition, Sendable, Hashable {
    public static let message: UInt16 = 0x0107

    /// GPS time of week of the epoch, milliseconds: what ties an epoch's messages together.
    public var iTOW: UInt32
    public var utc: UBXCalendarTime
    /// validDate, validTime, fullyResolved (bits 0-2).
    public var validity: UInt8
    /// Time accuracy estimate, seconds.
    public var timeAccuracy: Double
    /// 0 no fix, 1 dead reckoning only, 2 2D, 3 3D, 4 GNSS and dead reckoning, 5 time only.
    public var fixType: UInt8
    /// gnssFixOK (bit 0), diffSoln (bit 1), headVehValid (bit 5), carrSoln (bits 6-7).
    public var flags: UInt8
    public var satellitesUsed: Int
    /// Degrees.
    public var longitude: Double, latitude: Double
    /// Metres above the ellipsoid and above mean sea level.
    public var height: Double, heightMSL: Double
    /// Horizontal and vertical accuracy estimates, metres.
    public var horizontalAccuracy: Double, verticalAccuracy: Double
    /// Metres per second, north, east, down.
    public var velocityNorth: Double, velocityEast: Double, velocityDown: Double
    /// Ground speed, metres per second.
    public var groundSpeed: Double
    /// Heading of motion, degrees.
    public var headingOfMotion: Double
    /// Speed accuracy estimate, metres per second; heading accuracy estimate, degrees.
    public var speedAccuracy: Double, headingAccuracy: Double
    /// Position DOP.
    public var pdop: Double

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 84) else { return nil }
        iTOW = p.u32(0)
        utc = UBXCalendarTime(p, of: Self.message)
        validity = p.u8(11)
        timeAccuracy = Double(p.u32(12)) * 1e-9
        fixType = p.u8(20)
        flags = p.u8(21)
        satellitesUsed = Int(p.u8(23))
        longitude = Double(p.i32(24)) * 1e-7
        latitude = Double(p.i32(28)) * 1e-7
        height = Double(p.i32(32)) * 1e-3
        heightMSL = Double(p.i32(36)) * 1e-3
        horizontalAccuracy = Double(p.u32(40)) * 1e-3
        verticalAccuracy = Double(p.u32(44)) * 1e-3
        velocityNorth = Double(p.i32(48)) * 1e-3
        velocityEast = Double(p.i32(52)) * 1e-3
        velocityDown = Double(p.i32(56)) * 1e-3
        groundSpeed = Double(p.i32(60)) * 1e-3
        headingOfMotion = Double(p.i32(64)) * 1e-5
        speedAccuracy = Double(p.u32(68)) * 1e-3
        headingAccuracy = Double(p.u32(72)) * 1e-5
        pdop = Double(p.u16(76)) * 0.01
    }

    /// Whether the date and the time of day are valid and fully resolved.
    public var hasValidTime: Bool { validity & 0x07 == 0x07 }
    public var gnssFixOK: Bool { flags & 0x01 != 0 }
    public var differentialSolution: Bool { flags & 0x02 != 0 }
    /// 0 none, 1 float, 2 fixed carrier-phase solution (RTK).
    public var carrierSolution: Int { Int(flags >> 6) }
}

/// UBX-NAV-SOL: the ECEF solution of receivers before NAV-PVT (u-blox 5 and 6, and
/// timing parts that still send it).
public struct NavSOL: Sendable, Hashable {
    public static let message: UInt16 = 0x0106

    public var iTOW: UInt32
    /// Nanoseconds to add to iTOW for the epoch's exact time.
    public var fractionalTOW: Int
    public var week: Int
    /// 0 no fix, 1 dead reckoning only, 2 2D, 3 3D, 4 GNSS and dead reckoning, 5 time only.
    public var fixType: UInt8
    /// gpsFixOK (bit 0), diffSoln (bit 1), weekSet (bit 2), towSet (bit 3).
    public var flags: UInt8
    /// Position, metres, and velocity, metres per second, in ECEF.
    public var position: ECEF, velocity: ECEF
    /// 3D position and speed accuracy estimates, metres and metres per second.
    public var positionAccuracy: Double, speedAccuracy: Double
    public var pdop: Double
    public var satellitesUsed: Int

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 52) else { return nil }
        iTOW = p.u32(0)
        fractionalTOW = Int(p.i32(4))
        week = Int(p.i16(8))
        fixType = p.u8(10)
        flags = p.u8(11)
        position = ECEF(x: Double(p.i32(12)) * 0.01, y: Double(p.i32(16)) * 0.01, z: Double(p.i32(20)) * 0.01)
        positionAccuracy = Double(p.u32(24)) * 0.01
        velocity = ECEF(x: Double(p.i32(28)) * 0.01, y: Double(p.i32(32)) * 0.01, z: Double(p.i32(36)) * 0.01)
        speedAccuracy = Double(p.u32(40)) * 0.01
        pdop = Double(p.u16(44)) * 0.01
        satellitesUsed = Int(p.u8(47))
    }

    public var gnssFixOK: Bool { flags & 0x01 != 0 }
    public var differentialSolution: Bool { flags & 0x02 != 0 }
    /// Whether the week number and the time of week are valid.
    public var hasValidTime: Bool { flags & 0x0C == 0x0C }
}

/// A point or a velocity in the Earth-centred, Earth-fixed frame, metres or metres per second.
public struct ECEF: Sendable, Hashable {
    public var x: Double, y: Double, z: Double

    public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// UBX-NAV-POSLLH: position in degrees and metres (u-blox 5 on).
public struct NavPOSLLH: UBXGeodeticPosition, Sendable, Hashable {
    public static let message: UInt16 = 0x0102

    public var iTOW: UInt32
    public var longitude: Double, latitude: Double
    public var height: Double, heightMSL: Double
    public var horizontalAccuracy: Double, verticalAccuracy: Double

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 28) else { return nil }
        iTOW = p.u32(0)
        longitude = Double(p.i32(4)) * 1e-7
        latitude = Double(p.i32(8)) * 1e-7
        height = Double(p.i32(12)) * 1e-3
        heightMSL = Double(p.i32(16)) * 1e-3
        horizontalAccuracy = Double(p.u32(20)) * 1e-3
        verticalAccuracy = Double(p.u32(24)) * 1e-3
    }
}

/// UBX-NAV-HPPOSLLH: NAV-POSLLH to a tenth of a millimetre (high-precision receivers).
public struct NavHPPOSLLH: UBXGeodeticPosition, Sendable, Hashable {
    public static let message: UInt16 = 0x0114

    public var iTOW: UInt32
    /// Set when the receiver marks the position invalid (bit 0 of flags, protocol 27 on).
    public var isInvalid: Bool
    public var longitude: Double, latitude: Double
    public var height: Double, heightMSL: Double
    public var horizontalAccuracy: Double, verticalAccuracy: Double

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 36) else { return nil }
        isInvalid = p.u8(3) & 0x01 != 0
        iTOW = p.u32(4)
        longitude = Double(p.i32(8)) * 1e-7 + Double(p.i8(24)) * 1e-9
        latitude = Double(p.i32(12)) * 1e-7 + Double(p.i8(25)) * 1e-9
        height = Double(p.i32(16)) * 1e-3 + Double(p.i8(26)) * 1e-4
        heightMSL = Double(p.i32(20)) * 1e-3 + Double(p.i8(27)) * 1e-4
        horizontalAccuracy = Double(p.u32(28)) * 1e-4
        verticalAccuracy = Double(p.u32(32)) * 1e-4
    }
}

/// UBX-NAV-VELNED: velocity in the local frame (u-blox 5 on).
public struct NavVELNED: Sendable, Hashable {
    public static let message: UInt16 = 0x0112

    public var iTOW: UInt32
    /// Metres per second.
    public var velocityNorth: Double, velocityEast: Double, velocityDown: Double
    public var groundSpeed: Double
    /// Heading of motion, degrees.
    public var heading: Double
    public var speedAccuracy: Double, headingAccuracy: Double

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 36) else { return nil }
        iTOW = p.u32(0)
        velocityNorth = Double(p.i32(4)) * 0.01
        velocityEast = Double(p.i32(8)) * 0.01
        velocityDown = Double(p.i32(12)) * 0.01
        groundSpeed = Double(p.u32(20)) * 0.01
        heading = Double(p.i32(24)) * 1e-5
        speedAccuracy = Double(p.u32(28)) * 0.01
        headingAccuracy = Double(p.u32(32)) * 1e-5
    }
}

/// UBX-NAV-STATUS: the fix type and its flags, sent beside NAV-POSLLH by older receivers.
public struct NavSTATUS: Sendable, Hashable {
    public static let message: UInt16 = 0x0103

    public var iTOW: UInt32
    public var fixType: UInt8
    /// gpsFixOk (bit 0), diffSoln (bit 1), wknSet (bit 2), towSet (bit 3).
    public var flags: UInt8
    /// diffCorr (bit 0: corrections available), carrSolnValid (bit 1).
    public var fixStatus: UInt8
    /// carrSoln (bits 6-7: 1 float, 2 fixed), among others.
    public var flags2: UInt8

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 16) else { return nil }
        iTOW = p.u32(0)
        fixType = p.u8(4)
        flags = p.u8(5)
        fixStatus = p.u8(6)
        flags2 = p.u8(7)
    }

    public var gnssFixOK: Bool { flags & 0x01 != 0 }
    public var differentialSolution: Bool { flags & 0x02 != 0 }
}

/// UBX-HNR-PVT: the high-rate navigation solution of dead-reckoning receivers (NEO-M8U,
/// NEO-M8L), between the regular epochs.
public struct HNRPVT: UBXGeodeticPosition, Sendable, Hashable {
    public static let message: UInt16 = 0x2800

    public var iTOW: UInt32
    public var utc: UBXCalendarTime
    /// validDate, validTime, fullyResolved (bits 0-2).
    public var validity: UInt8
    /// As NAV-PVT's fixType.
    public var fixType: UInt8
    /// GPSfixOK (bit 0), DiffSoln (bit 1), WKNSET (bit 2), TOWSET (bit 3), headVehValid (bit 4).
    public var flags: UInt8
    public var longitude: Double, latitude: Double
    public var height: Double, heightMSL: Double
    /// Ground speed, metres per second; heading of motion, degrees.
    public var groundSpeed: Double, headingOfMotion: Double
    public var horizontalAccuracy: Double, verticalAccuracy: Double
    public var speedAccuracy: Double, headingAccuracy: Double

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 72) else { return nil }
        iTOW = p.u32(0)
        utc = UBXCalendarTime(p, of: Self.message)
        validity = p.u8(11)
        fixType = p.u8(16)
        flags = p.u8(17)
        longitude = Double(p.i32(20)) * 1e-7
        latitude = Double(p.i32(24)) * 1e-7
        height = Double(p.i32(28)) * 1e-3
        heightMSL = Double(p.i32(32)) * 1e-3
        groundSpeed = Double(p.i32(36)) * 1e-3
        headingOfMotion = Double(p.i32(44)) * 1e-5
        horizontalAccuracy = Double(p.u32(52)) * 1e-3
        verticalAccuracy = Double(p.u32(56)) * 1e-3
        speedAccuracy = Double(p.u32(60)) * 1e-3
        headingAccuracy = Double(p.u32(64)) * 1e-5
    }

    public var gnssFixOK: Bool { flags & 0x01 != 0 }
    public var differentialSolution: Bool { flags & 0x02 != 0 }
}
