import GPSFix
import ReceiverFraming

// The SiRF messages GPSFix reads, each a view over a frame's payload, read in place.
// Offsets count from the message id (0), as the SiRF Binary Protocol Reference Manual
// counts them; every field is big-endian. Each view refuses a payload shorter than its
// message, so its fields read within it.

/// MID 2, Measured Navigation Data Out: the ECEF solution, once a second.
public struct SiRFNavigation {
    public static let id: UInt8 = 2
    public static let length = 41
    let fields: FrameFields

    /// A view of `payload`, or `nil` for a payload of another message or too short.
    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard fields.u8(0) == Self.id, fields.holds(Self.length, at: 0) else { return nil }
        self.fields = fields
    }

    /// ECEF position, whole metres.
    public var x: Int { Int(fields.i32(1) ?? 0) }
    public var y: Int { Int(fields.i32(5) ?? 0) }
    public var z: Int { Int(fields.i32(9) ?? 0) }
    /// ECEF velocity, metres per second (sent in eighths).
    public var velocityX: Double { Double(fields.i16(13) ?? 0) / 8 }
    public var velocityY: Double { Double(fields.i16(15) ?? 0) / 8 }
    public var velocityZ: Double { Double(fields.i16(17) ?? 0) / 8 }
    /// Mode 1: bits 0-2 the position fix type, bit 7 DGPS.
    public var mode1: UInt8 { fields.u8(19) ?? 0 }
    /// HDOP (sent in fifths).
    public var hdop: Double { Double(fields.u8(20) ?? 0) / 5 }
    public var mode2: UInt8 { fields.u8(21) ?? 0 }
    /// GPS week, ten bits: the receiver's era is not given.
    public var week: Int { Int(fields.u16(22) ?? 0) }
    /// GPS time of week, hundredths of a second.
    public var timeOfWeek: Int { Int(fields.u32(24) ?? 0) }
    public var satellitesUsed: Int { Int(fields.u8(28) ?? 0) }
}

/// MID 4, Measured Tracker Data Out: twelve channels, each a satellite's place and
/// signal.
public struct SiRFTracker {
    public static let id: UInt8 = 4
    /// Header before the channels, and one channel's length.
    static let headerLength = 8
    static let channelLength = 15
    let fields: FrameFields

    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard fields.u8(0) == Self.id, let channels = fields.u8(7),
            fields.holds(Self.headerLength + Int(channels) * Self.channelLength, at: 0)
        else { return nil }
        self.fields = fields
    }

    /// GPS week, ten bits on the receivers seen.
    public var week: Int { Int(fields.i16(1) ?? 0) }
    /// GPS time of week, hundredths of a second.
    public var timeOfWeek: Int { Int(fields.u32(3) ?? 0) }
    public var count: Int { Int(fields.u8(7) ?? 0) }

    /// One channel: PRN, azimuth and elevation (sent in 1.5° and 0.5° steps), the
    /// tracking state and the mean of the ten C/N0 readings of the last second.
    public struct Channel {
        public var prn: Int
        public var azimuth: Double
        public var elevation: Double
        public var state: UInt16
        public var meanCarrierToNoise: Double
    }

    public subscript(index: Int) -> Channel {
        let base = Self.headerLength + index * Self.channelLength
        var sum = 0
        for reading in 0..<10 { sum += Int(fields.u8(base + 5 + reading) ?? 0) }
        return Channel(
            prn: Int(fields.u8(base) ?? 0), azimuth: Double(fields.u8(base + 1) ?? 0) * 1.5,
            elevation: Double(fields.u8(base + 2) ?? 0) / 2, state: fields.u16(base + 3) ?? 0,
            meanCarrierToNoise: Double(sum) / 10)
    }
}

/// MID 41, Geodetic Navigation Data. gpsd takes its position from MID 2; of this message
/// it keeps the HDOP, while the receiver has a fix.
public struct SiRFGeodetic {
    public static let id: UInt8 = 41
    public static let length = 91
    let fields: FrameFields

    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard fields.u8(0) == Self.id, fields.holds(Self.length, at: 0) else { return nil }
        self.fields = fields
    }

    /// Navigation type: bits 0-2 the fix type, as MID 2's mode 1.
    public var navigationType: UInt16 { fields.u16(3) ?? 0 }
    /// GPS time of week, milliseconds.
    public var timeOfWeek: Int { Int(fields.u32(7) ?? 0) }
    /// Latitude and longitude, degrees (sent in 1e-7 degrees): finer than MID 2's
    /// whole-metre ECEF, but not what gpsd reports.
    public var latitude: Double { Double(fields.i32(23) ?? 0) / 1e7 }
    public var longitude: Double { Double(fields.i32(27) ?? 0) / 1e7 }
    /// HDOP (sent in fifths).
    public var hdop: Double { Double(fields.u8(89) ?? 0) / 5 }
}

