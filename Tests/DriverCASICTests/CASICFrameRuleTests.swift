import DriverCASIC
import GPSFix
import ReceiverFraming
import Testing

@Suite("CASIC frames")
struct CASICFrameRuleTests {
    /// A NAV-TIMEUTC frame as the L76K sends it (from `quectel-l76k-binary.log`):
    /// 2026-08-06 07:18:04.000, every validity bit set.
    static let timeFrame: [UInt8] = [
        0xBA, 0xCE, 0x18, 0x00, 0x01, 0x10, 0x08, 0x5C, 0x03, 0x11, 0xCA, 0xEA, 0xCC, 0x40, 0x00, 0x35, 0x09, 0xB6,
        0x00, 0x00, 0xEA, 0x07, 0x08, 0x06, 0x07, 0x12, 0x04, 0x07, 0x00, 0x03, 0xF6, 0x88, 0xCB, 0x34,
    ]

    func frames(_ bytes: [UInt8]) -> (frames: [[UInt8]], refused: Int) {
        let framer = ReceiverFramer(rules: ReceiverFramer.standardRules() + [ReceiverFramer.Rule(CASICFrameRule.self)])
        var found: [[UInt8]] = []
        bytes.withUnsafeBytes { chunk in
            framer.feed(chunk) { if case .binary(let frame) = $0 { found.append(Array(frame.bytes)) } }
        }
        return (found, framer.binaryStatistics[CASICFrameRule.self].refused)
    }

    @Test("a frame from the L76K holds, its checksum id before class")
    func receiversFrame() {
        let result = frames(Self.timeFrame)
        #expect(result.frames == [Self.timeFrame])
        #expect(result.refused == 0)
    }

    @Test("a frame built by the rule is found, beside NMEA text")
    func builtFrame() {
        let frame = CASICFrameRule.frame(class: 0x01, id: 0x00, payload: [1, 2, 3, 4, 5, 6, 7, 8])
        let result = frames(Array("$GPTXT,01,01,01,ANTENNA OK*35\r\n".utf8) + frame)
        #expect(result.frames == [frame])
    }

    @Test("a bad checksum, or the specification's class-before-id checksum, is refused")
    func badChecksum() {
        var corrupted = Self.timeFrame
        corrupted[20] ^= 0x01
        #expect(frames(corrupted).frames.isEmpty)
        #expect(frames(corrupted).refused == 1)
        // The sum with class and id the other way round, as the English specification writes it.
        var swapped = Self.timeFrame
        let sum = swapped.withUnsafeBytes {
            CASICFrameRule.checksum(class: 0x10, id: 0x01, payload: UnsafeRawBufferPointer(rebasing: $0[6..<30]))
        }
        swapped.replaceSubrange(30..<34, with: withUnsafeBytes(of: sum.littleEndian) { Array($0) })
        #expect(frames(swapped).frames.isEmpty)
    }

    @Test("a length that is not whole words, or past the limit, is no frame")
    func impossibleLengths() {
        #expect(frames([0xBA, 0xCE, 0x03, 0x00, 0x01, 0x10, 1, 2, 3, 0, 0, 0, 0]).frames.isEmpty)
        #expect(frames([0xBA, 0xCE, 0x04, 0x10, 0x01, 0x10] + [UInt8](repeating: 0, count: 40)).frames.isEmpty)
    }
}

@Suite("CASIC from a receiver that lies")
struct CASICHostileInputTests {
    @Test("satellite lists repeated within one epoch add no more than three systems' worth")
    func repeatedLists() throws {
        // NAV-GPSINFO of one epoch (runTime 1000) listing 20 satellites, sent 40 times, then
        // a message of the next epoch (runTime 2000) closing it.
        var list: [UInt8] = [0xE8, 0x03, 0x00, 0x00, 20, 20, 0, 0]
        for svid in 1...20 { list += [0, UInt8(svid), 1, 7, 40, 45, 0x5A, 0x00, 0, 0, 0, 0] }
        let info = CASICFrameRule.frame(class: 0x01, id: 0x20, payload: list)
        let next = CASICFrameRule.frame(class: 0x01, id: 0x00, payload: [0xD0, 0x07, 0, 0] + [UInt8](repeating: 0, count: 76))
        let assembler = CASICAssembler(AssemblyContext())
        var views: [SkyView] = []
        for frame in Array(repeating: info, count: 40) + [next] {
            frame.withUnsafeBytes { assembler.add($0) { if case .sky(let sky) = $0, !sky.satellites.isEmpty { views.append(sky) } } }
        }
        let view = try #require(views.first)
        #expect(view.satellites.count == CASICAssembler.maximumSatellites)
    }
}
