// Measures the NMEA parser on a corpus of real sentences: the framer alone (the floor:
// line split, checksum, field offsets) and the full parse into typed values, in the same
// run, with allocations counted by the preloaded malloc interposer; then the receiver
// framer (NMEA, UBX, RTCM 3) over the same sentences, and u-blox UBX frames from gpsd's
// UBX captures through the whole stream decoder.

import Foundation
import GPSFix
import MallocInterposerSwift
import NMEA
import ReceiverFraming

struct Options {
    var sentences = 1_000_000
    var repetitions = 7
    var chunkSize = 4096
    var corpusOutput: String?
    /// Measure only the named pass (`floor`, `full`, `message`, `assemble`, `receiver`,
    /// `ubx`), for a profiler's sake.
    var only: String?
    var corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/fixtures/gpsd")
    var ubxCorpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/fixtures/gpsd-ubx")

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--sentences": sentences = Int(iterator.next() ?? "") ?? sentences
            case "--repetitions": repetitions = Int(iterator.next() ?? "") ?? repetitions
            case "--chunk": chunkSize = Int(iterator.next() ?? "") ?? chunkSize
            case "--corpus": corpus = URL(fileURLWithPath: iterator.next() ?? corpus.path)
            case "--ubx-corpus": ubxCorpus = URL(fileURLWithPath: iterator.next() ?? ubxCorpus.path)
            case "--write-corpus": corpusOutput = iterator.next()
            case "--only": only = iterator.next()
            default:
                FileHandle.standardError.write("unknown option \(argument)\n".data(using: .utf8)!)
                exit(2)
            }
        }
    }
}

/// Every sentence the lenient framer accepts in the corpus logs, repeated to `count`
/// sentences, CR LF terminated: a stream of real receivers' output.
func buildCorpus(from folder: URL, count: Int) throws -> (bytes: [UInt8], sentences: Int) {
    let logs = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".log") }.sorted()
    var unique: [[UInt8]] = []
    for log in logs {
        let data = try Data(contentsOf: folder.appendingPathComponent(log))
        let framer = NMEAFramer(configuration: .lenient)
        data.withUnsafeBytes { framer.feed($0) { unique.append(Array($0.line)) } }
        framer.finish { unique.append(Array($0.line)) }
    }
    guard !unique.isEmpty else { throw CocoaError(.fileReadNoSuchFile) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count * 72)
    for index in 0..<count {
        bytes += unique[index % unique.count]
        bytes += [13, 10]
    }
    return (bytes, count)
}

/// Every UBX frame in the UBX captures, in order, repeated to `count` frames: what
/// u-blox receivers of five generations send, NMEA and RTCM 3 left out.
func buildUBXCorpus(from folder: URL, count: Int) throws -> (bytes: [UInt8], frames: Int) {
    let logs = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".log") }.sorted()
    var unique: [[UInt8]] = []
    for log in logs {
        let data = try Data(contentsOf: folder.appendingPathComponent(log))
        let framer = ReceiverFramer()
        data.withUnsafeBytes { framer.feed($0) { if case .ubx(let frame) = $0 { unique.append(Array(frame.bytes)) } } }
    }
    guard !unique.isEmpty else { throw CocoaError(.fileReadNoSuchFile) }
    var bytes: [UInt8] = []
    for index in 0..<count { bytes += unique[index % unique.count] }
    return (bytes, count)
}

/// Feeds `corpus` to `decoder` in chunks of `chunkSize`.
func feed(_ corpus: [UInt8], to decoder: ReceiverStreamDecoder, chunkSize: Int, _ emit: (LocationUpdate) -> Void) {
    corpus.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let end = min(offset + chunkSize, buffer.count)
            decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[offset..<end]), emit)
            offset = end
        }
    }
    decoder.finish(emit)
}

