// libFuzzer target: arbitrary bytes, in arbitrary chunks, through the framer, the
// sentence decoder and the fix assembler. Besides not crashing, it checks:
// - every sentence the framer hands out under the standard (checksum required) policy
//   has a checksum that matches;
// - the same bytes fed whole and in chunks give the same sentences and counters;
// - the framer's counters agree with what it handed out, account for every byte, and
//   for no more lines than the input can hold (binary frames among the sentences each end
//   one);
// - every fix has its latitude in [-90, 90] and its longitude in [-180, 180].

import FuzzSupport
import GPSFix
import NMEA
import ReceiverFraming

/// What one pass over the input produced.
struct Pass: Equatable {
    var sentences: [[UInt8]] = []
    var statistics = FramerStatistics()
    /// The receiver framer's: every byte, and the binary frames between the sentences.
    var binary = BinaryFramingStatistics()
    var updates: [LocationUpdate] = []
}

func decode(_ input: UnsafeRawBufferPointer, chunkSizes: [Int], configuration: NMEAFramer.Configuration) -> Pass {
    let decoder = ReceiverStreamDecoder(framing: configuration)
    var pass = Pass()
    decoder.onSentence = { pass.sentences.append(Array($0.line)) }
    var offset = 0
    var chunk = 0
    while offset < input.count {
        let size = chunkSizes.isEmpty ? input.count : max(1, chunkSizes[chunk % chunkSizes.count])
        let end = min(input.count, offset + size)
        decoder.feed(UnsafeRawBufferPointer(rebasing: input[offset..<end])) { pass.updates.append($0) }
        offset = end
        chunk += 1
    }
    decoder.finish { pass.updates.append($0) }
    pass.statistics = decoder.framer.nmea.statistics
    pass.binary = decoder.framer.binaryStatistics
    return pass
}

func checksumMatches(_ line: [UInt8]) -> Bool {
    guard let star = line.lastIndex(of: UInt8(ascii: "*")), star + 3 == line.count,
        let declared = UInt8(String(decoding: line[(star + 1)...], as: UTF8.self), radix: 16)
    else { return false }
    // A `$$GPGGA` line keeps its doubled start out of the checksum, like the framer.
    let body = line[1..<star].drop { $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "!") }
    return declared == body.reduce(0, ^)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNMEA(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    // The first bytes choose the chunking, the rest is the stream.
    let chunkSizes = input.prefix(4).map { Int($0 % 97) + 1 }
    let stream = UnsafeRawBufferPointer(rebasing: input.dropFirst(min(4, input.count)))

    for configuration in [NMEAFramer.Configuration.standard, .lenient] {
        let whole = decode(stream, chunkSizes: [], configuration: configuration)
        let chunked = decode(stream, chunkSizes: chunkSizes, configuration: configuration)
        precondition(whole == chunked, "chunking changed the result")
        precondition(whole.statistics.sentences == whole.sentences.count, "sentences counted \(whole.statistics.sentences), handed out \(whole.sentences.count)")
        precondition(whole.binary.bytes == stream.count, "bytes counted \(whole.binary.bytes) of \(stream.count)")
        // Every binary frame (UBX, RTCM 3) ends the text before it: one more line each.
        let lineBoundaries = stream.count { $0 == 10 || $0 == 13 || $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "!") }
            + whole.binary.frames
        precondition(whole.statistics.sentences + whole.statistics.rejected <= lineBoundaries + 1, "more lines counted than the input holds")
        if configuration.checksumPolicy == .required {
            for sentence in whole.sentences { precondition(checksumMatches(sentence), "bad checksum let through") }
        }
        for case .fix(let fix) in whole.updates {
            if let latitude = fix.latitude { precondition((-90...90).contains(latitude), "latitude \(latitude)") }
            if let longitude = fix.longitude { precondition((-180...180).contains(longitude), "longitude \(longitude)") }
        }
    }
    return 0
}

/// The entry point SwiftPM links this executable under.
@_cdecl("FuzzNMEA_main")
public func fuzzNMEAMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzNMEA(UnsafeRawPointer(data), size) }
}
