import GPSFix
import NMEA
import ReceiverFraming
import Testing

/// A frame as handed out, copied: which protocol, and its bytes.
enum Framed: Equatable {
    case nmea(String)
    case ubx([UInt8])
    case rtcm3([UInt8])
    case binary(rule: Int, [UInt8])
}

/// Frames `stream` in chunks of `chunkSize` bytes (the whole at once when 0).
func frames(of stream: [UInt8], chunkSize: Int = 0, framer: ReceiverFramer = ReceiverFramer()) -> [Framed] {
    frames(of: stream, chunkSizes: chunkSize == 0 ? [] : [chunkSize], framer: framer)
}

/// Frames `stream` in chunks of the sizes given, in turn (the whole at once when none).
func frames(of stream: [UInt8], chunkSizes: [Int], framer: ReceiverFramer = ReceiverFramer()) -> [Framed] {
    var result: [Framed] = []
    let collect: (ReceiverFrame) -> Void = { frame in
        switch frame {
        case .nmea(let sentence): result.append(.nmea(String(decoding: sentence.line, as: UTF8.self)))
        case .ubx(let message): result.append(.ubx(Array(message.bytes)))
        case .rtcm3(let message): result.append(.rtcm3(Array(message.bytes)))
        case .binary(let frame): result.append(.binary(rule: frame.rule, Array(frame.bytes)))
        }
    }
    stream.withUnsafeBytes { bytes in
        var start = 0
        var turn = 0
        while start < bytes.count {
            let size = chunkSizes.isEmpty ? bytes.count : chunkSizes[turn % chunkSizes.count]
            framer.feed(UnsafeRawBufferPointer(rebasing: bytes[start..<min(start + size, bytes.count)]), collect)
            start += size
            turn += 1
        }
    }
    framer.finish(collect)
    return result
}

