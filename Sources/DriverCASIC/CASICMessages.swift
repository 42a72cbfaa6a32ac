import GPSFix

/// The CASIC messages GPSFix reads, decoded in place from a checked frame's payload
/// (little-endian, offsets from the payload's first byte, as the specification counts).
/// Each is `nil` for a frame too short for it. Every NAV message begins with `runTime`,
/// the receiver's milliseconds since power-up, the same for all of one epoch (the assembler reads it).
enum CASICMessage {
    static let navigationClass: UInt8 = 0x01
    static let status: UInt8 = 0x00
    static let dilutions: UInt8 = 0x01
    static let positionVelocity: UInt8 = 0x03
    static let utcTime: UInt8 = 0x10
    static let gpsSatellites: UInt8 = 0x20
    static let beidouSatellites: UInt8 = 0x21
    static let glonassSatellites: UInt8 = 0x22
}

/// NAV-PV: the navigation solution.
struct CASICPositionVelocity {
    /// 0 invalid, 1 external, 2 rough, 3 last kept, 4 dead reckoning, 5 fast, 6 2D, 7 3D,
    /// 8 GNSS with dead reckoning.
    var positionValidity: UInt8
    var latitude: Double, longitude: Double
    /// Above the ellipsoid, and the geoid's separation from it, metres.
    var height: Float, geoidSeparation: Float
    /// Variances, square metres.
    var horizontalVariance: Float, verticalVariance: Float
    var velocityNorth: Float, velocityEast: Float, velocityUp: Float
    var groundSpeed: Float, heading: Float
    var speedAccuracy: Float

    init?(_ payload: FrameFields) {
        guard let validity = payload.u8(4), let longitude = payload.f64(16),
            let latitude = payload.f64(24), let height = payload.f32(32), let separation = payload.f32(36),
            let horizontal = payload.f32(40), let vertical = payload.f32(44), let north = payload.f32(48),
            let east = payload.f32(52), let up = payload.f32(56), let speed = payload.f32(64),
            let heading = payload.f32(68), let speedAccuracy = payload.f32(72)
        else { return nil }
        positionValidity = validity
        (self.latitude, self.longitude, self.height, geoidSeparation) = (latitude, longitude, height, separation)
        (horizontalVariance, verticalVariance) = (horizontal, vertical)
        (velocityNorth, velocityEast, velocityUp) = (north, east, up)
        (groundSpeed, self.heading, self.speedAccuracy) = (speed, heading, speedAccuracy)
    }
}

/// NAV-DOP: the solution's dilutions of precision.
struct CASICDilutions {
    var pdop: Float, hdop: Float, vdop: Float, ndop: Float, edop: Float, tdop: Float

    init?(_ payload: FrameFields) {
        guard let p = payload.f32(4), let h = payload.f32(8), let v = payload.f32(12),
            let n = payload.f32(16), let e = payload.f32(20), let t = payload.f32(24)
        else { return nil }
        (pdop, hdop, vdop, ndop, edop, tdop) = (p, h, v, n, e, t)
    }
}

/// NAV-TIMEUTC: the epoch's UTC. The specification's table omits the milliseconds at
/// offset 12 and so places the year two bytes early; the receivers send both.
struct CASICUTCTime {
    var millisecond: Int, year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    /// Bits 0-2: time of week, week number and leap seconds known.
    var validity: UInt8
    var dateValidity: UInt8

    init?(_ payload: FrameFields) {
        guard let millisecond = payload.u16(12), let year = payload.u16(14),
            let month = payload.u8(16), let day = payload.u8(17), let hour = payload.u8(18), let minute = payload.u8(19),
            let second = payload.u8(20), let validity = payload.u8(21), let dateValidity = payload.u8(23)
        else { return nil }
        (self.millisecond, self.year, self.month, self.day) = (Int(millisecond), Int(year), Int(month), Int(day))
        (self.hour, self.minute, self.second) = (Int(hour), Int(minute), Int(second))
        (self.validity, self.dateValidity) = (validity, dateValidity)
    }

    /// Whether the receiver vouches for the time and date.
    var isValid: Bool { validity & 0x07 == 0x07 && dateValidity > 0 }
}

/// NAV-GPSINFO, NAV-BDSINFO, NAV-GLNINFO: one system's satellites in view, twelve bytes
/// each after an eight-byte header.
struct CASICSatellites {
    let payload: FrameFields
    /// Satellites listed: as many as the header says and the frame holds.
    let count: Int

    init?(_ payload: FrameFields) {
        guard let listed = payload.u8(4) else { return nil }
        self.payload = payload
        count = min(Int(listed), (payload.bytes.count - 8) / 12)
    }

    /// The satellite at `index`: its number in its system, whether the solution used it,
    /// C/N0 (dB-Hz), elevation and azimuth (degrees) and pseudorange residual (metres).
    subscript(index: Int) -> (svid: Int, used: Bool, cno: Int, elevation: Int, azimuth: Int, residual: Float?) {
        let base = 8 + 12 * index
        return (
            Int(payload.u8(base + 1) ?? 0), (payload.u8(base + 2) ?? 0) & 0x01 != 0, Int(payload.u8(base + 4) ?? 0),
            Int(payload.i8(base + 5) ?? 0), Int(payload.i16(base + 6) ?? 0), payload.f32(base + 8)
        )
    }
}
