import ArgumentParser
import Foundation
import GPSDProtocol
import GPSFix
import GPSFixDevices
import NMEA

/// `gpsfix decode`: NMEA logs in, one gpsd JSON report per line out.
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode NMEA 0183 logs into gpsd JSON reports, one per line.",
        discussion: """
            For every receiver cycle it writes a TPV, then a SKY when satellites or DOPs are \
            known, then a GST when the receiver sent one: what gpsfixd sends a watcher. \
            Logs may carry gpsfake's header (# Date:, # Delay-Cookie:). Reads standard \
            input when no file is given.
            """
    )

    @Argument(help: "NMEA logs to decode (standard input when none).")
    var files: [String] = []

    @Flag(help: "Print the framer's and the assembler's counters to standard error at the end.")
    var stats = false

    @Option(help: "The longest sentence accepted, in bytes on the wire (CR LF included): 8 to 4096.")
    var maxLength = NMEAFramer.Configuration.lenient.maximumLength

    @Flag(help: "Refuse sentences without a checksum (accepted by default, as gpsd does).")
    var requireChecksum = false

    @Option(help: "A device name to put in every report, as gpsfixd does.")
    var device: String?

    func validate() throws {
        guard (8...4096).contains(maxLength) else {
            throw ValidationError("--max-length \(maxLength) is out of range: give 8 to 4096 bytes")
        }
    }

    func run() throws {
        var output = ReportWriter()
        var framerTotals = FramerStatistics()
        var assemblerTotals = FixAssembler.Statistics()
        var sentenceTypes: [String: Int] = [:]
        let inputs: [String?] = files.isEmpty ? [nil] : files
        for input in inputs {
            // Streamed in 1 MiB blocks: a log of any size decodes in bounded memory. The
            // header comes first; the decoder is set up by it before the first payload byte.
            var splitter = CaptureLog.Splitter()
            var decoder: NMEAStreamDecoder?
            let framing = NMEAFramer.Configuration(maximumLength: maxLength, checksumPolicy: requireChecksum ? .required : .optional)
            let emit: (LocationUpdate) -> Void = { update in output.write(update, device: device) }
            // The decoder, made by the header read so far when first needed.
            func active(_ header: [(key: String, value: String)]) -> NMEAStreamDecoder {
                if let decoder { return decoder }
                let made = NMEAStreamDecoder(referenceDate: CaptureLog.referenceDate(in: header), framing: framing)
                decoder = made
                return made
            }
            try FileSource(path: input ?? "/dev/stdin").read { block in
                splitter.split(block) { run, header in active(header).feed(run, emit) }
            }
            splitter.finish()
            let finished = active(splitter.header)
            finished.finish(emit)
            framerTotals.add(finished.framer.statistics)
            assemblerTotals.cycles += finished.assembler.statistics.cycles
            assemblerTotals.decodingErrors += finished.assembler.statistics.decodingErrors
            assemblerTotals.unknownSentences += finished.assembler.statistics.unknownSentences
            sentenceTypes.merge(finished.assembler.sentenceCountsByType, uniquingKeysWith: +)
        }
        output.flush()
        if stats { printStatistics(framerTotals, assemblerTotals, sentenceTypes) }
    }

    private func printStatistics(_ framer: FramerStatistics, _ assembler: FixAssembler.Statistics, _ types: [String: Int]) {
        var lines = [
            "bytes \(framer.bytes)", "sentences \(framer.sentences)", "discarded-bytes \(framer.discardedBytes)",
        ]
        lines += FramerRejection.allCases.map { "rejected \($0) \(framer[$0])" }
        lines += types.sorted { $0.key < $1.key }.map { "sentence \($0.key) \($0.value)" }
        lines += [
            "unknown-sentences \(assembler.unknownSentences)", "decoding-errors \(assembler.decodingErrors)",
            "cycles \(assembler.cycles)",
        ]
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// Buffers reports and writes them to standard output in large blocks.
struct ReportWriter {
    private var buffer: [UInt8] = []

    /// Encodes the report for `update` straight into the buffer.
    mutating func write(_ update: LocationUpdate, device: String?) {
        GPSDReport.encode(update, device: device, appendingTo: &buffer)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(1, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