/// Feeds the corpus in device-sized chunks, calling `body` for every sentence.
@inline(never)
func run(_ corpus: [UInt8], chunkSize: Int, _ body: (NMEASentence) -> Void) -> FramerStatistics {
    let framer = NMEAFramer(configuration: .lenient)
    corpus.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let end = min(offset + chunkSize, buffer.count)
            framer.feed(UnsafeRawBufferPointer(rebasing: buffer[offset..<end]), body)
            offset = end
        }
    }
    framer.finish(body)
    return framer.statistics
}

/// Reads one value out of each decoded sentence so that the decoding cannot be skipped:
/// the decoder's fast path, as the assembler uses it.
struct ChecksumHandler: NMEASentenceHandler {
    var sum = 0
    var failures = 0

    mutating func handle(_ gga: GGA, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: gga.latitude?.degreesAndMinutes.magnitude ?? 0)
    }
    mutating func handle(_ rmc: RMC, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: rmc.speedKnots?.magnitude ?? 0)
    }
    mutating func handle(_ gsa: GSA, in sentence: NMEASentence) { sum &+= gsa.satellites.count }
    mutating func handle(_ gsv: GSV, in sentence: NMEASentence) { sum &+= gsv.satellites.count }
    mutating func handle(_ vtg: VTG, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: vtg.trackTrue?.magnitude ?? 0)
    }
    mutating func handle(_ gll: GLL, in sentence: NMEASentence) { sum &+= Int(gll.time?.second ?? 0) }
    mutating func handle(_ zda: ZDA, in sentence: NMEASentence) { sum &+= zda.date?.year ?? 0 }
    mutating func handle(_ gst: GST, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: gst.rangeRMS?.magnitude ?? 0)
    }
    mutating func handle(_ gns: GNS, in sentence: NMEASentence) { sum &+= gns.satellitesUsed ?? 0 }
    mutating func handle(_ gbs: GBS, in sentence: NMEASentence) { sum &+= gbs.failedSatellite ?? 0 }
    mutating func handle(_ dtm: DTM, in sentence: NMEASentence) { sum &+= dtm.datum?.count ?? 0 }
    mutating func handle(_ txt: TXT, in sentence: NMEASentence) { sum &+= txt.text.count }
    mutating func handle(_ hdt: HDT, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: hdt.heading?.magnitude ?? 0)
    }
    mutating func handle(_ ths: THS, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: ths.heading?.magnitude ?? 0)
    }
    mutating func handle(_ pgrme: PGRME, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: pgrme.horizontalError?.magnitude ?? 0)
    }
    mutating func handle(_ pgrmz: PGRMZ, in sentence: NMEASentence) { sum &+= pgrmz.fixDimension ?? 0 }
    mutating func handle(_ pgrmf: PGRMF, in sentence: NMEASentence) { sum &+= pgrmf.fixType ?? 0 }
    mutating func handle(_ pmgnst: PMGNST, in sentence: NMEASentence) { sum &+= pmgnst.mode ?? 0 }
    mutating func handle(_ psrfepe: PSRFEPE, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: psrfepe.horizontalError?.magnitude ?? 0)
    }
    mutating func handle(_ pubx: PUBXPosition, in sentence: NMEASentence) { sum &+= pubx.satellitesUsed ?? 0 }
    mutating func handle(_ pubx: PUBXSatellites, in sentence: NMEASentence) { sum &+= pubx.count }
    mutating func handle(_ pashr: PASHRPosition, in sentence: NMEASentence) { sum &+= pashr.satellitesUsed ?? 0 }
    mutating func handle(_ pashr: PASHRSatellites, in sentence: NMEASentence) { sum &+= pashr.count }
    mutating func handle(_ psti: PSTIPosition, in sentence: NMEASentence) {
        sum &+= Int(truncatingIfNeeded: psti.altitudeMSL?.magnitude ?? 0)
    }
    mutating func handleUnknown(_ sentence: NMEASentence) { sum &+= sentence.fieldCount }
    mutating func handleFailure(_ error: NMEADecodingError, in sentence: NMEASentence) { failures += 1 }
}

