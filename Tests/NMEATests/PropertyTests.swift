import Foundation
import NMEA
import TestSupport
import Testing

@Suite("Properties")
struct PropertyTests {
    static let logs = [
        "gpsd/bu353-glonass.log", "gpsd/ublox-zed-f9p-nmea.log", "gpsd/gp-320fw-2019-04-07-coldboot.log",
        "gpsd/beidou-bd.log", "gpsd/tomtom-mkII.log",
    ]

    @Test("any chunking of a log yields the same sentences and counters as feeding it whole", arguments: logs)
    func chunkingDoesNotMatter(log: String) throws {
        let bytes = try Fixtures.bytes(log)
        let whole = NMEAFramer(configuration: .lenient)
        let expected = frame(bytes, with: whole)
        // Every sentence counted was handed out, and the log has some.
        #expect(expected.count == whole.statistics.sentences)
        try #require(expected.count > 50)
        var random = SeededGenerator(seed: 0x6E6D_6561)
        for round in 0..<40 {
            let sizes = round == 0 ? [1] : (0..<16).map { _ in Int.random(in: 1...(round < 20 ? 8 : 300), using: &random) }
            let chunked = NMEAFramer(configuration: .lenient)
            #expect(frame(bytes, chunks: sizes, with: chunked) == expected, "chunk sizes \(sizes)")
            #expect(chunked.statistics == whole.statistics)
        }
    }

