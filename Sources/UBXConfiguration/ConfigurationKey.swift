/// One item of the configuration interface of u-blox receivers from protocol 27 on (F9,
/// M9, M10, X20): a 32-bit key whose bits 28–30 give the size of its value, read and
/// written with CFG-VALGET and CFG-VALSET.
public struct ConfigurationKey: Hashable, Sendable, CustomStringConvertible {
    /// The key ID as u-blox's interface descriptions list it (`0x30210001` is CFG-RATE-MEAS).
    public let id: UInt32
    /// The name the interface descriptions give it (`CFG-RATE-MEAS`).
    public let name: String

    public init(_ id: UInt32, _ name: String) {
        self.id = id
        self.name = name
    }

    /// How many bytes the value takes on the wire, from the size bits of the ID:
    /// 1 = one bit (carried in a byte), 2 = one byte, 3 = two, 4 = four, 5 = eight.
    public var valueSize: Int { Self.valueSize(of: id) }

    /// The value size of any key ID, known or not (a CFG-VALGET reply is walked with it).
    public static func valueSize(of id: UInt32) -> Int {
        switch (id >> 28) & 0x7 {
        case 1, 2: 1
        case 3: 2
        case 4: 4
        case 5: 8
        default: 0
        }
    }

    public var description: String { name }
}

/// The ports of a u-blox receiver, by the names of their configuration groups.
public enum ReceiverPort: String, Sendable, CaseIterable, Codable {
    case uart1, uart2, usb

    /// The port's number in the legacy messages (CFG-PRT, CFG-MSG's rates).
    public var legacyID: UInt8 {
        switch self {
        case .uart1: 1
        case .uart2: 2
        case .usb: 3
        }
    }

    /// The port a device path most likely reaches: USB for a CDC-ACM device (`ttyACM`,
    /// u-blox's own USB), else UART1 (a USB-serial adapter, a board's UART).
    public init(guessingFor path: String) {
        self = path.contains("ttyACM") ? .usb : .uart1
    }

    /// Whether the port has a speed to set.
    public var isUART: Bool { self != .usb }
}

/// The keys GPSFix reads and writes, as u-blox's interface descriptions define them.
public enum ConfigurationKeys {
    /// The time between measurements (U2, ms).
    public static let measurementRate = ConfigurationKey(0x3021_0001, "CFG-RATE-MEAS")
    /// Measurements per navigation solution (U2).
    public static let navigationRate = ConfigurationKey(0x3021_0002, "CFG-RATE-NAV")
    /// The platform model the navigation filter assumes (E1, ``DynamicModel/code``).
    public static let dynamicModel = ConfigurationKey(0x2011_0021, "CFG-NAVSPG-DYNMODEL")

    /// The port's speed in bits per second (U4); USB has none.
    public static func baudRate(_ port: ReceiverPort) -> ConfigurationKey? {
        switch port {
        case .uart1: ConfigurationKey(0x4052_0001, "CFG-UART1-BAUDRATE")
        case .uart2: ConfigurationKey(0x4053_0001, "CFG-UART2-BAUDRATE")
        case .usb: nil
        }
    }

    /// Whether the port sends UBX (L).
    public static func outputsUBX(_ port: ReceiverPort) -> ConfigurationKey {
        switch port {
        case .uart1: ConfigurationKey(0x1074_0001, "CFG-UART1OUTPROT-UBX")
        case .uart2: ConfigurationKey(0x1076_0001, "CFG-UART2OUTPROT-UBX")
        case .usb: ConfigurationKey(0x1078_0001, "CFG-USBOUTPROT-UBX")
        }
    }

    /// Whether the port sends NMEA (L).
    public static func outputsNMEA(_ port: ReceiverPort) -> ConfigurationKey {
        switch port {
        case .uart1: ConfigurationKey(0x1074_0002, "CFG-UART1OUTPROT-NMEA")
        case .uart2: ConfigurationKey(0x1076_0002, "CFG-UART2OUTPROT-NMEA")
        case .usb: ConfigurationKey(0x1078_0002, "CFG-USBOUTPROT-NMEA")
        }
    }

    /// Whether a constellation is used (L): the group switch of CFG-SIGNAL.
    public static func enables(_ system: Constellation) -> ConfigurationKey {
        switch system {
        case .gps: ConfigurationKey(0x1031_001F, "CFG-SIGNAL-GPS_ENA")
        case .sbas: ConfigurationKey(0x1031_0020, "CFG-SIGNAL-SBAS_ENA")
        case .galileo: ConfigurationKey(0x1031_0021, "CFG-SIGNAL-GAL_ENA")
        case .beidou: ConfigurationKey(0x1031_0022, "CFG-SIGNAL-BDS_ENA")
        case .qzss: ConfigurationKey(0x1031_0024, "CFG-SIGNAL-QZSS_ENA")
        case .glonass: ConfigurationKey(0x1031_0025, "CFG-SIGNAL-GLO_ENA")
        case .navic: ConfigurationKey(0x1031_0026, "CFG-SIGNAL-NAVIC_ENA")
        }
    }

