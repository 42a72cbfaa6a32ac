import DriverSiRF
import ReceiverFraming
import Testing

@Suite("SiRF frame rule")
struct SiRFFrameRuleTests {
    func length(_ frame: [UInt8]) -> Int? {
        frame.withUnsafeBytes { SiRFFrameRule.frameLength(header: UnsafeRawBufferPointer(rebasing: $0[0..<4])) }
    }

    func holds(_ frame: [UInt8]) -> Bool { frame.withUnsafeBytes { SiRFFrameRule.holds($0) } }

    @Test("a captured frame: its length from the header, its checksum and trailer hold")
    func goodFrame() {
        #expect(length(bu303Navigation) == 49)
        #expect(holds(bu303Navigation))
        #expect(sirfFrame(Array(bu303Navigation[4..<45])) == bu303Navigation)
    }

    @Test("a checksum one off, or a payload byte changed, is refused")
    func badChecksum() {
        var frame = bu303Navigation
        frame[46] ^= 0x01
        #expect(!holds(frame))
        frame = bu303Navigation
        frame[10] &+= 1
        #expect(!holds(frame))
    }

    @Test("the checksum keeps 15 bits: a sum over 0x7FFF holds wrapped")
    func fifteenBitSum() {
        let frame = sirfFrame([0xFF] + Array(repeating: 0xFF, count: 200))
        #expect(frame[frame.count - 4] & 0x80 == 0)
        #expect(holds(frame))
    }

    @Test("a wrong trailer is refused")
    func wrongTrailer() {
        var frame = bu303Navigation
        frame[frame.count - 1] = 0xB2
        #expect(!holds(frame))
        frame = bu303Navigation
        frame[frame.count - 2] = 0xA0
        #expect(!holds(frame))
    }

    @Test("Skytraq's A0 A1, an empty payload, a 16-bit length and one past the maximum are not SiRF's")
    func refusedHeaders() {
        #expect(length([0xA0, 0xA1, 0x00, 0x09]) == nil)
        #expect(length([0xA0, 0xA2, 0x00, 0x00]) == nil)
        #expect(length([0xA0, 0xA2, 0x80, 0x01]) == nil)
        #expect(length([0xA0, 0xA2, 0x07, 0xF9]) == nil)
        #expect(length([0xA0, 0xA2, 0x07, 0xF8]) == SiRFFrameRule.maximumLength)
    }

    @Test("the framer hands SiRF frames out beside Skytraq's rule, which shares A0")
    func framed() {
        let framer = ReceiverFramer(
            nmea: .lenient, rules: ReceiverFramer.standardRules() + [ReceiverFramer.Rule(SiRFFrameRule.self)])
        var frames: [[UInt8]] = []
        let stream: [UInt8] = [0xA0, 0xA1, 0x00] + bu303Navigation + Array("$GPTXT,x*00\r\n".utf8) + bu303Navigation
        stream.withUnsafeBytes { bytes in
            framer.feed(bytes) { frame in
                if case .binary(let binary) = frame { frames.append(Array(binary.bytes)) }
            }
        }
        #expect(frames == [bu303Navigation, bu303Navigation])
    }
}