/// An RTCM 3 frame around `message`, its CRC-24Q computed.
func rtcm3(_ message: [UInt8]) -> [UInt8] {
    var frame: [UInt8] = [0xD3, UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    let crc = CRC24Q.checksum(frame)
    frame += [UInt8(crc >> 16), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    return frame
}

@Suite("Receiver framer: NMEA, UBX and RTCM 3 from one port")
struct ReceiverFramerTests {
    let gga = sentence("$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    let pvt = UBXFrame.encode(messageClass: 0x01, id: 0x07, payload: [UInt8](repeating: 7, count: 92))
    let eoe = UBXFrame.encode(messageClass: 0x01, id: 0x61, payload: [1, 2, 3, 4])
    /// RTCM 1005, a base station's position (19 bytes), its message number in the first 12 bits.
    let station = rtcm3([0x3E, 0xD0] + [UInt8](repeating: 0x11, count: 17))

    var mixed: [UInt8] { Array(gga.utf8) + pvt + station + eoe + Array(gga.utf8) }
    /// The sentence as framed: without its line ending.
    var ggaLine: String { String(decoding: Array(gga.utf8.dropLast(2)), as: UTF8.self) }
    var expected: [Framed] { [.nmea(ggaLine), .ubx(pvt), .rtcm3(station), .ubx(eoe), .nmea(ggaLine)] }

    @Test("a mixed stream comes out frame by frame, in order, each counted under its protocol")
    func mixedStream() {
        let framer = ReceiverFramer()
        #expect(frames(of: mixed, framer: framer) == expected)
        #expect(framer.nmea.statistics.sentences == 2)
        #expect(framer.binaryStatistics[UBXFrameRule.self].frames == 2)
        #expect(framer.binaryStatistics[RTCM3FrameRule.self].frames == 1)
        #expect(framer.binaryStatistics.bytes == mixed.count)
        #expect(framer.binaryStatistics[UBXFrameRule.self].refused == 0 && framer.binaryStatistics[RTCM3FrameRule.self].refused == 0)
    }

    @Test("the frames do not depend on how the stream is cut into reads", arguments: [1, 2, 3, 5, 7, 64])
    func chunking(size: Int) {
        #expect(frames(of: mixed, chunkSize: size) == expected)
    }

    @Test("a frame whose checksum fails is refused, and the good frame right after it is kept", arguments: [0, 1, 5])
    func badChecksum(chunkSize: Int) {
        var broken = pvt
        broken[broken.count - 1] ^= 0x55
        let framer = ReceiverFramer()
        #expect(frames(of: broken + eoe, chunkSize: chunkSize, framer: framer) == [.ubx(eoe)])
        #expect(framer.binaryStatistics[UBXFrameRule.self].badChecksums == 1)
    }

    @Test("a frame cut short by the next frame does not take that frame with it", arguments: [0, 1, 3, 11])
    func truncatedFrame(chunkSize: Int) {
        let cut = Array(pvt.prefix(40))
        let framer = ReceiverFramer()
        // The cut frame's length swallows the next frame and the sentence; both come back.
        #expect(frames(of: cut + eoe + Array(gga.utf8), chunkSize: chunkSize, framer: framer)
            == [.ubx(eoe), .nmea(ggaLine)])
        #expect(framer.binaryStatistics[UBXFrameRule.self].badChecksums + framer.binaryStatistics[UBXFrameRule.self].truncated == 1)
    }

    @Test("a frame cut short by one byte, the next frame's sync byte read as its checksum, costs not the next frame",
          arguments: [[], [8, 32, 42, 1], [1], [67], [68], [69]])
    func cutByOneByte(chunkSizes: [Int]) {
        // TIM-TP of 60 bytes missing its last checksum byte, then NAV-TIMEGPS of 29 bytes:
        // found by the UBX fuzz target.
        let cut = Array(UBXFrame.encode(messageClass: 0x0D, id: 0x01, payload: (0..<60).map { UInt8($0 % 7 + 1) }).dropLast())
        let next = UBXFrame.encode(messageClass: 0x01, id: 0x20, payload: [UInt8](repeating: 0x1D, count: 29))
        #expect(frames(of: cut + next, chunkSizes: chunkSizes) == [.ubx(next)])
    }

    @Test("a length past the limit is refused at once, without waiting for that many bytes")
    func oversizedFrame() {
        let framer = ReceiverFramer(maximumUBXPayload: 1024)
        let header: [UInt8] = [0xB5, 0x62, 0x02, 0x15, 0x00, 0x08]  // RXM-RAWX, 2048 bytes declared
        #expect(frames(of: header + eoe, framer: framer) == [.ubx(eoe)])
        #expect(framer.binaryStatistics[UBXFrameRule.self].tooLong == 1)
    }

    @Test("stray sync bytes and an unknown class between lines cost no sentence and no frame")
    func falseStarts() {
        let noise: [UInt8] = [0xB5, 0x00, 0xD3, 0xFF, 0xB5, 0x62, 0x77, 0x01, 0xD3, 0x00, 0x00]
        let framer = ReceiverFramer()
        #expect(frames(of: noise + Array(gga.utf8) + noise + eoe, framer: framer)
            == [.nmea(ggaLine), .ubx(eoe)])
        #expect(framer.binaryStatistics[UBXFrameRule.self].impossibleHeaders + framer.binaryStatistics[RTCM3FrameRule.self].impossibleHeaders >= 4)
    }

    @Test("a header with a length its message cannot have holds nothing back: the text after it is framed at once")
    func implausibleLength() {
        let framer = ReceiverFramer()
        var framed: [Framed] = []
        // NAV-PVT is 84 or 92 bytes: 3,000 declared is noise, not a frame to wait for.
        let stream = [0xB5, 0x62, 0x01, 0x07, 0xB8, 0x0B] + Array(gga.utf8)
        stream.withUnsafeBytes { bytes in
            framer.feed(bytes) { if case .nmea(let sentence) = $0 { framed.append(.nmea(String(decoding: sentence.line, as: UTF8.self))) } }
        }
        #expect(framed == [.nmea(ggaLine)])
        #expect(framer.binaryStatistics[UBXFrameRule.self].impossibleHeaders == 1)
        #expect(UBXFrame.lengthIsPlausible(92, for: 0x0107) && UBXFrame.lengthIsPlausible(84, for: 0x0107))
        #expect(!UBXFrame.lengthIsPlausible(83, for: 0x0107) && !UBXFrame.lengthIsPlausible(157, for: 0x0107))
        #expect(UBXFrame.lengthIsPlausible(8 + 12 * 40, for: 0x0135) && !UBXFrame.lengthIsPlausible(8 + 12 * 40 + 5, for: 0x0135))
    }

    @Test("a frame left unfinished at the end is counted as truncated, and text after its start is still read")
    func unfinishedAtEnd() {
        let framer = ReceiverFramer()
        let stream = [0xB5, 0x62, 0x02, 0x15, 0x00, 0x02] + Array(gga.utf8)  // RXM-RAWX, 512 bytes declared
        #expect(frames(of: stream, framer: framer) == [.nmea(ggaLine)])
        #expect(framer.binaryStatistics[UBXFrameRule.self].truncated == 1)
    }

    @Test("an RTCM 3 frame of any message number is kept whole: the experimental 1-100 and those past 4095's range too",
          arguments: [1, 63, 100, 1000, 1301, 4000])
    func anyMessageNumber(_ number: Int) {
        let frame = rtcm3([UInt8(number >> 4), UInt8(number & 0x0F) << 4] + [UInt8](repeating: 0x5A, count: 9))
        let framer = ReceiverFramer()
        #expect(frames(of: frame + eoe + frame, framer: framer) == [.rtcm3(frame), .ubx(eoe), .rtcm3(frame)])
        #expect(framer.binaryStatistics[RTCM3FrameRule.self].frames == 2)
    }

    @Test("an RTCM 3 frame whose CRC fails is refused and counted")
    func badCRC() {
        var broken = station
        broken[5] ^= 0x01
        let framer = ReceiverFramer()
        #expect(frames(of: broken + eoe, framer: framer) == [.ubx(eoe)])
        #expect(framer.binaryStatistics[RTCM3FrameRule.self].badChecksums == 1)
    }

    @Test("a framer finds only the frames of the rules it holds: without UBX's, a UBX frame is text to it")
    func rulesRegistered() {
        let framer = ReceiverFramer(rules: [ReceiverFramer.Rule(RTCM3FrameRule.self)])
        #expect(frames(of: pvt + station + Array(gga.utf8), framer: framer) == [.rtcm3(station), .nmea(ggaLine)])
        #expect(framer.binaryStatistics[RTCM3FrameRule.self].frames == 1)
        #expect(framer.binaryStatistics[UBXFrameRule.self] == BinaryFramingStatistics.Counts())
        #expect(framer.binaryStatistics.frames == 1)
    }

    @Test("a rule's limit is the framer's choice below the protocol's own, never above it")
    func ruleLimits() {
        #expect(ReceiverFramer.Rule(UBXFrameRule.self, maximumLength: 1032).maximumLength == 1032)
        #expect(ReceiverFramer.Rule(RTCM3FrameRule.self, maximumLength: 1 << 20).maximumLength == 1029)
        #expect(ReceiverFramer.Rule(RTCM3FrameRule.self).maximumLength == RTCM3FrameRule.maximumLength)
    }

    @Test("counts add up rule by rule, whatever rules each framer holds and in whatever order")
    func statisticsAddByRule() {
        let both = ReceiverFramer()
        _ = frames(of: mixed, framer: both)
        let rtcmOnly = ReceiverFramer(rules: [ReceiverFramer.Rule(RTCM3FrameRule.self)])
        _ = frames(of: station + station, framer: rtcmOnly)
        var totals = BinaryFramingStatistics()
        totals.add(rtcmOnly.binaryStatistics)
        totals.add(both.binaryStatistics)
        #expect(totals.bytes == mixed.count + 2 * station.count)
        #expect(totals[UBXFrameRule.self].frames == 2)
        #expect(totals[RTCM3FrameRule.self].frames == 3)
        #expect(totals.frames == 5)
    }

    @Test("the NMEA framer's own refusals still count beside binary frames")
    func nmeaRefusalsStillCounted() {
        let bad = "$GPGGA,123519,4807.038,N*00\r\n"
        let framer = ReceiverFramer()
        #expect(frames(of: Array(bad.utf8) + eoe, framer: framer) == [.ubx(eoe)])
        #expect(framer.nmea.statistics[.badChecksum] == 1)
    }
}

/// Two protocols whose frames begin with the same byte, as SiRF's `A0 A2` and Skytraq's
/// `A0 A1` do: sync `A0`, a second byte naming the protocol, a length, then that many
/// bytes and a sum of them.
enum SharedSyncRule<let second: Int>: FrameRule {
    static var name: String { "shared \(second)" }
    static var sync: UInt8 { 0xA0 }
    static var headerLength: Int { 3 }
    static var maximumLength: Int { 64 }
    static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        header[1] == UInt8(second) ? Int(header[2]) + 4 : nil
    }
    static func holds(_ frame: UnsafeRawBufferPointer) -> Bool {
        frame[3..<(frame.count - 1)].reduce(0, &+) == frame[frame.count - 1]
    }
    static func frame(_ body: [UInt8]) -> [UInt8] { [0xA0, UInt8(second), UInt8(body.count)] + body + [body.reduce(0, &+)] }
}