    // The first time pulse (TIMEPULSE), defined by period and length.

    /// Whether the first time pulse is on (L).
    public static let timePulseEnabled = ConfigurationKey(0x1005_0007, "CFG-TP-TP1_ENA")
    /// What defines the pulse: 0 a period, 1 a frequency (E1).
    public static let timePulseDefinition = ConfigurationKey(0x2005_0023, "CFG-TP-PULSE_DEF")
    /// What defines its width: 0 a ratio, 1 a length (E1).
    public static let timePulseLengthDefinition = ConfigurationKey(0x2005_0030, "CFG-TP-PULSE_LENGTH_DEF")
    /// The period without a fix (U4, µs).
    public static let timePulsePeriod = ConfigurationKey(0x4005_0002, "CFG-TP-PERIOD_TP1")
    /// The period with a fix (U4, µs).
    public static let timePulsePeriodLocked = ConfigurationKey(0x4005_0003, "CFG-TP-PERIOD_LOCK_TP1")
    /// The length without a fix (U4, µs); 0 is no pulse.
    public static let timePulseLength = ConfigurationKey(0x4005_0004, "CFG-TP-LEN_TP1")
    /// The length with a fix (U4, µs).
    public static let timePulseLengthLocked = ConfigurationKey(0x4005_0005, "CFG-TP-LEN_LOCK_TP1")
    /// Whether the values with a fix apply once the receiver has one (L).
    public static let timePulseUsesLocked = ConfigurationKey(0x1005_0009, "CFG-TP-USE_LOCKED_TP1")
    /// L: the pulse aligned to the top of the second.
    public static let timePulseAlignedToSecond = ConfigurationKey(0x1005_000A, "CFG-TP-ALIGN_TO_TOW_TP1")
    /// L: 1, the rising edge at the top of the second.
    public static let timePulseRising = ConfigurationKey(0x1005_000B, "CFG-TP-POL_TP1")

    // Timing mode: survey-in, or a fixed position.
    /// The timing mode: 0 off, 1 survey-in, 2 a fixed position (E1).
    public static let timingMode = ConfigurationKey(0x2003_0001, "CFG-TMODE-MODE")
    /// How a fixed position is given: 0 ECEF, 1 latitude, longitude and height (E1).
    public static let timingPositionType = ConfigurationKey(0x2003_0002, "CFG-TMODE-POS_TYPE")
    /// A fixed position's latitude (I4, 1e-7°).
    public static let timingLatitude = ConfigurationKey(0x4003_0009, "CFG-TMODE-LAT")
    /// A fixed position's longitude (I4, 1e-7°).
    public static let timingLongitude = ConfigurationKey(0x4003_000A, "CFG-TMODE-LON")
    /// A fixed position's height above the ellipsoid (I4, cm).
    public static let timingHeight = ConfigurationKey(0x4003_000B, "CFG-TMODE-HEIGHT")
    /// The latitude's high-precision part (I1, 1e-9°, -99 to 99).
    public static let timingLatitudeHP = ConfigurationKey(0x2003_000C, "CFG-TMODE-LAT_HP")
    /// The longitude's high-precision part (I1, 1e-9°, -99 to 99).
    public static let timingLongitudeHP = ConfigurationKey(0x2003_000D, "CFG-TMODE-LON_HP")
    /// The height's high-precision part (I1, 0.1 mm, -99 to 99).
    public static let timingHeightHP = ConfigurationKey(0x2003_000E, "CFG-TMODE-HEIGHT_HP")
    /// A survey-in's shortest duration (U4, s).
    public static let surveyInMinimumDuration = ConfigurationKey(0x4003_0010, "CFG-TMODE-SVIN_MIN_DUR")
    /// The accuracy a survey-in must reach (U4, 0.1 mm).
    public static let surveyInAccuracyLimit = ConfigurationKey(0x4003_0011, "CFG-TMODE-SVIN_ACC_LIMIT")

