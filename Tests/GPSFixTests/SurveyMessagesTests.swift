import GPSFix
import ReceiverFraming
import Testing
import UBX

/// NAV-SVIN and TIM-SVIN at u-blox's offsets (ZED-F9P interface description, UBX-18010854;
/// u-blox M8 receiver description, UBX-13003221), extremes included.
@Suite("Survey-in messages")
struct SurveyMessagesTests {
    static func decode<T>(_ frame: [UInt8], _ decoder: (UBXFrame) -> T?) -> T? {
        frame.withUnsafeBytes { UBXFrame(validating: $0).flatMap(decoder) }
    }

    /// NAV-SVIN, version 0, 40 bytes.
    static func navSVIN(
        duration: UInt32, mean: (Int32, Int32, Int32), fine: (Int8, Int8, Int8), accuracy: UInt32, observations: UInt32,
        valid: UInt8, active: UInt8, version: UInt8 = 0
    ) -> [UInt8] {
        var p = Payload(count: 40)
        p.set(0, version)
        p.set(4, UInt32(36_000_000))
        p.set(8, duration)
        p.set(12, mean.0)
        p.set(16, mean.1)
        p.set(20, mean.2)
        p.set(24, fine.0)
        p.set(25, fine.1)
        p.set(26, fine.2)
        p.set(28, accuracy)
        p.set(32, observations)
        p.set(36, valid)
        p.set(37, active)
        return UBXFrame.encode(messageClass: 0x01, id: 0x3B, payload: p.bytes)
    }

    /// TIM-SVIN, 28 bytes.
    static func timSVIN(duration: UInt32, mean: (Int32, Int32, Int32), variance: UInt32, observations: UInt32, valid: UInt8, active: UInt8)
        -> [UInt8]
    {
        var p = Payload(count: 28)
        p.set(0, duration)
        p.set(4, mean.0)
        p.set(8, mean.1)
        p.set(12, mean.2)
        p.set(16, variance)
        p.set(20, observations)
        p.set(24, valid)
        p.set(25, active)
        return UBXFrame.encode(messageClass: 0x0D, id: 0x04, payload: p.bytes)
    }

    @Test("NAV-SVIN: the mean exact to 0.1 mm, the accuracy in metres, valid and active")
    func navigation() throws {
        let frame = Self.navSVIN(
            duration: 61, mean: (402_514_012, 11_470_250, 493_000_199), fine: (-7, 42, 99), accuracy: 48_213, observations: 61,
            valid: 1, active: 0)
        let message = try #require(Self.decode(frame, NavSVIN.init))
        #expect(message.iTOW == 36_000_000)
        let progress = message.progress
        #expect(progress.duration == 61 && progress.observations == 61)
        #expect(progress.meanX == 40_251_401_193 && progress.meanY == 1_147_025_042 && progress.meanZ == 49_300_019_999)
        #expect(abs(progress.accuracy - 4.8213) < 1e-9)
        #expect(progress.isValid && !progress.isActive)
    }

    @Test("NAV-SVIN at its extremes: every field at its limits decodes without a trap")
    func navigationExtremes() throws {
        let largest = Self.navSVIN(
            duration: .max, mean: (.max, .min, .max), fine: (99, -99, .min), accuracy: .max, observations: .max, valid: 0xFF, active: 0xFF)
        let progress = try #require(Self.decode(largest, NavSVIN.init)).progress
        #expect(progress.duration == .max && progress.observations == .max)
        #expect(progress.meanX == Int64(Int32.max) * 100 + 99 && progress.meanY == Int64(Int32.min) * 100 - 99)
        #expect(progress.meanZ == Int64(Int32.max) * 100 - 128)
        #expect(progress.accuracy == Double(UInt32.max) * 1e-4)
        #expect(progress.isValid && progress.isActive)
    }

    @Test("NAV-SVIN of another version, or shorter than 40 bytes, is not read")
    func navigationRefused() {
        let frame = Self.navSVIN(duration: 1, mean: (0, 0, 0), fine: (0, 0, 0), accuracy: 0, observations: 1, valid: 0, active: 1, version: 1)
        #expect(Self.decode(frame, NavSVIN.init) == nil)
        #expect(Self.decode(UBXFrame.encode(messageClass: 0x01, id: 0x3B, payload: [UInt8](repeating: 0, count: 39)), NavSVIN.init) == nil)
    }

    @Test("TIM-SVIN: the mean in cm, the accuracy the root of the variance in mm², valid and active")
    func timing() throws {
        let frame = Self.timSVIN(duration: 300, mean: (402_514_012, -11_470_250, 493_000_199), variance: 4_000_000, observations: 290, valid: 0, active: 1)
        let progress = try #require(Self.decode(frame, TimSVIN.init)).progress
        #expect(progress.duration == 300 && progress.observations == 290)
        #expect(progress.meanX == 40_251_401_200 && progress.meanY == -1_147_025_000 && progress.meanZ == 49_300_019_900)
        #expect(abs(progress.accuracy - 2) < 1e-9)
        #expect(!progress.isValid && progress.isActive)
    }

    @Test("TIM-SVIN at its extremes decodes without a trap")
    func timingExtremes() throws {
        let frame = Self.timSVIN(duration: .max, mean: (.min, .max, .min), variance: .max, observations: .max, valid: 1, active: 1)
        let progress = try #require(Self.decode(frame, TimSVIN.init)).progress
        #expect(progress.meanX == Int64(Int32.min) * 100 && progress.meanY == Int64(Int32.max) * 100)
        #expect(abs(progress.accuracy - Double(UInt32.max).squareRoot() / 1000) < 1e-9)
        #expect(Self.decode(UBXFrame.encode(messageClass: 0x0D, id: 0x04, payload: [UInt8](repeating: 0, count: 27)), TimSVIN.init) == nil)
    }

    @Test("the UBX assembler keeps the last survey reported, from either message, and counts no unknown message for it")
    func assemblerKeepsTheSurvey() throws {
        var assembler = UBXAssembler()
        #expect(assembler.survey == nil)
        let navigation = Self.navSVIN(duration: 5, mean: (1, 2, 3), fine: (0, 0, 0), accuracy: 90_000, observations: 5, valid: 0, active: 1)
        let timing = Self.timSVIN(duration: 6, mean: (1, 2, 3), variance: 100, observations: 6, valid: 1, active: 0)
        for frame in [navigation, timing] {
            frame.withUnsafeBytes { bytes in
                if let frame = UBXFrame(validating: bytes) { assembler.add(frame) { _ in } }
            }
        }
        let survey = try #require(assembler.survey)
        #expect(survey.duration == 6 && survey.isValid && abs(survey.accuracy - 0.01) < 1e-12)
        #expect(assembler.statistics.unknownMessages == 0 && assembler.statistics.decodingErrors == 0)
    }
}