/// MID 52, 1 PPS Time: the UTC time of the last pulse, and GPS-UTC leap seconds.
public struct SiRFPulseTime {
    public static let id: UInt8 = 52
    public static let length = 19
    let fields: FrameFields

    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard fields.u8(0) == Self.id, fields.holds(Self.length, at: 0) else { return nil }
        self.fields = fields
    }

    public var hour: Int { Int(fields.u8(1) ?? 0) }
    public var minute: Int { Int(fields.u8(2) ?? 0) }
    public var second: Int { Int(fields.u8(3) ?? 0) }
    public var day: Int { Int(fields.u8(4) ?? 0) }
    public var month: Int { Int(fields.u8(5) ?? 0) }
    public var year: Int { Int(fields.u16(6) ?? 0) }
    /// GPS-UTC leap seconds (the manual's "UTC offset", whole seconds).
    public var utcOffset: Int { Int(fields.i16(8) ?? 0) }
    /// Bits 0-2 all set: the time is UTC, with the offset valid.
    public var status: UInt8 { fields.u8(14) ?? 0 }
    public var isValidUTC: Bool { status & 0x07 == 0x07 }
}

/// MID 98, u-blox's Extended Measured Navigation Data (SiRF I with u-blox firmware):
/// the geodetic solution with UTC and DOPs.
public struct SiRFExtendedNavigation {
    public static let id: UInt8 = 98
    public static let length = 39
    let fields: FrameFields

    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard fields.u8(0) == Self.id, fields.holds(Self.length, at: 0) else { return nil }
        self.fields = fields
    }

    /// Latitude and longitude, degrees (sent in 1e-8 radians).
    public var latitude: Double { Double(fields.i32(1) ?? 0) * 1e-8 * 180 / Double.pi }
    public var longitude: Double { Double(fields.i32(5) ?? 0) * 1e-8 * 180 / Double.pi }
    /// Height above the ellipsoid, metres (sent in millimetres).
    public var altitude: Double { Double(fields.i32(9) ?? 0) / 1000 }
    /// Ground speed and climb, metres per second (sent in mm/s).
    public var speed: Double { Double(fields.i32(13) ?? 0) / 1000 }
    public var climb: Double { Double(fields.i32(17) ?? 0) / 1000 }
    /// Track, degrees from true north (sent in 1e-8 radians).
    public var track: Double { Double(fields.i32(21) ?? 0) * 1e-8 * 180 / Double.pi }
    /// Navigation type: bits 0-2 as MID 2's mode 1, bit 6 UTC valid.
    public var navigationType: UInt8 { fields.u8(25) ?? 0 }
    public var year: Int { Int(fields.u16(26) ?? 0) }
    public var month: Int { Int(fields.u8(28) ?? 0) }
    public var day: Int { Int(fields.u8(29) ?? 0) }
    public var hour: Int { Int(fields.u8(30) ?? 0) }
    public var minute: Int { Int(fields.u8(31) ?? 0) }
    /// Milliseconds of the minute.
    public var milliseconds: Int { Int(fields.u16(32) ?? 0) }
    /// G, P, H, V and T DOP (sent in fifths).
    public var gdop: Double { Double(fields.u8(34) ?? 0) / 5 }
    public var pdop: Double { Double(fields.u8(35) ?? 0) / 5 }
    public var hdop: Double { Double(fields.u8(36) ?? 0) / 5 }
    public var vdop: Double { Double(fields.u8(37) ?? 0) / 5 }
    public var tdop: Double { Double(fields.u8(38) ?? 0) / 5 }
}

/// MID 6, Software Version String: the receiver's firmware, NUL-padded text.
public struct SiRFSoftwareVersion {
    public static let id: UInt8 = 6
    let fields: FrameFields

    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard fields.u8(0) == Self.id, fields.holds(2, at: 0) else { return nil }
        self.fields = fields
    }

    /// The version text, up to its first NUL, printable ASCII only.
    public var version: String {
        String(receiverText: fields.bytes[1...].prefix { $0 != 0 })
    }
}
