import Foundation
import NMEA
import TestSupport

/// Where the project's fixtures and gpsd's corpus live, found from this file's path.
enum Fixtures {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let project = repository.appendingPathComponent("fixtures")
    /// gpsd's regression captures beside the checkout, when present.
    static let gpsdCorpus = repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures/gpsd")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: project.appendingPathComponent(name)))
    }

    /// Whether the corpus tests run: with the corpus, or in CI, where its absence must fail
    /// them rather than skip them.
    static var corpusTestsEnabled: Bool {
        !corpusLogs.isEmpty || ProcessInfo.processInfo.environment["CI"] != nil
    }

    static var corpusLogs: [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: gpsdCorpus.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().map { gpsdCorpus.appendingPathComponent($0) }
    }
}

/// Frames `bytes` in chunks of the given sizes (cycled), returning each sentence's text.
func frame(_ bytes: [UInt8], chunks: [Int] = [65_536], with framer: NMEAFramer = NMEAFramer()) -> [String] {
    var lines: [String] = []
    var offset = 0
    var chunk = 0
    bytes.withUnsafeBytes { buffer in
        while offset < buffer.count {
            let size = min(chunks[chunk % chunks.count], buffer.count - offset)
            framer.feed(UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + size)])) { lines.append($0.text) }
            offset += size
            chunk += 1
        }
    }
    framer.finish { lines.append($0.text) }
    return lines
}

/// Decodes one sentence given as text (checksum included) with a lenient framer.
func decode(_ text: String) throws -> NMEAMessageSnapshot {
    var result: Result<NMEAMessageSnapshot, NMEADecodingError>?
    let framer = NMEAFramer(configuration: .lenient)
    frameEach(Array((text + "\r\n").utf8), framer) { sentence in
        result = Result { () throws(NMEADecodingError) in try NMEAMessageSnapshot(try NMEAMessage(decoding: sentence)) }
    }
    guard let result else { throw FramingFailed(text: text, statistics: framer.statistics) }
    return try result.get()
}

struct FramingFailed: Error { var text: String; var statistics: FramerStatistics }

func frameEach(_ bytes: [UInt8], _ framer: NMEAFramer, _ body: (NMEASentence) -> Void) {
    bytes.withUnsafeBytes { framer.feed($0, body) }
    framer.finish(body)
}

/// A decoded message copied out of the callback, with borrowed text made a `String`.
enum NMEAMessageSnapshot {
    case gga(GGA), rmc(RMC), gsa(GSA), gsv(GSV), vtg(VTG), gll(GLL), zda(ZDA), gst(GST), gns(GNS), gbs(GBS)
    case dtm(DTM), hdt(HDT), ths(THS), pgrme(PGRME), pgrmz(PGRMZ), pgrmf(PGRMF), pmgnst(PMGNST), psrfepe(PSRFEPE), pubxPosition(PUBXPosition)
    case pashrPosition(PASHRPosition), pstiPosition(PSTIPosition)
    case txt(id: Int?, text: String)
    case pubxSatellites([PUBXSatellites.Satellite])
    case pashrSatellites([PASHRSatellites.Satellite])
    case unknown(address: String, fields: [String])

    init(_ message: NMEAMessage) throws(NMEADecodingError) {
        switch message {
        case .gga(let value): self = .gga(value)
        case .rmc(let value): self = .rmc(value)
        case .gsa(let value): self = .gsa(value)
        case .gsv(let value): self = .gsv(value)
        case .vtg(let value): self = .vtg(value)
        case .gll(let value): self = .gll(value)
        case .zda(let value): self = .zda(value)
        case .gst(let value): self = .gst(value)
        case .gns(let value): self = .gns(value)
        case .gbs(let value): self = .gbs(value)
        case .dtm(let value): self = .dtm(value)
        case .hdt(let value): self = .hdt(value)
        case .ths(let value): self = .ths(value)
        case .pgrme(let value): self = .pgrme(value)
        case .pgrmz(let value): self = .pgrmz(value)
        case .pgrmf(let value): self = .pgrmf(value)
        case .pmgnst(let value): self = .pmgnst(value)
        case .psrfepe(let value): self = .psrfepe(value)
        case .pubxPosition(let value): self = .pubxPosition(value)
        case .txt(let value): self = .txt(id: value.textID, text: String(decoding: value.text, as: UTF8.self))
        case .pubxSatellites(let value):
            var satellites: [PUBXSatellites.Satellite] = []
            for index in 0..<value.count {
                if let satellite = try value.satellite(at: index) { satellites.append(satellite) }
            }
            self = .pubxSatellites(satellites)
        case .pashrPosition(let value): self = .pashrPosition(value)
        case .pstiPosition(let value): self = .pstiPosition(value)
        case .pashrSatellites(let value):
            var satellites: [PASHRSatellites.Satellite] = []
            for index in 0..<value.count {
                if let satellite = try value.satellite(at: index) { satellites.append(satellite) }
            }
            self = .pashrSatellites(satellites)
        case .unknown(let sentence):
            self = .unknown(
                address: sentence.address.description,
                fields: (1..<sentence.fieldCount).map { String(decoding: sentence.field($0), as: UTF8.self) })
        }
    }
}

/// Appends `*hh` to a sentence body, computed here independently of the framer.
func withChecksum(_ body: String) -> String {
    let checksum = body.utf8.dropFirst().reduce(UInt8(0), ^)
    return body + "*" + String(format: "%02X", checksum)
}

/// Whether a sentence's `*hh` matches its body, checked independently of the framer.
func hasValidChecksum(_ line: String) -> Bool {
    guard let star = line.lastIndex(of: "*") else { return false }
    let body = line[line.index(after: line.startIndex)..<star]
    let declared = UInt8(line[line.index(after: star)...], radix: 16)
    return declared == body.utf8.reduce(UInt8(0), ^)
}

extension NMEADecimal {
    /// For tests: a decimal from its text, which must parse.
    init(_ text: String) {
        var text = text
        self = text.withUTF8 { NMEADecimal(parsing: UnsafeRawBufferPointer($0))! }
    }
}
