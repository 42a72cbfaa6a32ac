import Foundation
import GPSFix
import NMEA
import TestSupport
import Testing

/// Properties that hold for any capture, not one log's quirks: how the bytes are chunked,
/// what other talkers a multiplexer puts between the receiver's sentences, and how often
/// the receiver sends its satellite sentences change no epoch's position.
@Suite("Stream properties")
struct StreamPropertyTests {
    static let logs = [
        "gpsd/bu353-glonass.log", "gpsd/ublox-zed-f9p-nmea.log", "gpsd/haicom-305N.log", "gpsd/cat-ms352.log",
        "gpsd/ch-4701.log", "gpsd/beidou-bd.log", "chartplotter.nmea",
    ]

    /// Other instruments' sentences, as a chartplotter or multiplexer interleaves them:
    /// depth, wind, water temperature, speed through water, heading, transducers, and the
    /// chartplotter's own route sentences with empty fields.
    static let otherTalkers = [
        sentence("$SDDPT,2.4,0.0"), sentence("$WIMWV,214.0,R,8.2,N,A"), sentence("$YXMTW,17.9,C"),
        sentence("$VWVHW,,T,,M,4.1,N,7.6,K"), sentence("$SDHDG,45.0,,,1.5,W"), sentence("$IIXDR,C,14.2,C,AIRTEMP"),
        sentence("$GPAPB,,,,,,,,,,,,,,"), sentence("$GPBOD,,T,,M,,"), sentence("$GPAAM,,,,,"),
    ].map { Array($0.utf8) }

    /// The position of each epoch, as the last fix with that time reports it.
    static func positions(of bytes: [UInt8], chunkSize: Int = 4096) -> [Double: [Double]] {
        var result: [Double: [Double]] = [:]
        for case .fix(let fix) in updates(ofLog: bytes, chunkSize: chunkSize) {
            guard fix.mode >= .twoDimensional, let time = fix.time, let latitude = fix.latitude, let longitude = fix.longitude
            else { continue }
            result[time.secondsSince1970] = [latitude, longitude]
        }
        return result
    }

    /// The log's lines: its header (kept whole, so its date still applies) and each line after.
    static func lines(of bytes: [UInt8]) -> (header: [UInt8], lines: [[UInt8]]) {
        let all = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Array($0) + [10] }
        let header = all.prefix { $0.first == UInt8(ascii: "#") }
        return (header.flatMap { $0 }, Array(all.dropFirst(header.count)))
    }

    @Test("chunked any way, a capture gives the same position per epoch", arguments: logs)
    func chunkings(log: String) throws {
        let bytes = try Fixtures.bytes(log)
        let expected = Self.positions(of: bytes)
        try #require(expected.count > 3)
        for size in [1, 3, 17, 100, 1000] {
            #expect(Self.positions(of: bytes, chunkSize: size) == expected, "chunks of \(size)")
        }
    }

    @Test("other talkers' sentences between the receiver's change no epoch's position", arguments: logs)
    func otherTalkersInterleaved(log: String) throws {
        let bytes = try Fixtures.bytes(log)
        let expected = Self.positions(of: bytes)
        var random = SeededGenerator(seed: 0x6D75_7820)
        let (header, lines) = Self.lines(of: bytes)
        for round in 0..<5 {
            var mixed = header
            for line in lines {
                mixed += line
                // Every line in the first round, then at random: a multiplexer's own rhythm.
                if round == 0 || Int.random(in: 0..<3, using: &random) == 0 {
                    mixed += Self.otherTalkers.randomElement(using: &random)!
                }
            }
            #expect(Self.positions(of: mixed) == expected, "round \(round)")
        }
    }

    @Test("GSV and GSA sent only every third cycle change no epoch's position", arguments: logs)
    func thinnedSatelliteSentences(log: String) throws {
        let bytes = try Fixtures.bytes(log)
        let expected = Self.positions(of: bytes)
        let (header, lines) = Self.lines(of: bytes)
        var thinned = header
        var cycle = 0
        var lastTime: Substring?
        for line in lines {
            let text = String(decoding: line, as: UTF8.self)
            let fields = text.split(separator: ",", omittingEmptySubsequences: false)
            let address = fields.first.map { $0.dropFirst() } ?? ""
            if ["GGA", "RMC", "GLL", "GNS"].contains(String(address.suffix(3))), fields.count > 1, fields[1] != lastTime {
                lastTime = address.hasSuffix("GLL") ? (fields.count > 5 ? fields[5] : nil) : fields[1]
                cycle += 1
            }
            let isSatelliteSentence = address.hasSuffix("GSV") || address.hasSuffix("GSA")
            if !isSatelliteSentence || cycle % 3 == 0 { thinned += line }
        }
        #expect(Self.positions(of: thinned) == expected)
    }
}