@Suite("Receiver framer: rules whose frames begin alike")
struct SharedSyncFramingTests {
    @Test("each frame goes to the rule whose header it has, in any chunking", arguments: [0, 1, 2, 3, 5])
    func sharedFirstByte(chunkSize: Int) {
        let one = SharedSyncRule<1>.frame([1, 2, 3])
        let two = SharedSyncRule<2>.frame([4, 5])
        let framer = ReceiverFramer(rules: [.init(SharedSyncRule<1>.self), .init(SharedSyncRule<2>.self)])
        let stream = two + Array("$GPTXT,01,01,01,ANTENNA OK*35\r\n".utf8) + one + two
        #expect(
            frames(of: stream, chunkSize: chunkSize, framer: framer) == [
                .binary(rule: 1, two), .nmea("$GPTXT,01,01,01,ANTENNA OK*35"), .binary(rule: 0, one),
                .binary(rule: 1, two),
            ])
        #expect(framer.binaryStatistics[SharedSyncRule<1>.self].refused == 0)
        #expect(framer.binaryStatistics[SharedSyncRule<2>.self].refused == 0)
    }

    @Test("a header neither rule has is refused once, and the text after it read")
    func neither() {
        let framer = ReceiverFramer(rules: [.init(SharedSyncRule<1>.self), .init(SharedSyncRule<2>.self)])
        let one = SharedSyncRule<1>.frame([9])
        #expect(frames(of: [0xA0, 0x07, 0x01] + one, framer: framer) == [.binary(rule: 0, one)])
        #expect(framer.binaryStatistics.counts(ofRuleAt: 0).refused + framer.binaryStatistics.counts(ofRuleAt: 1).refused == 1)
    }
}

