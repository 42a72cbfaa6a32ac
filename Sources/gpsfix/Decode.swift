#if canImport(Glibc)
import Glibc
#endif

import ArgumentParser
import GPSDProtocol
import GPSFix
import GPSFixDevices
import NMEA
import ReceiverDrivers
import ReceiverFraming
import UBX

/// `gpsfix decode`: receiver logs in, one gpsd JSON report per line out.
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode receiver logs (NMEA 0183, u-blox UBX, TSIP, SiRF, CASIC, Skytraq, or mixed) into gpsd JSON reports, one per line.",
        discussion: """
            For every receiver cycle it writes a TPV, then a SKY when satellites or DOPs are \
            known, then a GST when the receiver sent one: what gpsfixd sends a watcher, but \
            that a later SKY of a cycle leaves out what an earlier one said, as gpsd's \
            regression reports have it (gpsfixd sends each whole). \
            Binary UBX frames and RTCM 3 frames may be mixed with NMEA sentences, as a \
            u-blox receiver sends them. Logs may carry gpsfake's header (# Date:, \
            # Delay-Cookie:). Reads standard input when no file is given.
            """
    )

    @Argument(help: "Receiver logs to decode (standard input when none).")
    var files: [String] = []

    @Flag(help: "Print the framers' and the assemblers' counters, and the UBX frames by class and id, to standard error at the end.")
    var stats = false

    @Option(help: "The longest sentence accepted, in bytes on the wire (CR LF included): 8 to 4096.")
    var maxLength = NMEAFramer.Configuration.lenient.maximumLength

    @Flag(help: "Refuse sentences without a checksum (accepted by default, as gpsd does).")
    var requireChecksum = false

    @Option(help: "A device name to put in every report, as gpsfixd does.")
    var device: String?

    /// The bytes read at a time: as fast as 1 MiB on a large log (the framer keeps up
    /// either way), and a short one does not pay for zeroing a megabyte (256 page faults,
    /// about a seventh of the command's start).
    private static let blockSize = 1 << 17

    func validate() throws {
        guard (8...4096).contains(maxLength) else {
            throw ValidationError("--max-length \(maxLength) is out of range: give 8 to 4096 bytes")
        }
    }

    func run() throws {
        var output = ReportWriter()
        // What was decoded is written, though a later input fails (a missing file, a read error).
        defer { output.flush() }
        var totals = DeviceCounters()
        var sentenceTypes: [String: Int] = [:]
        var ubxMessages: [UInt16: Int] = [:]
        let inputs: [String?] = files.isEmpty ? [nil] : files
        for input in inputs {
            // Streamed in blocks: a log of any size decodes in bounded memory. The
            // header comes first; the decoder is set up by it before the first payload byte.
            var splitter = CaptureLog.Splitter()
            var decoder: ReceiverStreamDecoder?
            let framing = NMEAFramer.Configuration(maximumLength: maxLength, checksumPolicy: requireChecksum ? .required : .optional)
            // The option read once: a property wrapper's getter per report costs.
            let device = device
            let emit: (LocationUpdate) -> Void = { update in output.write(update, device: device) }
            // The decoder, made by the header read so far when first needed.
            func active(_ header: [(key: String, value: String)]) -> ReceiverStreamDecoder {
                if let decoder { return decoder }
                let made = ReceiverStreamDecoder(
                    referenceDate: CaptureLog.referenceDate(in: header), framing: framing, drivers: ReceiverDrivers.all)
                if stats {
                    made.onBinaryFrame = { frame in
                        if frame.first == UBXFrame.sync1 { ubxMessages[UInt16(frame[2]) << 8 | UInt16(frame[3]), default: 0] += 1 }
                    }
                }
                decoder = made
                return made
            }
            try FileSource(path: input ?? "/dev/stdin").read(blockSize: Self.blockSize) { block in
                splitter.split(block) { run, header in active(header).feed(run, emit) }
            }
            splitter.finish()
            let finished = active(splitter.header)
            finished.finish(emit)
            totals.framing.add(finished.framer.nmea.statistics)
            totals.binaryFraming.add(finished.framer.binaryStatistics)
            totals.assembly.cycles += finished.assembler.statistics.cycles
            totals.assembly.decodingErrors += finished.assembler.statistics.decodingErrors
            totals.assembly.unknownSentences += finished.assembler.statistics.unknownSentences
            totals.ubxAssembly.epochs += finished.ubx.statistics.epochs
            totals.ubxAssembly.decodingErrors += finished.ubx.statistics.decodingErrors
            totals.ubxAssembly.unknownMessages += finished.ubx.statistics.unknownMessages
            finished.driverStatistics { name, statistics in
                totals.driverAssembly[name, default: EpochReports.Statistics()].add(statistics)
            }
            sentenceTypes.merge(finished.assembler.sentenceCountsByType, uniquingKeysWith: +)
        }
        output.flush()  // before the statistics, which go to standard error
        if stats { printStatistics(totals, sentenceTypes, ubxMessages) }
    }

    private func printStatistics(_ totals: DeviceCounters, _ types: [String: Int], _ messages: [UInt16: Int]) {
        let framer = totals.framing, binary = totals.binaryFraming
        let ubx = binary[UBXFrameRule.self], rtcm3 = binary[RTCM3FrameRule.self]
        var lines = [
            "bytes \(binary.bytes)", "sentences \(framer.sentences)", "discarded-bytes \(framer.discardedBytes)",
        ]
        lines += FramerRejection.allCases.map { "rejected \($0) \(framer[$0])" }
        lines += types.sorted { $0.key < $1.key }.map { "sentence \($0.key) \($0.value)" }
        lines += [
            "unknown-sentences \(totals.assembly.unknownSentences)", "decoding-errors \(totals.assembly.decodingErrors)",
            "cycles \(totals.assembly.cycles)",
            "ubx-frames \(ubx.frames)", "ubx-refused impossible-header \(ubx.impossibleHeaders)",
            "ubx-refused too-long \(ubx.tooLong)", "ubx-refused bad-checksum \(ubx.badChecksums)",
            "ubx-refused truncated \(ubx.truncated)",
        ]
        lines += messages.sorted { $0.key < $1.key }.map { message, count in
            "ubx \(UBXMessageName.of(message)) \(count)"
        }
        lines += [
            "ubx-undecodable \(totals.ubxAssembly.decodingErrors)", "ubx-unread \(totals.ubxAssembly.unknownMessages)",
            "ubx-epochs \(totals.ubxAssembly.epochs)",
            "rtcm3-frames \(rtcm3.frames)", "rtcm3-refused \(rtcm3.refused)",
        ]
        for (name, counts) in binary.protocols {
            guard let assembly = totals.driverAssembly[name] else { continue }
            let key = name.lowercased()
            lines += [
                "\(key)-frames \(counts.frames)", "\(key)-refused \(counts.refused)",
                "\(key)-undecodable \(assembly.decodingErrors)", "\(key)-unread \(assembly.unknownMessages)",
                "\(key)-epochs \(assembly.epochs)",
            ]
        }
        writeAll((lines.joined(separator: "\n") + "\n").utf8, to: 2)
    }
}

/// Buffers reports and writes them to standard output in large blocks.
struct ReportWriter: ~Copyable {
    /// The reports not yet written, in memory reused after each block.
    private var bytes = JSONBytes(capacity: Self.blockSize + 4096)
    /// The bytes written in one call: a block holds some hundreds of reports.
    private static let blockSize = 1 << 17

    /// Encodes the report for `update` straight into the buffer.
    mutating func write(_ update: LocationUpdate, device: String?) {
        GPSDReport.encode(update, device: device, into: &bytes)
        if bytes.count >= Self.blockSize { flush() }
    }

    /// Writes what is buffered; a standard output that refuses it (a full disk, a closed
    /// pipe) ends the command with status 74, saying why, rather than losing reports.
    mutating func flush() {
        guard !bytes.isEmpty else { return }
        guard bytes.withUnsafeBytes({ writeAll($0, to: 1) }) else {
            let reason = String(cString: strerror(errno))
            writeAll("gpsfix decode: cannot write the reports: \(reason)\n".utf8, to: 2)
            exit(74)
        }
        bytes.removeAll()
    }
}
