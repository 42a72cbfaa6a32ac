import GPSFix

/// The classic TSIP packets GPSFix reads, decoded in place from a packet's unstuffed
/// data (big-endian, offsets from the byte after the id, so an 0x8F packet's sub-code is
/// at 0, as Trimble's manuals count). Each is `nil` for data too short for it.

/// 0x41, GPS time: not the time of a fix, but gpsd reports one at it (mode held).
struct TSIPGPSTime {
    var timeOfWeek: Float, week: Int, utcOffset: Float

    init?(_ data: FrameFields) {
        guard let tow = data.f32(0), let week = data.i16(4), let offset = data.f32(6) else { return nil }
        (timeOfWeek, self.week, utcOffset) = (tow, Int(week), offset)
    }
}

/// 0x46, health of receiver: byte 0 says whether it is doing position fixes and, when
/// not, why (the Lassen iQ and Copernicus manuals' codes). Timing receivers (SMT 360,
/// SMTx) send a value those manuals do not list there (0xBB), which says nothing.
struct TSIPHealth {
    var status: UInt8

    init?(_ data: FrameFields) {
        guard let status = data.u8(0), data.u8(1) != nil else { return nil }
        self.status = status
    }

    /// Whether the receiver says it has no fix: no GPS time yet, initialisation needed,
    /// PDOP too high, no usable satellites or too few, the chosen one unusable, the fix
    /// refused by TRAIM; `false` when doing fixes, `nil` for a status not listed.
    var saysNoFix: Bool? {
        switch status {
        case 0x00: false
        case 0x01...0x03, 0x08...0x0C, 0x10: true
        default: nil
        }
    }
}

/// 0x54, one-satellite bias: its time of fix opens an epoch (gpsd reports one at it).
struct TSIPBias {
    var timeOfFix: Float

    init?(_ data: FrameFields) {
        guard data.holds(12, at: 0), let time = data.f32(8) else { return nil }
        timeOfFix = time
    }
}

/// 0x5C (GPS) and 0x5D (GNSS) satellite tracking status, one satellite per packet.
struct TSIPTracking {
    var prn: Int
    /// The channel the satellite is tracked on: 0x5C's slot byte bits 7-3, 0x5D's byte.
    var channel: Int
    var signal: Float
    var timeOfMeasurement: Float
    /// Radians.
    var elevation: Float, azimuth: Float
    /// 0x5D only: used in the fix, and the system (0 GPS, 1 GLONASS, 2 BeiDou, 3 Galileo, 5 QZSS).
    var used: Bool?
    var system: UInt8

    init?(_ data: FrameFields, gnss: Bool) {
        guard let prn = data.u8(0), let slot = data.u8(1), let signal = data.f32(4), let time = data.f32(8),
            let elevation = data.f32(12), let azimuth = data.f32(16), data.holds(gnss ? 26 : 24, at: 0)
        else { return nil }
        (self.prn, self.signal, timeOfMeasurement) = (Int(prn), signal, time)
        (self.elevation, self.azimuth) = (elevation, azimuth)
        if gnss {
            channel = Int(slot)
            used = (data.u8(24) ?? 0) & 0x01 != 0
            system = data.u8(25) ?? 0
        } else {
            channel = Int(slot >> 3)
            used = nil
            system = 0
        }
    }
}

/// 0x6D (all in view) and 0x6C (satellite selection, SMT 360): dimension, DOPs and the
/// PRNs of the solution.
struct TSIPSelection {
    /// Bits 0-2: 3 2D, 4 3D, 1 and 5 clock only.
    var dimension: UInt8
    var pdop: Float, hdop: Float, vdop: Float, tdop: Float
    /// Where the PRNs begin, and how many there are.
    var listOffset: Int, count: Int
    let data: FrameFields

    init?(_ data: FrameFields, counted: Bool) {
        guard let mode = data.u8(0), let p = data.f32(1), let h = data.f32(5), let v = data.f32(9), let t = data.f32(13)
        else { return nil }
        (dimension, pdop, hdop, vdop, tdop, self.data) = (mode & 0x07, p, h, v, t, data)
        if counted {
            guard let count = data.u8(17) else { return nil }
            (listOffset, self.count) = (18, Int(count))
        } else {
            (listOffset, count) = (17, Int(mode >> 4))
        }
        guard data.holds(count, at: listOffset) else { return nil }
    }

    /// The PRN at `index` (its absolute value: a negative one marks an unhealthy satellite).
    func prn(_ index: Int) -> Int { Int((data.i8(listOffset + index) ?? 0).magnitude) }
}

/// 0x8F-20, last fix with extra information (Lassen iQ).
struct TSIPLastFix {
    var velocityEast: Double, velocityNorth: Double, velocityUp: Double
    var timeOfWeekMilliseconds: Int
    var latitude: Double, longitude: Double
    var altitudeHAE: Double
    /// Bit 0 no fix, bit 1 differential, bit 2 2D.
    var flags: UInt8
    var utcOffset: Int, week: Int

    /// gpsd converts semicircles with 180 / (2³¹ − 1), the manual with 180 / 2³¹: gpsd's,
    /// to report what it reports (the two differ by under 1e-7°).
    static let degreesPerSemicircleUnit = 180.0 / 2_147_483_647.0

