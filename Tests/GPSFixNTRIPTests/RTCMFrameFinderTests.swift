import Foundation
import GPSFixNTRIP
import ReceiverFraming
import TestSupport
import Testing

@Suite("RTCM 3 frames")
struct RTCMFrameFinderTests {
    /// Frames found in `bytes` fed in pieces of the given sizes (cycled).
    static func frames(in bytes: [UInt8], pieces: [Int]) -> ([RTCMFrame], RTCMFrameFinder.Statistics) {
        var finder = RTCMFrameFinder()
        var frames: [RTCMFrame] = []
        var offset = 0, piece = 0
        while offset < bytes.count {
            let size = min(pieces[piece % pieces.count], bytes.count - offset)
            finder.feed(bytes[offset..<(offset + size)]) { frames.append($0) }
            offset += size
            piece += 1
        }
        return (frames, finder.statistics)
    }

    @Test(
        "every frame of a real stream is found whole, in order, however the stream is cut",
        arguments: [("rtcm3.2.log", 192), ("rtcm3.bndm.log", 100)])
    func realStreams(name: String, documentedFrames: Int) throws {
        let payload = try RecordedRTCM.payload(of: name)
        let (whole, statistics) = Self.frames(in: payload, pieces: [payload.count])
        // The count the fixtures' README gives, found by another program.
        #expect(whole.count == documentedFrames)
        #expect(statistics.badCRC == 0)
        #expect(whole.flatMap(\.bytes).count + statistics.bytesSkipped == payload.count)
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<20 {
            let pieces = (0..<8).map { _ in Int.random(in: 1...700, using: &generator) }
            #expect(Self.frames(in: payload, pieces: pieces).0 == whole)
        }
        #expect(Self.frames(in: payload, pieces: [1]).0 == whole)
    }

    @Test("garbage between frames is skipped and counted; the frames are still found")
    func garbageBetweenFrames() throws {
        let frames = Self.frames(in: try RecordedRTCM.payload(of: "rtcm3.bndm.log"), pieces: [4096]).0
        // A caster's banner, noise with false preambles, and a truncated frame.
        let junk: [[UInt8]] = [Array("ICY 200 OK\r\n".utf8), [0xD3, 0x00, 0x05, 1, 2], [0xD3, 0xFF, 0x00], frames[3].bytes.dropLast(2)]
        var stream: [UInt8] = []
        for (index, frame) in frames.enumerated() { stream += junk[index % junk.count] + frame.bytes }
        let (found, statistics) = Self.frames(in: stream, pieces: [13, 64, 1])
        #expect(found == frames)
        #expect(statistics.bytesSkipped == stream.count - frames.flatMap(\.bytes).count)
        #expect(statistics.badCRC > 0)
    }

    @Test("a frame with one bit flipped is dropped and counted; its neighbours are kept")
    func corruptedFrame() throws {
        let frames = Self.frames(in: try RecordedRTCM.payload(of: "rtcm3.2.log"), pieces: [4096]).0
        var stream = frames.prefix(10).flatMap(\.bytes)
        let fifth = frames.prefix(4).flatMap(\.bytes).count
        stream[fifth + 20] ^= 0x10
        let (found, statistics) = Self.frames(in: stream, pieces: [100])
        #expect(found == Array(frames.prefix(4)) + Array(frames[5..<10]))
        #expect(statistics.badCRC >= 1)
    }

    @Test("message types are the first 12 bits: the capture's MSM7 and ephemerides")
    func messageTypes() throws {
        let types = Set(Self.frames(in: try RecordedRTCM.payload(of: "rtcm3.2.log"), pieces: [4096]).0.map(\.messageType))
        #expect(types.isSuperset(of: [1077, 1087, 1097, 1019, 1020, 1033]))
        #expect(types.allSatisfy { $0 < 4096 })
    }

    @Test("CRC-24Q of the standard check string")
    func crcCheckValue() {
        // CRC-24Q's check value for "123456789" (the catalogue of parametrised CRCs).
        #expect(CRC24Q.checksum(Array("123456789".utf8)) == 0xCDE703)
    }
}
