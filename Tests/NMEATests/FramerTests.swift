import Foundation
import NMEA
import Testing

@Suite("Framer")
struct FramerTests {
    let gga = "$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A"
    let rmc = "$GNRMC,081412.000,A,5541.1956,N,03737.2877,E,0.52,301.26,260514,,,A*7F"

    @Test("every valid sentence of a capture is framed, in order, and nothing else")
    func framesACapture() throws {
        let bytes = try Fixtures.bytes("gpsd/bu353-glonass.log")
        let expected = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map(String.init).filter { $0.hasPrefix("$") && hasValidChecksum($0) }
        let framer = NMEAFramer()
        let lines = frame(bytes, with: framer)
        #expect(lines == expected)
        #expect(framer.statistics.sentences == lines.count)
        #expect(framer.statistics[.garbage] == 9)  // the nine `#` header lines
    }

    @Test("CR LF, LF and CR line endings frame the same", arguments: ["\r\n", "\n", "\r"])
    func lineEndings(ending: String) {
        let text = gga + ending + rmc + ending
        #expect(frame(Array(text.utf8)) == [gga, rmc])
    }

    @Test("a last sentence without a line ending is framed at the end of input")
    func lastLineWithoutNewline() {
        let framer = NMEAFramer()
        var lines: [String] = []
        Array((gga + "\r\n" + rmc).utf8).withUnsafeBytes { framer.feed($0) { lines.append($0.text) } }
        #expect(lines == [gga])
        framer.finish { lines.append($0.text) }
        #expect(lines == [gga, rmc])
    }

    @Test("lower-case checksum digits are accepted")
    func lowerCaseChecksum() {
        let lower = "$GPZDA,081411.000,26,05,2014,,*5d"
        #expect(frame(Array((lower + "\r\n").utf8)) == [lower])
    }

    @Test("a wrong checksum is refused and counted; the next sentence still frames")
    func badChecksum() {
        let framer = NMEAFramer()
        let corrupted = gga.replacingOccurrences(of: "*6A", with: "*6B")
        #expect(frame(Array((corrupted + "\r\n" + rmc + "\r\n").utf8), with: framer) == [rmc])
        #expect(framer.statistics[.badChecksum] == 1)
        #expect(framer.statistics.rejected == 1)
    }

    @Test("a checksum that is not two hex digits is malformed")
    func malformedChecksum() {
        let framer = NMEAFramer()
        let lines = ["$GPZDA,081411.000,26,05,2014,,*5", "$GPZDA,081411.000,26,05,2014,,*5DX", "$GPZDA,1*G1"]
        #expect(frame(Array(lines.joined(separator: "\n").utf8), with: framer).isEmpty)
        #expect(framer.statistics[.malformedChecksum] == 3)
    }

    @Test("a sentence without checksum is refused by default and accepted when the policy allows it")
    func missingChecksum() {
        let text = Array("$STI,IC,error=4\r\n".utf8)
        let strict = NMEAFramer()
        #expect(frame(text, with: strict).isEmpty)
        #expect(strict.statistics[.missingChecksum] == 1)
        let lenient = NMEAFramer(configuration: .init(maximumLength: 82, checksumPolicy: .optional))
        #expect(frame(text, with: lenient) == ["$STI,IC,error=4"])
    }

    @Test("a high-precision GGA over 82 bytes is refused at the standard limit, accepted at a higher one")
    func maximumLength() throws {
        let long = "$GPGGA,113938.50,3842.86006889,N,11705.43645510,W,2,09,1.5,1864.182,M,-44.296,M,1.4,0000*45"
        #expect(long.utf8.count + 2 > 82)
        let standard = NMEAFramer()
        #expect(frame(Array((long + "\r\n" + gga + "\r\n").utf8), with: standard) == [gga])
        #expect(standard.statistics[.tooLong] == 1)
        let wide = NMEAFramer(configuration: .init(maximumLength: 128))
        #expect(frame(Array((long + "\r\n").utf8), with: wide) == [long])
    }

    @Test("a sentence exactly at the limit is accepted, one byte more is not")
    func limitIsExact() {
        let body = "$GPTXT,01,01,02," + String(repeating: "A", count: 60)
        let sentence = withChecksum(body)
        let exact = NMEAFramer(configuration: .init(maximumLength: sentence.utf8.count + 2))
        #expect(frame(Array((sentence + "\r\n").utf8), chunks: [1], with: exact) == [sentence])
        let short = NMEAFramer(configuration: .init(maximumLength: sentence.utf8.count + 1))
        #expect(frame(Array((sentence + "\r\n").utf8), chunks: [7], with: short).isEmpty)
        #expect(short.statistics[.tooLong] == 1)
    }

