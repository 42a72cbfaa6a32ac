import GPSFix

// The messages the Skytraq driver reads, laid out as AN0028 (navigation) and AN0037 (raw
// measurements) give them: offsets count from the payload's first byte, the message id;
// multi-byte fields are big-endian. Each reader takes a payload borrowed from its frame,
// refuses one too short for its message, and reads its fields in place.

/// Message 0xDF, receiver navigation status (AN0037): the epoch's solution in ECEF, its
/// GPS time and DOPs.
public struct SkytraqNavigationStatus {
    public static let id: UInt8 = 0xDF
    /// The payload's length.
    public static let length = 81

    /// Issue of data: the same in every message of one epoch.
    public let issueOfData: UInt8
    /// 0 no fix, 1 fix prediction, 2 2D, 3 3D, 4 3D with DGPS.
    public let fixStatus: UInt8
    /// GPS week, whole (not modulo 1024).
    public let week: Int
    /// Seconds into the GPS week; `nil` when not a finite number.
    public let timeOfWeek: Double?
    /// ECEF position, metres, and velocity, metres per second; `nil` each when any of its
    /// components is not a finite number.
    public let position: (x: Double, y: Double, z: Double)?
    public let velocity: (x: Double, y: Double, z: Double)?
    /// Geometric, position, horizontal, vertical and time dilutions of precision.
    public let gdop: Double?
    public let pdop: Double?
    public let hdop: Double?
    public let vdop: Double?
    public let tdop: Double?

    /// Reads `payload`; `nil` when it is not a whole 0xDF.
    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard payload.count >= Self.length, fields.u8(0) == Self.id, let iod = fields.u8(1), let status = fields.u8(2),
            let week = fields.u16(3)
        else { return nil }
        issueOfData = iod
        fixStatus = status
        self.week = Int(week)
        timeOfWeek = fields.f64(5)
        if let x = fields.f64(13), let y = fields.f64(21), let z = fields.f64(29) {
            position = (x, y, z)
        } else {
            position = nil
        }
        if let x = fields.f32(37), let y = fields.f32(41), let z = fields.f32(45) {
            velocity = (Double(x), Double(y), Double(z))
        } else {
            velocity = nil
        }
        gdop = fields.f32(61).map(Double.init)
        pdop = fields.f32(65).map(Double.init)
        hdop = fields.f32(69).map(Double.init)
        vdop = fields.f32(73).map(Double.init)
        tdop = fields.f32(77).map(Double.init)
    }
}

/// Message 0xDE, SV and channel status (AN0037): one entry per channel.
public struct SkytraqChannelStatus {
    public static let id: UInt8 = 0xDE
    /// The payload's length before the channels, and each channel's.
    public static let headerLength = 3
    public static let channelLength = 10

    /// One channel's entry.
    public struct Channel {
        public let channel: UInt8
        /// The satellite's PRN: 1-32 GPS, 65-96 GLONASS, 120-158 SBAS, 193-197 QZSS,
        /// 201-239 BeiDou; 0 on an idle channel.
        public let prn: Int
        public let satelliteStatus: UInt8
        /// User range accuracy index.
        public let ura: UInt8
        /// Carrier to noise density, dB-Hz.
        public let carrierToNoise: Int
        /// Degrees above the horizon and from true north.
        public let elevation: Int
        public let azimuth: Int
        /// Bit 4: used in the fix; bit 5: used in a DGPS fix.
        public let channelStatus: UInt8

        /// Whether the satellite was used in the epoch's solution.
        public var isUsed: Bool { channelStatus & 0x30 != 0 }
    }

    private let fields: FrameFields
    public let issueOfData: UInt8
    /// Channels listed.
    public let count: Int

    /// Reads `payload`; `nil` when it is not a 0xDE holding the channels it counts.
    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard fields.u8(0) == Self.id, let iod = fields.u8(1), let count = fields.u8(2),
            fields.holds(Int(count) * Self.channelLength, at: Self.headerLength)
        else { return nil }
        self.fields = fields
        issueOfData = iod
        self.count = Int(count)
    }

    /// The channel at `index` (below ``count``), read in place.
    public subscript(index: Int) -> Channel {
        precondition(index >= 0 && index < count, "channel index out of range")
        let base = Self.headerLength + index * Self.channelLength
        // Within the frame: init checked that it holds `count` channels.
        let bytes = fields.bytes
        return Channel(
            channel: bytes[base], prn: Int(bytes[base + 1]), satelliteStatus: bytes[base + 2], ura: bytes[base + 3],
            carrierToNoise: Int(bytes[base + 4]), elevation: Int(fields.i16(base + 5) ?? 0),
            azimuth: Int(fields.i16(base + 7) ?? 0), channelStatus: bytes[base + 9])
    }
}