    init?(_ data: FrameFields) {
        guard let east = data.i16(2), let north = data.i16(4), let up = data.i16(6), let tow = data.u32(8),
            let latitude = data.i32(12), let longitude = data.u32(16), let altitude = data.i32(20),
            let scale = data.u8(24), let flags = data.u8(27), let offset = data.u8(29), let week = data.u16(30)
        else { return nil }
        let unit = scale & 0x01 != 0 ? 0.020 : 0.005
        (velocityEast, velocityNorth, velocityUp) = (Double(east) * unit, Double(north) * unit, Double(up) * unit)
        timeOfWeekMilliseconds = Int(tow)
        self.latitude = Double(latitude) * Self.degreesPerSemicircleUnit
        let east180 = Double(longitude) * Self.degreesPerSemicircleUnit
        self.longitude = east180 > 180 ? east180 - 360 : east180
        altitudeHAE = Double(altitude) / 1000
        (self.flags, utcOffset, self.week) = (flags, Int(offset), Int(week))
    }
}

/// 0x8F-AB, primary timing packet: the time of the pulse just past.
struct TSIPPrimaryTiming {
    var timeOfWeek: Int, week: Int, utcOffset: Int
    /// Bit 0 UTC (else GPS) time, bit 1 the pulse on UTC (else GPS) seconds, bit 2 the
    /// time not yet set, bit 3 no UTC parameters (leap seconds unknown), bit 4 the time
    /// set by the user, not from the satellites.
    var flags: UInt8

    /// Whether the time is the satellites' and its leap seconds known: only then does
    /// it name the pulse's second.
    var isCertain: Bool { flags & 0x1C == 0 }

    /// Whether ``utcOffset`` is the satellites' (bit 3 clear): before the receiver has
    /// their UTC parameters, the field holds whatever its firmware starts with.
    var hasUTCParameters: Bool { flags & 0x08 == 0 }

    init?(_ data: FrameFields) {
        guard let tow = data.u32(1), let week = data.u16(5), let offset = data.i16(7), let flags = data.u8(9),
            data.holds(17, at: 0)
        else { return nil }
        (timeOfWeek, self.week, utcOffset, self.flags) = (Int(tow), Int(week), Int(offset), flags)
    }
}

/// 0x8F-AC, supplemental timing packet: receiver state and the (surveyed) position.
struct TSIPSupplementalTiming {
    /// 7: overdetermined clock (surveyed in).
    var receiverMode: UInt8
    var minorAlarms: UInt16
    var decodingStatus: UInt8
    var temperature: Float
    /// Radians, radians, metres above the ellipsoid.
    var latitude: Double, longitude: Double, altitudeHAE: Double
    /// Nanoseconds the pulse just past came before its second's true start (SMT 360,
    /// SMTx; 0 where the receiver does not give it); `nil` when not a finite number.
    var quantisationError: Float?

    init?(_ data: FrameFields) {
        guard let mode = data.u8(1), let minor = data.u16(10), let decoding = data.u8(12),
            let temperature = data.f32(32), let latitude = data.f64(36), let longitude = data.f64(44),
            let altitude = data.f64(52), data.holds(68, at: 0)
        else { return nil }
        (receiverMode, minorAlarms, decodingStatus, self.temperature) = (mode, minor, decoding, temperature)
        (self.latitude, self.longitude, altitudeHAE) = (latitude, longitude, altitude)
        quantisationError = data.f32(60)
    }
}

/// 0x4A (single precision) and 0x84 (double precision) position: latitude and longitude
/// in radians, altitude in metres (above the ellipsoid unless 0x55 asks for MSL), and the
/// time of fix, seconds of the GPS week.
struct TSIPPosition {
    var latitude: Double, longitude: Double, altitude: Double
    var timeOfFix: Float

    init?(_ data: FrameFields, double: Bool) {
        if double {
            guard let latitude = data.f64(0), let longitude = data.f64(8), let altitude = data.f64(16),
                let time = data.f32(32)
            else { return nil }
            (self.latitude, self.longitude, self.altitude, timeOfFix) = (latitude, longitude, altitude, time)
        } else {
            guard let latitude = data.f32(0), let longitude = data.f32(4), let altitude = data.f32(8),
                let time = data.f32(16)
            else { return nil }
            (self.latitude, self.longitude, self.altitude) = (Double(latitude), Double(longitude), Double(altitude))
            timeOfFix = time
        }
    }
}

/// 0x56, velocity east, north and up (m/s) at a time of fix.
struct TSIPVelocity {
    var east: Float, north: Float, up: Float
    var timeOfFix: Float

    init?(_ data: FrameFields) {
        guard let east = data.f32(0), let north = data.f32(4), let up = data.f32(8), let time = data.f32(16) else {
            return nil
        }
        (self.east, self.north, self.up, timeOfFix) = (east, north, up, time)
    }
}

/// 0x47, signal levels: a count, then per satellite its PRN and signal level.
struct TSIPSignalLevels {
    let data: FrameFields
    /// Satellites listed: as many as the count says and the packet holds.
    let count: Int

    init?(_ data: FrameFields) {
        guard let listed = data.u8(0) else { return nil }
        self.data = data
        count = min(Int(listed), (data.bytes.count - 1) / 5)
    }

    subscript(index: Int) -> (prn: Int, signal: Float?) {
        (Int(data.u8(1 + 5 * index) ?? 0), data.f32(2 + 5 * index))
    }
}
