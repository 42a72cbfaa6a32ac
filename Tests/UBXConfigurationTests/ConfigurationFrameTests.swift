import ReceiverFraming
import Testing
import UBXConfiguration

/// The frames of a configuration, byte for byte where the layout is the point.
@Suite("Configuration frames")
struct ConfigurationFrameTests {
    static func frame(_ bytes: [UInt8], _ body: (UBXFrame) -> Void) {
        bytes.withUnsafeBytes { raw in
            guard let frame = UBXFrame(validating: raw) else {
                Issue.record("not a whole UBX frame: \(bytes)")
                return
            }
            body(frame)
        }
    }

    @Test("one CFG-VALSET carries at most 64 items; more become one transaction: begin, continue, apply")
    func transactions() {
        let items = (0..<150).map { _ in ConfigurationItem(ConfigurationKeys.measurementRate, 200) }
        let frames = ValueMessages.set(items, in: [.ram, .batteryBacked])
        #expect(frames.count == 3)
        #expect(frames.map { [$0[6], $0[7], $0[8]] } == [[1, 3, 1], [1, 3, 2], [1, 3, 3]])
        var written: [ConfigurationItem] = []
        for bytes in frames { Self.frame(bytes) { written += ValueMessages.itemsWritten(by: $0)?.items ?? [] } }
        #expect(written == items)
        let single = ValueMessages.set(Array(items.prefix(64)), in: .ram)
        #expect(single.count == 1 && single[0][6] == 0 && single[0][8] == 0, "a single frame needs no transaction")
    }

    @Test("values go little-endian at their key's size; a negative one in two's complement")
    func valueEncoding() {
        let items = [
            ConfigurationItem(ConfigurationKeys.measurementRate, 0x0102),
            ConfigurationItem(ConfigurationKeys.timingLatitude, signed: -2),
            ConfigurationItem(ConfigurationKeys.timingHeightHP, signed: -1),
        ]
        let bytes = ValueMessages.set(items, in: .ram)[0]
        #expect(Array(bytes[10..<(bytes.count - 2)]) == [
            0x01, 0x00, 0x21, 0x30, 0x02, 0x01,  // CFG-RATE-MEAS, U2
            0x09, 0x00, 0x03, 0x40, 0xFE, 0xFF, 0xFF, 0xFF,  // CFG-TMODE-LAT, I4
            0x0E, 0x00, 0x03, 0x20, 0xFF,  // CFG-TMODE-HEIGHT_HP, I1
        ])
    }

    static func i32(_ p: [UInt8], _ offset: Int) -> Int32 {
        Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(p[offset + $1]) << UInt32($1 * 8) })
    }

    @Test("a position is split into whole units and the high-precision remainder, as CFG-TMODE3 carries it; the rest kept")
    func positionSplit() {
        var current = [UInt8](repeating: 0, count: 40)
        current[20] = 0x2A  // fixedPosAcc, the receiver's own
        let p = LegacyMessages.timingMode3(.fixed(latitude: 52.123456789, longitude: -0.000000019, height: 71.23456), from: current)
        #expect(p.count == 40 && p[2] == 2 && p[3] & 0x01 == 1 && p[20] == 0x2A)
        #expect(Self.i32(p, 4) == 521_234_567 && Int8(bitPattern: p[16]) == 89)
        #expect(Self.i32(p, 8) == 0 && Int8(bitPattern: p[17]) == -19)
        #expect(Self.i32(p, 12) == 7123 && Int8(bitPattern: p[18]) == 46)
    }

    @Test("CFG-TMODE2 carries degrees in 1e-7, the height in cm and a survey's accuracy in mm")
    func timingMode2() {
        let fixed = LegacyMessages.timingMode2(.fixed(latitude: -33.8567843, longitude: 151.2152977, height: 42.31), from: [UInt8](repeating: 0, count: 28))
        #expect(fixed.count == 28 && fixed[0] == 2 && fixed[2] & 0x01 == 1)
        #expect(Self.i32(fixed, 4) == -338_567_843 && Self.i32(fixed, 8) == 1_512_152_977 && Self.i32(fixed, 12) == 4231)
        let survey = LegacyMessages.timingMode2(.surveyIn(seconds: 300, metres: 2), from: fixed)
        #expect(survey[0] == 1 && survey[2] & 0x01 == 0 && Self.i32(survey, 20) == 300 && Self.i32(survey, 24) == 2000)
    }

    @Test("a CFG-VALGET reply whose items overrun it is refused")
    func truncatedReply() {
        let good = UBXFrame.encode(messageClass: 0x06, id: 0x8B, payload: [1, 0, 0, 0, 0x01, 0x00, 0x21, 0x30, 0xE8, 0x03])
        Self.frame(good) { #expect(ValueMessages.items(of: $0) == [ConfigurationItem(ConfigurationKeys.measurementRate, 1000)]) }
        let short = UBXFrame.encode(messageClass: 0x06, id: 0x8B, payload: [1, 0, 0, 0, 0x01, 0x00, 0x21, 0x30, 0xE8])
        Self.frame(short) { #expect(ValueMessages.items(of: $0) == nil) }
    }
}