/// Message 0xDC, measurement time (AN0037): when the epoch's raw measurements were taken.
public struct SkytraqMeasurementTime {
    public static let id: UInt8 = 0xDC
    public static let length = 10

    public let issueOfData: UInt8
    /// GPS week, whole.
    public let week: Int
    /// Milliseconds into the GPS week.
    public let timeOfWeekMilliseconds: Int
    /// Milliseconds between measurements.
    public let period: Int

    /// Reads `payload`; `nil` when it is not a whole 0xDC.
    public init?(_ payload: UnsafeRawBufferPointer) {
        let fields = FrameFields(payload, bigEndian: true)
        guard payload.count >= Self.length, fields.u8(0) == Self.id, let iod = fields.u8(1), let week = fields.u16(2),
            let tow = fields.u32(4), let period = fields.u16(8)
        else { return nil }
        issueOfData = iod
        self.week = Int(week)
        timeOfWeekMilliseconds = Int(tow)
        self.period = Int(period)
    }
}

/// Message 0xA8, navigation data (AN0028): the solution of receivers in their default
/// binary output, geodetic and ECEF, with its DOPs.
public struct SkytraqNavigationData {
    public static let id: UInt8 = 0xA8
    public static let length = 59

    /// 0 no fix, 1 2D, 2 3D, 3 3D with DGNSS.
    public let fixMode: UInt8
    /// Satellites used in the solution.
    public let satellitesUsed: Int
    /// GPS week, whole, and time of week in hundredths of a second.
    public let week: Int
    public let timeOfWeekCentiseconds: Int
    /// Degrees, north and east positive.
    public let latitude: Double
    public let longitude: Double
    /// Metres above the ellipsoid and above mean sea level. The note gives both as U32
    /// centimetres; they are read as signed, so that a receiver below sea level (or below
    /// the ellipsoid) is not placed 40,000 km up.
    public let altitudeHAE: Double
    public let altitudeMSL: Double
    /// Geometric, position, horizontal, vertical and time dilutions of precision.
    public let gdop: Double
    public let pdop: Double
    public let hdop: Double
    public let vdop: Double
    public let tdop: Double
    /// ECEF position, metres, and velocity, metres per second.
    public let position: (x: Double, y: Double, z: Double)
    public let velocity: (x: Double, y: Double, z: Double)

    /// Reads `payload`; `nil` when it is not a whole 0xA8.
    public init?(_ payload: UnsafeRawBufferPointer) {
        let f = FrameFields(payload, bigEndian: true)
        guard payload.count >= Self.length, f.u8(0) == Self.id, let mode = f.u8(1), let used = f.u8(2),
            let week = f.u16(3), let tow = f.u32(5), let lat = f.i32(9), let lon = f.i32(13), let hae = f.i32(17),
            let msl = f.i32(21), let g = f.u16(25), let p = f.u16(27), let h = f.u16(29), let v = f.u16(31),
            let t = f.u16(33), let x = f.i32(35), let y = f.i32(39), let z = f.i32(43), let vx = f.i32(47),
            let vy = f.i32(51), let vz = f.i32(55)
        else { return nil }
        fixMode = mode
        satellitesUsed = Int(used)
        self.week = Int(week)
        timeOfWeekCentiseconds = Int(tow)
        latitude = Double(lat) * 1e-7
        longitude = Double(lon) * 1e-7
        altitudeHAE = Double(hae) / 100
        altitudeMSL = Double(msl) / 100
        (gdop, pdop, hdop) = (Double(g) / 100, Double(p) / 100, Double(h) / 100)
        (vdop, tdop) = (Double(v) / 100, Double(t) / 100)
        position = (Double(x) / 100, Double(y) / 100, Double(z) / 100)
        velocity = (Double(vx) / 100, Double(vy) / 100, Double(vz) / 100)
    }
}
