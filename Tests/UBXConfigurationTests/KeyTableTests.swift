import Testing
import UBXConfiguration

/// The configuration keys GPSFix writes, checked against u-blox's own tables.
///
/// Transcribed by hand from the u-blox ZED-F9P Interface Description, UBX-18010854
/// (protocol 27), section "Configuration reference": each key's name, ID and type. NavIC's
/// switch is not in that document; it is from the X20P interface description of u-blox's
/// newer receivers, which GPSFix writes only when NavIC is asked for.
@Suite("Configuration keys against u-blox's interface description")
struct KeyTableTests {
    /// Name, key ID, type (L, U1, E1, I1, U2, U4, I4), as the description lists them.
    static let transcribed: [(String, UInt32, String)] = [
        ("CFG-RATE-MEAS", 0x3021_0001, "U2"), ("CFG-RATE-NAV", 0x3021_0002, "U2"),
        ("CFG-NAVSPG-DYNMODEL", 0x2011_0021, "E1"),
        ("CFG-UART1-BAUDRATE", 0x4052_0001, "U4"), ("CFG-UART2-BAUDRATE", 0x4053_0001, "U4"),
        ("CFG-UART1OUTPROT-UBX", 0x1074_0001, "L"), ("CFG-UART1OUTPROT-NMEA", 0x1074_0002, "L"),
        ("CFG-UART2OUTPROT-UBX", 0x1076_0001, "L"), ("CFG-UART2OUTPROT-NMEA", 0x1076_0002, "L"),
        ("CFG-USBOUTPROT-UBX", 0x1078_0001, "L"), ("CFG-USBOUTPROT-NMEA", 0x1078_0002, "L"),
        ("CFG-SIGNAL-GPS_ENA", 0x1031_001F, "L"), ("CFG-SIGNAL-SBAS_ENA", 0x1031_0020, "L"),
        ("CFG-SIGNAL-GAL_ENA", 0x1031_0021, "L"), ("CFG-SIGNAL-BDS_ENA", 0x1031_0022, "L"),
        ("CFG-SIGNAL-QZSS_ENA", 0x1031_0024, "L"), ("CFG-SIGNAL-GLO_ENA", 0x1031_0025, "L"),
        ("CFG-SIGNAL-NAVIC_ENA", 0x1031_0026, "L"),
        ("CFG-TP-TP1_ENA", 0x1005_0007, "L"), ("CFG-TP-PULSE_DEF", 0x2005_0023, "E1"),
        ("CFG-TP-PULSE_LENGTH_DEF", 0x2005_0030, "E1"), ("CFG-TP-PERIOD_TP1", 0x4005_0002, "U4"),
        ("CFG-TP-PERIOD_LOCK_TP1", 0x4005_0003, "U4"), ("CFG-TP-LEN_TP1", 0x4005_0004, "U4"),
        ("CFG-TP-LEN_LOCK_TP1", 0x4005_0005, "U4"), ("CFG-TP-USE_LOCKED_TP1", 0x1005_0009, "L"),
        ("CFG-TP-ALIGN_TO_TOW_TP1", 0x1005_000A, "L"), ("CFG-TP-POL_TP1", 0x1005_000B, "L"),
        ("CFG-TMODE-MODE", 0x2003_0001, "E1"), ("CFG-TMODE-POS_TYPE", 0x2003_0002, "E1"),
        ("CFG-TMODE-LAT", 0x4003_0009, "I4"), ("CFG-TMODE-LON", 0x4003_000A, "I4"), ("CFG-TMODE-HEIGHT", 0x4003_000B, "I4"),
        ("CFG-TMODE-LAT_HP", 0x2003_000C, "I1"), ("CFG-TMODE-LON_HP", 0x2003_000D, "I1"),
        ("CFG-TMODE-HEIGHT_HP", 0x2003_000E, "I1"), ("CFG-TMODE-SVIN_MIN_DUR", 0x4003_0010, "U4"),
        ("CFG-TMODE-SVIN_ACC_LIMIT", 0x4003_0011, "U4"),
        ("CFG-MSGOUT-UBX_NAV_PVT_UART1", 0x2091_0007, "U1"), ("CFG-MSGOUT-UBX_NAV_PVT_UART2", 0x2091_0008, "U1"),
        ("CFG-MSGOUT-UBX_NAV_PVT_USB", 0x2091_0009, "U1"),
        ("CFG-MSGOUT-UBX_NAV_DOP_UART1", 0x2091_0039, "U1"), ("CFG-MSGOUT-UBX_NAV_DOP_UART2", 0x2091_003A, "U1"),
        ("CFG-MSGOUT-UBX_NAV_DOP_USB", 0x2091_003B, "U1"),
        ("CFG-MSGOUT-UBX_NAV_SAT_UART1", 0x2091_0016, "U1"), ("CFG-MSGOUT-UBX_NAV_SAT_UART2", 0x2091_0017, "U1"),
        ("CFG-MSGOUT-UBX_NAV_SAT_USB", 0x2091_0018, "U1"),
        ("CFG-MSGOUT-UBX_NAV_EOE_UART1", 0x2091_0160, "U1"), ("CFG-MSGOUT-UBX_NAV_EOE_UART2", 0x2091_0161, "U1"),
        ("CFG-MSGOUT-UBX_NAV_EOE_USB", 0x2091_0162, "U1"),
        ("CFG-MSGOUT-UBX_NAV_TIMELS_UART1", 0x2091_0061, "U1"), ("CFG-MSGOUT-UBX_NAV_TIMELS_UART2", 0x2091_0062, "U1"),
        ("CFG-MSGOUT-UBX_NAV_TIMELS_USB", 0x2091_0063, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1005_UART1", 0x2091_02BE, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1005_UART2", 0x2091_02BF, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1005_USB", 0x2091_02C0, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1074_UART1", 0x2091_035F, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1074_UART2", 0x2091_0360, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1074_USB", 0x2091_0361, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1077_UART1", 0x2091_02CD, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1077_UART2", 0x2091_02CE, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1077_USB", 0x2091_02CF, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1084_UART1", 0x2091_0364, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1084_UART2", 0x2091_0365, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1084_USB", 0x2091_0366, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1087_UART1", 0x2091_02D2, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1087_UART2", 0x2091_02D3, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1087_USB", 0x2091_02D4, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1094_UART1", 0x2091_0369, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1094_UART2", 0x2091_036A, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1094_USB", 0x2091_036B, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1097_UART1", 0x2091_0319, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1097_UART2", 0x2091_031A, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1097_USB", 0x2091_031B, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1124_UART1", 0x2091_036E, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1124_UART2", 0x2091_036F, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1124_USB", 0x2091_0370, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1127_UART1", 0x2091_02D7, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1127_UART2", 0x2091_02D8, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1127_USB", 0x2091_02D9, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1230_UART1", 0x2091_0304, "U1"), ("CFG-MSGOUT-RTCM_3X_TYPE1230_UART2", 0x2091_0305, "U1"),
        ("CFG-MSGOUT-RTCM_3X_TYPE1230_USB", 0x2091_0306, "U1"),
    ]

    static let sizes = ["L": 1, "U1": 1, "E1": 1, "I1": 1, "U2": 2, "U4": 4, "I4": 4]

    /// Every key the tool and the daemon read or write.
    static var used: [ConfigurationKey] { ConfigurationKeys.all }

    @Test("every key GPSFix uses has the ID and value size the description gives its name")
    func keysMatchTheDescription() {
        let table = Dictionary(uniqueKeysWithValues: Self.transcribed.map { ($0.0, ($0.1, $0.2)) })
        for key in Self.used {
            guard let (id, type) = table[key.name] else {
                Issue.record("\(key.name) is not in the transcribed table")
                continue
            }
            #expect(key.id == id, "\(key.name)")
            #expect(key.valueSize == Self.sizes[type], "\(key.name) is \(type)")
        }
    }

    @Test("every transcribed key is one GPSFix uses, so the table holds nothing unchecked")
    func tableHoldsOnlyUsedKeys() {
        let used = Set(Self.used.map(\.name))
        #expect(Self.transcribed.map(\.0).filter { !used.contains($0) } == [])
    }
}