/// Frames as TSIP delimits them: DLE, an id, the data with each DLE in it doubled, DLE
/// ETX. No checksum: this rule takes ids 0x20-0x2F only, as a driver takes the ids it knows.
enum StuffedRule: FrameRule {
    static let name = "stuffed"
    static let sync: UInt8 = 0x10
    static let headerLength = 2
    static let maximumLength = 32
    static var stuffing: (escape: UInt8, end: UInt8)? { (0x10, 0x03) }
    /// Ids 0x20 to 0x2F, 0x22's frames 8 bytes at most.
    static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        guard (0x20...0x2F).contains(header[1]) else { return nil }
        return header[1] == 0x22 ? 8 : maximumLength
    }
    static func holds(_ frame: UnsafeRawBufferPointer) -> Bool { (0x20...0x2F).contains(frame[1]) }
}

@Suite("Receiver framer: stuffed frames (TSIP's)")
struct StuffedFramingTests {
    static let rules = ReceiverFramer.standardRules() + [ReceiverFramer.Rule(StuffedRule.self)]
    /// Id 0x21, data `01 10 03 10` (a DLE before ETX in the data, stuffed), ended.
    static let stuffed: [UInt8] = [0x10, 0x21, 0x01, 0x10, 0x10, 0x03, 0x10, 0x10, 0x10, 0x03]
    static let plain: [UInt8] = [0x10, 0x22, 0x05, 0x06, 0x10, 0x03]