/// The same value read through ``NMEAMessage``, the one-value-per-sentence API.
@inline(never)
func checksum(_ message: NMEAMessage) -> Int {
    switch message {
    case .gga(let gga): Int(truncatingIfNeeded: gga.latitude?.degreesAndMinutes.magnitude ?? 0)
    case .gsv(let gsv): gsv.satellites.count
    case .gsa(let gsa): gsa.satellites.count
    case .unknown(let sentence): sentence.fieldCount
    default: 1
    }
}

struct Measurement {
    var key: String
    var name: String
    var bestSeconds: Double
    var mallocs: Int
    var sentences: Int
    /// What a unit is: a sentence, or a UBX frame.
    var unit: String

    var sentencesPerSecond: Double { Double(sentences) / bestSeconds }
    var nanosecondsPerSentence: Double { bestSeconds * 1e9 / Double(sentences) }
}

/// One thing measured: its work over the whole corpus.
struct Pass {
    var key: String
    var name: String
    /// Sentences or frames the work goes through, and which.
    var units = 0
    var unit = "sentence"
    var work: () -> Void
}

/// Runs each pass once to warm up and once with allocations counted, then times them in
/// `repetitions` interleaved rounds (floor, full, assemble, floor, ...), so that every
/// pass sees the machine in the same state, and reports each one's fastest run.
func measure(_ passes: [Pass], repetitions: Int, sentences: Int) -> [Measurement] {
    var results = passes.map { pass -> Measurement in
        pass.work()
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
        pass.work()
        MallocInterposerSwift.unhook()
        return Measurement(
            key: pass.key, name: pass.name, bestSeconds: .infinity, mallocs: MallocInterposerSwift.getStatistics().mallocCount,
            sentences: pass.units == 0 ? sentences : pass.units, unit: pass.unit)
    }
    let clock = ContinuousClock()
    for _ in 0..<repetitions {
        for index in passes.indices {
            let elapsed = clock.measure(passes[index].work)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            results[index].bestSeconds = min(results[index].bestSeconds, seconds)
        }
    }
    return results
}

/// Whether the interposer is really counting: without LD_PRELOAD it would report 0 for anything.
func interposerIsActive() -> Bool {
    MallocInterposerSwift.reset()
    MallocInterposerSwift.hook()
    let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
    MallocInterposerSwift.unhook()
    probe.deallocate()
    return MallocInterposerSwift.getStatistics().mallocCount > 0
}

let options = Options(CommandLine.arguments)
MallocInterposerSwift.initialize()
guard interposerIsActive() else {
    print("the malloc interposer is not loaded: run through Benchmarks/run (LD_PRELOAD)")
    exit(1)
}
let (corpus, sentenceCount) = try buildCorpus(from: options.corpus, count: options.sentences)
if let path = options.corpusOutput {
    try Data(corpus).write(to: URL(fileURLWithPath: path))
    print("wrote \(sentenceCount) sentences, \(corpus.count) bytes to \(path)")
    exit(0)
}
print("NMEAMessage: \(MemoryLayout<NMEAMessage>.size) bytes (GSV \(MemoryLayout<GSV>.size), GSA \(MemoryLayout<GSA>.size), RMC \(MemoryLayout<RMC>.size), GGA \(MemoryLayout<GGA>.size))")
print("corpus: \(sentenceCount) sentences, \(corpus.count) bytes, fed in \(options.chunkSize)-byte chunks")