    @Test("an endless line without newline is bounded: refused once, then the stream resumes")
    func oversizedLineIsBounded() {
        let framer = NMEAFramer()
        var bytes = Array("$GPGGA,".utf8) + [UInt8](repeating: UInt8(ascii: "1"), count: 1_000_000)
        bytes += Array(("\r\n" + gga + "\r\n").utf8)
        #expect(frame(bytes, chunks: [4096], with: framer) == [gga])
        #expect(framer.statistics[.tooLong] == 1)
    }

    @Test("NUL bytes and binary noise between sentences are skipped and counted")
    func binaryGarbage() {
        let framer = NMEAFramer()
        let bytes = [0, 0, 0xFF, 0x13, 0x0A] + Array((gga + "\r\n").utf8) + [0xB5, 0x62, 0x01, 0x07]
            + Array((rmc + "\r\n").utf8)
        #expect(frame(bytes, with: framer) == [gga, rmc])
        #expect(framer.statistics[.garbage] == 1)
        #expect(framer.statistics.discardedBytes == 8)
    }

    @Test("a NUL inside a sentence refuses that sentence only")
    func invalidCharacter() throws {
        let framer = NMEAFramer()
        let broken = Array("$GPGGA,0814\u{0}12.000,5541.1956,N*00\r\n".utf8) + Array((rmc + "\r\n").utf8)
        #expect(frame(broken, with: framer) == [rmc])
        #expect(framer.statistics[.invalidCharacter] == 1)
    }

    @Test("`$$` before a sentence and a stray byte before `$` do not lose the sentence")
    func strayStartBytes() throws {
        let framer = NMEAFramer()
        #expect(frame(Array(("$" + gga + "\r\n r" + rmc + "\r\n").utf8), with: framer) == [gga, rmc])
        #expect(framer.statistics.rejected == 0)
        #expect(framer.statistics.discardedBytes == 3)
        let tomtom = try Fixtures.bytes("gpsd/tomtom-mkII.log")
        #expect(frame(tomtom).contains("$GPRMC,175804,V,5125.8697,N,00524.2288,E,0.0000,0.000,200610,,*30"))
        let beidou = try Fixtures.bytes("gpsd/beidou-bd.log")
        #expect(frame(beidou).contains("$GNRMC,074157.799,A,3114.8902,N,12135.2443,E,0.32,4.94,250215,,,A*7F"))
    }

    @Test("a sentence cut short by the next one is counted as truncated")
    func truncated() {
        let framer = NMEAFramer()
        #expect(frame(Array(("$GPGGA,0814" + rmc + "\r\n").utf8), with: framer) == [rmc])
        #expect(framer.statistics[.truncated] == 1)
    }

    @Test("AIS sentences start with `!`")
    func encapsulated() {
        let ais = "!AIVDM,1,1,,A,13aEOK?P00PD2wVMdLDRhgvL289?,0*26"
        #expect(frame(Array((ais + "\r\n").utf8)) == [ais])
    }

    @Test("an address shorter than two characters is refused")
    func badAddress() {
        let framer = NMEAFramer()
        #expect(frame(Array((withChecksum("$G,1,2") + "\r\n").utf8), with: framer).isEmpty)
        #expect(framer.statistics[.badAddress] == 1)
    }

    @Test("every record is either a sentence or one rejection")
    func recordsAddUp() throws {
        let bytes = try Fixtures.bytes("gpsd/gp-320fw-2019-04-07-coldboot.log")
        let framer = NMEAFramer(configuration: .lenient)
        _ = frame(bytes, with: framer)
        #expect(framer.statistics.sentences + framer.statistics.rejected == recordCount(bytes))
        #expect(framer.statistics[.invalidCharacter] > 0)
    }

    /// Counted independently of the framer: each `$` or `!` not followed by another starts a
    /// record, and a non-empty line with neither is one record of garbage.
    func recordCount(_ bytes: [UInt8]) -> Int {
        let starts: Set<UInt8> = [UInt8(ascii: "$"), UInt8(ascii: "!")]
        return bytes.split(whereSeparator: { $0 == 10 || $0 == 13 }).reduce(0) { count, line in
            let line = Array(line)
            let records = line.indices.filter { starts.contains(line[$0]) && !(line.indices.contains($0 + 1) && starts.contains(line[$0 + 1])) }.count
            return count + (records > 0 ? records : 1)
        }
    }
}