    /// The output rate of a UBX message on a port (U1, per navigation solution); `nil`
    /// for the messages of older receivers, which have no key.
    public static func outputRate(_ message: OutputMessage, _ port: ReceiverPort) -> ConfigurationKey? {
        let base: UInt32
        switch message {
        case .navPVT: base = 0x2091_0006
        case .navDOP: base = 0x2091_0038
        case .navSAT: base = 0x2091_0015
        case .navEOE: base = 0x2091_015F
        case .navTIMELS: base = 0x2091_0060
        case .navSVINFO, .navSOL, .navPOSLLH, .navVELNED, .navTIMEGPS: return nil
        }
        // I2C's key is the base; UART1, UART2 and USB follow it.
        let offset: UInt32 = switch port {
        case .uart1: 1
        case .uart2: 2
        case .usb: 3
        }
        return ConfigurationKey(base + offset, "CFG-MSGOUT-UBX_\(message.name.replacingDashes)_\(port.rawValue.uppercased())")
    }

    /// Every key GPSFix reads or writes, on every port.
    public static let all: [ConfigurationKey] = {
        var keys = [measurementRate, navigationRate, dynamicModel]
        for port in ReceiverPort.allCases {
            keys += [outputsUBX(port), outputsNMEA(port)] + (baudRate(port).map { [$0] } ?? [])
            keys += OutputMessage.allCases.compactMap { outputRate($0, port) }
            keys += RTCMMessage.all.map { $0.outputRate(port) }
        }
        keys += Constellation.allCases.map(enables)
        keys += [
            timePulseEnabled, timePulseDefinition, timePulseLengthDefinition, timePulsePeriod, timePulsePeriodLocked,
            timePulseLength, timePulseLengthLocked, timePulseUsesLocked, timePulseAlignedToSecond, timePulseRising, timingMode,
            timingPositionType, timingLatitude,
            timingLongitude, timingHeight, timingLatitudeHP, timingLongitudeHP, timingHeightHP, surveyInMinimumDuration,
            surveyInAccuracyLimit,
        ]
        return keys
    }()

    /// The key of `id` among ``all``, to name the items of a frame.
    public static func named(_ id: UInt32) -> ConfigurationKey? {
        all.first { $0.id == id }
    }
}

/// The UBX messages GPSFix asks a receiver to send when its output is UBX: the fix, its
/// dilution of precision, the sky and the end of each cycle, in the messages the
/// receiver's protocol version has; and the leap second's announcement, which the time
/// service passes on to chrony and ntpd (gpsd asks for it too).
public enum OutputMessage: CaseIterable, Sendable {
    case navPVT, navDOP, navSAT, navEOE, navTIMELS
    case navSVINFO, navSOL, navPOSLLH, navVELNED, navTIMEGPS

    /// The messages a receiver of protocol `version` is asked for: NAV-PVT from protocol
    /// 14, NAV-SAT from 15 (NAV-SVINFO before), NAV-EOE and NAV-TIMELS from 18.
    public static func sent(byProtocol version: Double) -> [OutputMessage] {
        switch version {
        case 18...: [.navPVT, .navDOP, .navSAT, .navEOE, .navTIMELS]
        case 15..<18: [.navPVT, .navDOP, .navSAT]
        case 14..<15: [.navPVT, .navDOP, .navSVINFO]
        default: [.navSOL, .navPOSLLH, .navVELNED, .navTIMEGPS, .navDOP, .navSVINFO]
        }
    }

    /// Every how many navigation solutions it is sent: each, but the leap second's
    /// announcement every 255th (about four minutes at 1 Hz, as gpsd asks for it), which
    /// the receiver's fixes count down between.
    public var rate: UInt8 { self == .navTIMELS ? 255 : 1 }

    /// Class and id, as CFG-MSG names a message.
    public var classAndID: (UInt8, UInt8) {
        switch self {
        case .navPVT: (0x01, 0x07)
        case .navDOP: (0x01, 0x04)
        case .navSAT: (0x01, 0x35)
        case .navEOE: (0x01, 0x61)
        case .navTIMELS: (0x01, 0x26)
        case .navSVINFO: (0x01, 0x30)
        case .navSOL: (0x01, 0x06)
        case .navPOSLLH: (0x01, 0x02)
        case .navVELNED: (0x01, 0x12)
        case .navTIMEGPS: (0x01, 0x20)
        }
    }

    public var name: String {
        switch self {
        case .navPVT: "NAV-PVT"
        case .navDOP: "NAV-DOP"
        case .navSAT: "NAV-SAT"
        case .navEOE: "NAV-EOE"
        case .navTIMELS: "NAV-TIMELS"
        case .navSVINFO: "NAV-SVINFO"
        case .navSOL: "NAV-SOL"
        case .navPOSLLH: "NAV-POSLLH"
        case .navVELNED: "NAV-VELNED"
        case .navTIMEGPS: "NAV-TIMEGPS"
        }
    }
}

extension String {
    fileprivate var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }
}