var sink = 0
var floorStatistics = FramerStatistics()
var fullStatistics = FramerStatistics()
var decodeErrors = 0
var cycles = 0
var receiverSentences = 0
var ubxEpochs = 0
var ubxFramesDecoded = 0
let (ubxCorpus, ubxFrames) = try buildUBXCorpus(from: options.ubxCorpus, count: options.sentences / 4)
let allPasses = [
    Pass(key: "floor", name: "floor: frame + checksum + field offsets") {
        floorStatistics = run(corpus, chunkSize: options.chunkSize) { sentence in
            sink &+= sentence.fieldCount &+ Int(sentence.line[sentence.line.count - 1])
        }
    },
    Pass(key: "full", name: "full: frame + decode into typed values") {
        var handler = ChecksumHandler()
        fullStatistics = run(corpus, chunkSize: options.chunkSize) { sentence in
            sentence.decode(into: &handler)
        }
        sink &+= handler.sum
        decodeErrors = handler.failures
    },
    Pass(key: "message", name: "message: the same into NMEAMessage values") {
        run(corpus, chunkSize: options.chunkSize) { sentence in
            sink &+= (try? NMEAMessage(decoding: sentence)).map(checksum) ?? 0
        }
    },
    Pass(key: "assemble", name: "assemble: frame + decode + fixes per cycle") {
        var fixes = 0
        feed(corpus, to: ReceiverStreamDecoder(), chunkSize: options.chunkSize) { if case .fix = $0 { fixes += 1 } }
        cycles = fixes
    },
    Pass(key: "receiver", name: "receiver: NMEA through the mixed framer") {
        let framer = ReceiverFramer()
        corpus.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let end = min(offset + options.chunkSize, buffer.count)
                framer.feed(UnsafeRawBufferPointer(rebasing: buffer[offset..<end])) { frame in
                    if case .nmea(let sentence) = frame { sink &+= sentence.fieldCount }
                }
                offset = end
            }
        }
        receiverSentences = framer.nmea.statistics.sentences
    },
    Pass(key: "ubx", name: "ubx: UBX frames + decode + fixes per epoch", units: ubxFrames, unit: "frame") {
        var fixes = 0
        let decoder = ReceiverStreamDecoder()
        feed(ubxCorpus, to: decoder, chunkSize: options.chunkSize) { if case .fix = $0 { fixes += 1 } }
        ubxEpochs = fixes
        ubxFramesDecoded = decoder.framer.binaryStatistics[UBXFrameRule.self].frames
    },
]
let passes = allPasses.filter { options.only == nil || $0.key == options.only }
let results = measure(passes, repetitions: options.repetitions, sentences: sentenceCount)
for (pass, statistics) in [("floor", floorStatistics), ("full", fullStatistics)] where passes.contains(where: { $0.key == pass }) {
    precondition(statistics.sentences == sentenceCount, "the \(pass) pass framed \(statistics.sentences) sentences")
}
if passes.contains(where: { $0.key == "receiver" }) {
    precondition(receiverSentences == sentenceCount, "the receiver framer framed \(receiverSentences) sentences")
}
if passes.contains(where: { $0.key == "ubx" }) {
    precondition(ubxFramesDecoded == ubxFrames, "the UBX pass framed \(ubxFramesDecoded) of \(ubxFrames) frames")
}

for result in results {
    print(
        result.name.padding(toLength: 42, withPad: " ", startingAt: 0),
        String(format: "%6.2f M %@s/s  %6.1f ns/%@  %d mallocs (%.6f per %@)",
            result.sentencesPerSecond / 1e6, result.unit, result.nanosecondsPerSentence, result.unit, result.mallocs,
            Double(result.mallocs) / Double(result.sentences), result.unit))
}
if let floor = results.first(where: { $0.key == "floor" }), let full = results.first(where: { $0.key == "full" }) {
    print(String(format: "full / floor time ratio: %.2f", full.bestSeconds / floor.bestSeconds))
}
print("sentences with a malformed field (counted, not fatal): \(decodeErrors)")
print("cycles assembled: \(cycles) (mallocs above include the decoder's setup and its first growth)")
print("UBX: \(ubxFrames) frames, \(ubxCorpus.count) bytes, \(ubxEpochs) epochs assembled")
print("(sink \(sink & 0xF))")