    @Test("random bytes never crash the framer or the decoder, and every sentence out has a valid checksum")
    func randomBytes() throws {
        var random = SeededGenerator(seed: 42)
        let alphabet = Array("$!,*.\r\n0123456789ABCDEFGPNSWEMK-".utf8)
        var sentences = 0
        for round in 0..<300 {
            let count = Int.random(in: 1...4000, using: &random)
            let bytes: [UInt8] = (0..<count).map { _ in
                round % 2 == 0 ? UInt8.random(in: 0...255, using: &random) : alphabet.randomElement(using: &random)!
            }
            let input = String(decoding: bytes, as: UTF8.self)
            var accepted: [NMEAFramer.ChecksumPolicy: [String]] = [:]
            for policy in [NMEAFramer.ChecksumPolicy.required, .optional] {
                let framer = NMEAFramer(configuration: .init(maximumLength: 120, checksumPolicy: policy))
                frameEach(bytes, framer) { sentence in
                    let text = sentence.text
                    accepted[policy, default: []].append(text)
                    #expect(input.contains(text), "a sentence that is not in the input: \(text)")
                    if policy == .required || text.contains("*") { #expect(hasValidChecksum(text), "\(text)") }
                    _ = try? NMEAMessage(decoding: sentence)
                }
                #expect(framer.statistics.sentences == accepted[policy, default: []].count)
            }
            // Requiring checksums only ever refuses more.
            let required = accepted[.required, default: []], optional = accepted[.optional, default: []]
            #expect(required.allSatisfy(optional.contains), "round \(round)")
            sentences += optional.count
        }
        try #require(sentences > 0, "the random streams should produce some sentences to check")
    }

    @Test("a real sentence with one bit flipped is refused for its checksum, always")
    func mutatedSentences() throws {
        let bytes = try Fixtures.bytes("gpsd/bu353-glonass.log")
        let lines = frame(bytes).filter { $0.contains("*") }
        try #require(lines.count > 100)
        var random = SeededGenerator(seed: 7)
        for line in lines {
            var mutated = Array(line.utf8)
            // A flip inside the checksummed body that leaves a printable character which
            // does not frame (no start, no `*`, no line end): the XOR checksum always
            // catches a single flipped bit there.
            let bodyEnd = mutated.lastIndex(of: UInt8(ascii: "*"))!
            var position = 0, flipped: UInt8 = 0
            repeat {
                position = Int.random(in: 1..<bodyEnd, using: &random)
                flipped = mutated[position] ^ UInt8(1 << Int.random(in: 0...6, using: &random))
            } while !(0x20...0x7E).contains(flipped) || "$!*".utf8.contains(flipped)
            mutated[position] = flipped
            let framer = NMEAFramer()
            #expect(frame(mutated + [13, 10], with: framer).isEmpty, "\(String(decoding: mutated, as: UTF8.self))")
            #expect(framer.statistics.sentences == 0)
            #expect(framer.statistics[.badChecksum] == 1 && framer.statistics.rejected == 1)
        }
    }

    @Test("exact decimals print back to the digits they came from")
    func decimalsRoundTrip() {
        var random = SeededGenerator(seed: 1)
        for _ in 0..<5000 {
            let integerDigits = Int.random(in: 1...9, using: &random)
            let fractionDigits = Int.random(in: 0...9, using: &random)
            var text = Bool.random(using: &random) ? "-" : ""
            text += String(Int.random(in: 1...9, using: &random))
            text += (1..<integerDigits).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            if fractionDigits > 0 {
                text += "." + (0..<fractionDigits).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            }
            let decimal = NMEADecimal(text)
            #expect(decimal.description == text)
            #expect(abs(decimal.doubleValue - Double(text)!) <= abs(Double(text)!) * 1e-15)
        }
        #expect(NMEADecimal("0.050").description == "0.050")
        #expect(NMEADecimal("-0.0").description == "-0.0")
        #expect(NMEADecimal("12.345").scaled(to: 2) == 1235)
        #expect(NMEADecimal("-12.345").scaled(to: 4) == -123450)
    }

    @Test("text that is not a decimal is refused", arguments: ["", "-", ".", "1.2.3", "1e5", "12a", "1234567890123456789"])
    func notDecimals(text: String) {
        var text = text
        #expect(text.withUTF8 { NMEADecimal(parsing: UnsafeRawBufferPointer($0)) } == nil)
    }
}

@Suite("gpsd corpus")
struct CorpusTests {
    @Test("every sentence gpsd accepted in its regression captures is framed and checksum-valid here",
          .enabled(if: Fixtures.corpusTestsEnabled, "gpsd's corpus is not at ../shared/fixtures/gpsd"))
    func everyAcceptedLineFrames() throws {
        let logs = Fixtures.corpusLogs
        try #require(!logs.isEmpty, "gpsd's corpus is missing in CI: \(Fixtures.gpsdCorpus.path)")
        var checked = 0
        for log in logs {
            let check = try String(contentsOf: log.appendingPathExtension("chk"), encoding: .isoLatin1)
            let accepted = check.split(whereSeparator: \.isNewline).map(String.init)
                .filter { $0.hasPrefix("$") || $0.hasPrefix("!") }
            let framer = NMEAFramer(configuration: .lenient)
            let framed = Set(frame(withoutDelayCookies(Array(try Data(contentsOf: log))), with: framer))
            for line in accepted {
                #expect(framed.contains(line), "\(log.lastPathComponent): \(line)")
                if line.contains("*") { #expect(hasValidChecksum(line), "\(line)") }
            }
            checked += accepted.count
        }
        #expect(checked > 10_000)
        print("checked \(checked) sentences from \(logs.count) captures")
    }
}

/// gpsfake's `# Delay-Cookie: C S` header marks write boundaries with the character C,
/// which gpsfake removes before writing; do the same.
func withoutDelayCookies(_ bytes: [UInt8]) -> [UInt8] {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let header = text.split(separator: "\n").first(where: { $0.hasPrefix("# Delay-Cookie:") }),
        let cookie = header.dropFirst("# Delay-Cookie:".count).trimmingCharacters(in: .whitespaces).utf8.first
    else { return bytes }
    return bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
        line.first == UInt8(ascii: "#") ? Array(line) : line.filter { $0 != cookie }
    }.joined(separator: [UInt8(ascii: "\n")]).map { $0 }
}