    @Test("a frame ends at an unpaired DLE and ETX, not at a stuffed DLE's, in any chunking", arguments: [0, 1, 2, 3, 7])
    func frames(chunkSize: Int) {
        let framer = ReceiverFramer(rules: Self.rules)
        let stream = Self.stuffed + Array("$GPTXT,01,01,01,ANTENNA OK*35\r\n".utf8) + Self.plain + Self.plain
        #expect(
            GPSFixTests.frames(of: stream, chunkSize: chunkSize, framer: framer) == [
                .binary(rule: 2, Self.stuffed), .nmea("$GPTXT,01,01,01,ANTENNA OK*35"), .binary(rule: 2, Self.plain),
                .binary(rule: 2, Self.plain),
            ])
    }

    @Test("a frame cut short is refused at the next frame's DLE, and that frame kept", arguments: [0, 1, 4])
    func truncated(chunkSize: Int) {
        let framer = ReceiverFramer(rules: Self.rules)
        let stream = Array(Self.stuffed.prefix(5)) + Self.plain
        #expect(GPSFixTests.frames(of: stream, chunkSize: chunkSize, framer: framer).contains(.binary(rule: 2, Self.plain)))
        #expect(framer.binaryStatistics[StuffedRule.self].refused >= 1)
    }

    @Test("an id the rule does not take is refused at once; an endless frame is refused at its id's limit, or the rule's")
    func refusals() {
        let framer = ReceiverFramer(rules: Self.rules)
        #expect(GPSFixTests.frames(of: [0x10, 0x40, 0x01, 0x10, 0x03] + Self.plain, framer: framer) == [.binary(rule: 2, Self.plain)])
        // 0x40, then the DLE ETX that would have ended it.
        #expect(framer.binaryStatistics[StuffedRule.self].impossibleHeaders == 2)
        let endless = [0x10, 0x21] + [UInt8](repeating: 0x41, count: 40) + Self.plain
        #expect(GPSFixTests.frames(of: endless, framer: framer).contains(.binary(rule: 2, Self.plain)))
        #expect(framer.binaryStatistics[StuffedRule.self].tooLong == 1)
        // Text after a false 0x22 is handed on after 8 bytes, 0x22's most, not the rule's 32.
        let text = Array("$GPTXT,01,01,01,ANTENNA OK*35\r\n".utf8)
        var sentences: [String] = []
        ([0x10, 0x22] + text).withUnsafeBytes { bytes in
            framer.feed(bytes) { if case .nmea(let sentence) = $0 { sentences.append(String(decoding: sentence.line, as: UTF8.self)) } }
        }
        #expect(sentences == ["$GPTXT,01,01,01,ANTENNA OK*35"], "handed on before the stream ends")
        #expect(framer.binaryStatistics[StuffedRule.self].tooLong == 2)
    }
}
