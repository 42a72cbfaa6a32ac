import DriverSkytraq
import GPSFix
import ReceiverFraming
import Testing

@Suite("Skytraq frames")
struct SkytraqFrameRuleTests {
    /// The frames and refusals a framer with the standard rules and Skytraq's finds in `bytes`.
    func frames(_ bytes: [UInt8]) -> (frames: [[UInt8]], refused: BinaryFramingStatistics.Counts) {
        let rules = ReceiverFramer.standardRules() + [ReceiverFramer.Rule(SkytraqFrameRule.self)]
        let framer = ReceiverFramer(rules: rules)
        var found: [[UInt8]] = []
        bytes.withUnsafeBytes { chunk in
            framer.feed(chunk) { if case .binary(let frame) = $0 { found.append(Array(frame.bytes)) } }
        }
        return (found, framer.binaryStatistics[SkytraqFrameRule.self])
    }

    @Test("the receiver's frames hold, back to back, and rebuilding one from its payload gives its bytes")
    func receiversFrames() {
        let stream = SkytraqFrames.channelStatus + SkytraqFrames.navigationStatus
        let result = frames(stream)
        #expect(result.frames == [SkytraqFrames.channelStatus, SkytraqFrames.navigationStatus])
        #expect(result.refused.refused == 0)
        #expect(SkytraqFrameRule.frame(payload: SkytraqFrames.payload(of: SkytraqFrames.navigationStatus))
            == SkytraqFrames.navigationStatus)
    }

    @Test("a wrong XOR is refused as a bad checksum")
    func badChecksum() {
        var frame = SkytraqFrames.navigationStatus
        frame[frame.count - 3] ^= 0x01
        let result = frames(frame)
        #expect(result.frames.isEmpty)
        #expect(result.refused.badChecksums == 1)
        frame.withUnsafeBytes { #expect(!SkytraqFrameRule.holds($0)) }
    }

    @Test("a frame without its 0D 0A trailer does not hold")
    func badTrailer() {
        var frame = SkytraqFrames.channelStatus
        frame[frame.count - 1] = 0x00
        frame.withUnsafeBytes { #expect(!SkytraqFrameRule.holds($0)) }
        #expect(frames(frame).frames.isEmpty)
        SkytraqFrames.channelStatus.withUnsafeBytes { #expect(SkytraqFrameRule.holds($0)) }
    }

    @Test("a SiRF header (A0 A2), an empty payload and an overlong one have no Skytraq length")
    func foreignHeaders() {
        let headers: [[UInt8]] = [[0xA0, 0xA2, 0x00, 0x29], [0xA0, 0xA1, 0x00, 0x00], [0xA0, 0xA1, 0x08, 0x01]]
        for header in headers {
            header.withUnsafeBytes { #expect(SkytraqFrameRule.frameLength(header: $0) == nil) }
        }
        [UInt8]([0xA0, 0xA1, 0x00, 0x51]).withUnsafeBytes { #expect(SkytraqFrameRule.frameLength(header: $0) == 88) }
    }
}
