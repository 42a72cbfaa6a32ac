import ReceiverFraming

/// UBX-NAV-SAT: every satellite in view with its signal strength and how it is used
/// (u-blox 8 on). A view over the frame: valid only while the frame is.
public struct NavSAT {
    public static let message: UInt16 = 0x0135

    /// One satellite of the list.
    public struct Satellite: Sendable, Hashable {
        /// u-blox's system number (0 GPS, 1 SBAS, 2 Galileo, 3 BeiDou, 4 IMES, 5 QZSS, 6 GLONASS, 7 NavIC).
        public var gnssID: Int
        /// The satellite's number within its system (255 for a GLONASS slot not yet known).
        public var svID: Int
        /// Carrier to noise, dB-Hz; 0 when not tracked.
        public var cno: Int
        /// Degrees; -91 or beyond ±90 when unknown.
        public var elevation: Int
        /// Degrees; beyond 0...360 when unknown.
        public var azimuth: Int
        /// Pseudorange residual, metres.
        public var residual: Double
        /// qualityInd (bits 0-2), svUsed (bit 3), health (bits 4-5), diffCorr (bit 6), ...
        public var flags: UInt32

        public var isUsed: Bool { flags & 0x08 != 0 }
        /// 0 unknown, 1 healthy, 2 unhealthy.
        public var health: Int { Int(flags >> 4 & 0x03) }
        /// 0 no signal ... 4 code locked ... 5-7 code and carrier locked.
        public var quality: Int { Int(flags & 0x07) }
    }

    public let iTOW: UInt32
    /// Satellites in the list.
    public let count: Int
    private let payload: UnsafeRawBufferPointer

    public init?(_ frame: UBXFrame) {
        // Version 1 is the layout u-blox documents; another would be read wrongly.
        guard let p = frame.payload(of: Self.message, atLeast: 8), p.u8(4) == 1 else { return nil }
        iTOW = p.u32(0)
        // A count the payload does not hold is cut to what it holds.
        count = min(Int(p.u8(5)), (p.count - 8) / 12)
        payload = p
    }

    public subscript(index: Int) -> Satellite {
        let base = 8 + 12 * index
        return Satellite(
            gnssID: Int(payload.u8(base)), svID: Int(payload.u8(base + 1)), cno: Int(payload.u8(base + 2)),
            elevation: Int(payload.i8(base + 3)), azimuth: Int(payload.i16(base + 4)),
            residual: Double(payload.i16(base + 6)) * 0.1, flags: payload.u32(base + 8))
    }
}

/// UBX-NAV-SVINFO: the satellites in view of receivers before NAV-SAT (u-blox 5 to 7,
/// and later ones that still send it), numbered as NMEA's extended PRNs.
public struct NavSVINFO {
    public static let message: UInt16 = 0x0130

    public struct Channel: Sendable, Hashable {
        /// NMEA-style satellite number: GPS 1-32, SBAS 120-158, GLONASS 65-96, ...
        public var svID: Int
        /// svUsed (bit 0), diffCorr (bit 1), orbitAvail (bit 2), orbitEph (bit 3), unhealthy (bit 4).
        public var flags: UInt8
        /// 0 idle ... 4 code locked ... 5-7 code and carrier locked.
        public var quality: Int
        public var cno: Int
        public var elevation: Int
        public var azimuth: Int
        /// Pseudorange residual, metres.
        public var residual: Double

        public var isUsed: Bool { flags & 0x01 != 0 }
        public var isUnhealthy: Bool { flags & 0x10 != 0 }
    }

    public let iTOW: UInt32
    public let count: Int
    private let payload: UnsafeRawBufferPointer

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 8) else { return nil }
        iTOW = p.u32(0)
        count = min(Int(p.u8(4)), (p.count - 8) / 12)
        payload = p
    }

    public subscript(index: Int) -> Channel {
        let base = 8 + 12 * index
        return Channel(
            svID: Int(payload.u8(base + 1)), flags: payload.u8(base + 2), quality: Int(payload.u8(base + 3) & 0x0F),
            cno: Int(payload.u8(base + 4)), elevation: Int(payload.i8(base + 5)), azimuth: Int(payload.i16(base + 6)),
            residual: Double(payload.i32(base + 8)) * 0.01)
    }
}

/// UBX-NAV-SIG: every signal tracked, one entry per satellite and signal (u-blox 9 on).
public struct NavSIG {
    public static let message: UInt16 = 0x0143

    public struct Signal: Sendable, Hashable {
        public var gnssID: Int
        public var svID: Int
        /// u-blox's signal number within the system (gpsd's `sigid`).
        public var signalID: Int
        /// GLONASS frequency slot plus 7.
        public var frequencyID: Int
        public var residual: Double
        public var cno: Int
        /// 0 no signal ... 4 code locked ... 5-7 code and carrier locked.
        public var quality: Int
        /// health (bits 0-1), prSmoothed (2), prUsed (3), crUsed (4), doUsed (5), ...
        public var flags: UInt16

        /// 0 unknown, 1 healthy, 2 unhealthy.
        public var health: Int { Int(flags & 0x03) }
    }

    public let iTOW: UInt32
    public let count: Int
    private let payload: UnsafeRawBufferPointer

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 8), p.u8(4) == 0 else { return nil }
        iTOW = p.u32(0)
        count = min(Int(p.u8(5)), (p.count - 8) / 16)
        payload = p
    }

    public subscript(index: Int) -> Signal {
        let base = 8 + 16 * index
        return Signal(
            gnssID: Int(payload.u8(base)), svID: Int(payload.u8(base + 1)), signalID: Int(payload.u8(base + 2)),
            frequencyID: Int(payload.u8(base + 3)), residual: Double(payload.i16(base + 4)) * 0.1,
            cno: Int(payload.u8(base + 6)), quality: Int(payload.u8(base + 7)), flags: payload.u16(base + 10))
    }
}

/// UBX-NAV-DOP: the dilutions of precision of the epoch's solution.
public struct NavDOP: Sendable, Hashable {
    public static let message: UInt16 = 0x0104

    public var iTOW: UInt32
    public var gdop: Double, pdop: Double, tdop: Double, vdop: Double, hdop: Double
    /// Northing and easting DOP: gpsd's `ydop` and `xdop`.
    public var ndop: Double, edop: Double

    public init?(_ frame: UBXFrame) {
        guard let p = frame.payload(of: Self.message, atLeast: 18) else { return nil }
        iTOW = p.u32(0)
        gdop = Double(p.u16(4)) * 0.01
        pdop = Double(p.u16(6)) * 0.01
        tdop = Double(p.u16(8)) * 0.01
        vdop = Double(p.u16(10)) * 0.01
        hdop = Double(p.u16(12)) * 0.01
        ndop = Double(p.u16(14)) * 0.01
        edop = Double(p.u16(16)) * 0.01
    }
}
