// libFuzzer target: arbitrary bytes, in arbitrary chunks, through the framer and the
// assembler, and every update that comes out through every encoder a fix leaves the
// daemon by: gpsd JSON (TPV, SKY, GST, ATT, POLL), NMEA 0183 out, the GGA sent to NTRIP
// casters, Traccar's OsmAnd query, OwnTracks and Home Assistant payloads, the HTTP API's
// entries and the event stream's events. Besides not crashing, it checks:
// - every value of every fix, sky view, error estimate and heading lies in its range
//   (`ValueRanges`): the assembler's promise that lets encoders format without guards;
// - every JSON output is valid JSON (a strict syntax check, below), and every number in
//   it is plain fixed-point (no `nan`, `inf` or exponent);
// - the GGA for casters is one sentence that the strict framer accepts, checksum and all;
// - NMEA out's line is the sentence, a checksum and CR LF, with no line end inside;
// - the OsmAnd query holds only what a query may; an event is one `event:` and one
//   `data:` line.

import FuzzSupport
import GPSDProtocol
import GPSFix
import NMEA
import OutputFormats

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

func text(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

/// Values in range: what the assembler promises every encoder.
func checkRanges(_ update: LocationUpdate) {
    func inRange(_ value: Double?, _ range: ClosedRange<Double>, _ name: String) {
        if let value { check(range.contains(value), "\(name) \(value) out of \(range)") }
    }
    func checkTime(_ time: GPSTime?) {
        if let time { check(ValueRanges.year.contains(time.year), "year \(time.year)") }
    }
    switch update {
    case .fix(let fix):
        checkTime(fix.time)
        inRange(fix.latitude, ValueRanges.latitude, "latitude")
        inRange(fix.longitude, ValueRanges.longitude, "longitude")
        inRange(fix.altitudeMSL, ValueRanges.altitude, "altMSL")
        inRange(fix.altitudeHAE, ValueRanges.altitude, "altHAE")
        inRange(fix.geoidSeparation, ValueRanges.geoidSeparation, "geoidSep")
        inRange(fix.speed, ValueRanges.speed, "speed")
        inRange(fix.track, ValueRanges.direction, "track")
        inRange(fix.climb, ValueRanges.climb, "climb")
        inRange(fix.velocity?.north, ValueRanges.climb, "velN")
        inRange(fix.velocity?.east, ValueRanges.climb, "velE")
        inRange(fix.velocity?.down, ValueRanges.climb, "velD")
        inRange(fix.magneticVariation, ValueRanges.signedAngle, "magvar")
        for (value, name) in [
            (fix.horizontalError, "eph"), (fix.verticalError, "epv"), (fix.sphericalError, "sep"), (fix.speedError, "eps"),
            (fix.trackError, "epd"), (fix.longitudeError, "epx"), (fix.latitudeError, "epy"),
        ] {
            inRange(value, ValueRanges.error, name)
        }
        inRange(fix.differentialAge, ValueRanges.differentialAge, "dgpsAge")
        if let station = fix.differentialStation { check(ValueRanges.differentialStation.contains(station), "dgpsSta \(station)") }
        if let leap = fix.leapSeconds { check(ValueRanges.receiverLeapSeconds.contains(leap), "leapseconds \(leap)") }
    case .sky(let sky):
        checkTime(sky.time)
        for dop in [sky.hdop, sky.vdop, sky.pdop, sky.tdop, sky.xdop, sky.ydop, sky.gdop] {
            inRange(dop, ValueRanges.dilution, "DOP")
        }
        if let used = sky.usedCount { check(ValueRanges.satellitesUsed.contains(used), "uSat \(used)") }
        for satellite in sky.satellites {
            inRange(satellite.elevation, ValueRanges.elevation, "el")
            inRange(satellite.azimuth, ValueRanges.direction, "az")
            inRange(satellite.snr, ValueRanges.signalToNoise, "ss")
        }
    case .errorEstimate(let estimate):
        checkTime(estimate.time)
        for value in [estimate.rangeRMS, estimate.semiMajor, estimate.semiMinor, estimate.latitudeError,
                      estimate.longitudeError, estimate.altitudeError] {
            inRange(value, ValueRanges.error, "GST")
        }
        inRange(estimate.orientation, ValueRanges.signedAngle, "orient")
    case .attitude(let attitude):
        checkTime(attitude.time)
        inRange(attitude.heading, ValueRanges.direction, "heading")
    default:
        break
    }
}

/// A strict JSON syntax check of one value, as RFC 8259 has it, numbers restricted to
/// what the encoders write: `-?digits(.digits)?`, no exponent.
struct JSONCheck {
    let bytes: [UInt8]
    var index = 0

    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var checker = JSONCheck(bytes: Array(bytes))
        guard checker.value() else { return false }
        return checker.index == checker.bytes.count
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func value() -> Bool {
        switch current {
        case UInt8(ascii: "{")?: return container(close: UInt8(ascii: "}"), keyed: true)
        case UInt8(ascii: "[")?: return container(close: UInt8(ascii: "]"), keyed: false)
        case UInt8(ascii: "\"")?: return string()
        case UInt8(ascii: "t")?: return literal("true")
        case UInt8(ascii: "f")?: return literal("false")
        case UInt8(ascii: "n")?: return literal("null")
        default: return number()
        }
    }

    mutating func container(close: UInt8, keyed: Bool) -> Bool {
        index += 1
        if current == close {
            index += 1
            return true
        }
        while true {
            if keyed {
                guard current == UInt8(ascii: "\""), string(), current == UInt8(ascii: ":") else { return false }
                index += 1
            }
            guard value() else { return false }
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard current == close else { return false }
            index += 1
            return true
        }
    }

    mutating func string() -> Bool {
        index += 1
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return true
            case UInt8(ascii: "\\"):
                guard let escaped = current else { return false }
                index += 1
                if escaped == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        guard let digit = current, digit.isHexDigit else { return false }
                        index += 1
                    }
                } else if !Array(#""\/bfnrt"#.utf8).contains(escaped) {
                    return false
                }
            case 0..<0x20: return false
            default: break
            }
        }
        return false
    }

    mutating func literal(_ word: String) -> Bool {
        for byte in word.utf8 {
            guard current == byte else { return false }
            index += 1
        }
        return true
    }

    mutating func number() -> Bool {
        if current == UInt8(ascii: "-") { index += 1 }
        guard digits() else { return false }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() else { return false }
        }
        return true
    }

    mutating func digits() -> Bool {
        let start = index
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index > start
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}

/// A gpsd report: one JSON object, then CR LF.
func checkReport(_ report: [UInt8], _ name: String) {
    check(report.suffix(2) == [13, 10], "\(name) not ended by CR LF: \(text(report))")
    check(JSONCheck.isValid(report.dropLast(2)), "\(name) not valid JSON: \(text(report))")
}

/// Everything a daemon's outputs would write for one update.
struct Outputs {
    var latest: (fix: Fix?, sky: SkyView?, estimate: ErrorEstimate?) = (nil, nil, nil)

    mutating func encode(_ update: LocationUpdate) {
        checkRanges(update)
        if let report = GPSDReport.encode(update, device: "/dev/fuzz") {
            checkReport(report, "report")
            checkEvent(ServerSentEvent.event(for: report), of: report)
        }
        switch update {
        case .fix(let fix):
            latest.fix = fix
            encodeFix(fix)
        case .sky(let sky):
            latest.sky = sky
            var json = JSONWriter(objectWithCapacity: 256)
            APIEntries.writeSky(sky, device: "/dev/fuzz", into: &json)
            checkReport(json.finish(), "API sky entry")
        case .errorEstimate(let estimate):
            latest.estimate = estimate
        case .sentence(let sentence):
            checkNMEALine(sentence)
        default:
            break
        }
    }

    func encodeFix(_ fix: Fix) {
        var json = JSONWriter(objectWithCapacity: 256)
        APIEntries.writeFix(fix, device: "/dev/fuzz", age: 0.25, into: &json)
        checkReport(json.finish(), "API fix entry")
        if let payload = OwnTracksLocation.payload(for: fix, trackerID: OwnTracksLocation.trackerID(for: "/dev/fuzz")) {
            checkReport(payload, "OwnTracks")
        }
        if let attributes = HomeAssistantAttributes.payload(for: fix) {
            check(JSONCheck.isValid(attributes), "Home Assistant attributes: \(text(attributes))")
        }
        if let fields = OsmAndPosition.fields(for: fix, hdop: latest.sky?.hdop) {
            let query = OsmAndPosition.query(id: "fuzz 1", fields: fields)
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%=&".utf8)
            check(query.utf8.allSatisfy(allowed.contains), "OsmAnd query: \(query)")
        }
        if let position = PositionReport(fix: fix, satellitesUsed: latest.sky?.usedCount, hdop: latest.sky?.hdop) {
            checkGGA(position.gga(at: WallTime(seconds: 1_764_158_400, nanoseconds: 990_000_000)))
        }
    }

    func checkGGA(_ line: [UInt8]) {
        // Checksum required; longer than 82 bytes allowed (seven decimals of minutes, as casters take them).
        let framer = NMEAFramer(configuration: NMEAFramer.Configuration(maximumLength: 256, checksumPolicy: .required))
        var sentences: [[UInt8]] = []
        var decoded = 0
        line.withUnsafeBytes { bytes in
            framer.feed(bytes) { sentence in
                sentences.append(Array(sentence.line))
                if case .gga? = try? NMEAMessage(decoding: sentence) { decoded += 1 }
            }
        }
        check(sentences.count == 1 && decoded == 1 && sentences[0] == Array(line.dropLast(2)), "GGA for casters: \(text(line))")
    }

    func checkNMEALine(_ sentence: [UInt8]) {
        let line = NMEALine.terminated(sentence)
        check(line.suffix(2) == [13, 10] && NMEALine.hasChecksum(Array(line.dropLast(2))), "NMEA out: \(text(line))")
        check(!line.dropLast(2).contains(where: { $0 == 10 || $0 == 13 }), "line end inside NMEA out's line: \(text(line))")
    }

    func checkEvent(_ event: [UInt8], of report: [UInt8]) {
        let eventText = text(event)
        check(eventText.hasPrefix("event: ") && eventText.hasSuffix("\n\n"), "event: \(eventText)")
        check(event.count { $0 == 10 } == 3 && eventText.contains("\ndata: {"), "event lines: \(eventText)")
    }

    func poll() {
        let fixes = latest.fix.map { [("/dev/fuzz", $0)] } ?? []
        let estimates = latest.estimate.map { [("/dev/fuzz", $0)] } ?? []
        let skies = latest.sky.map { [("/dev/fuzz", $0)] } ?? []
        // The time it answers: the fix's here, or a fixed instant before one.
        let now = latest.fix?.time ?? GPSTime(millisecondsSince1970: 1_795_694_400_000)
        checkReport(SessionReport.poll(time: now, active: 1, fixes: fixes, estimates: estimates, skies: skies), "POLL")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOutputs(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    // The first bytes choose the chunking, the rest is the stream.
    let chunkSizes = input.prefix(4).map { Int($0 % 97) + 1 }
    let stream = UnsafeRawBufferPointer(rebasing: input.dropFirst(min(4, input.count)))
    let decoder = ReceiverStreamDecoder(framing: .lenient)
    var outputs = Outputs()
    decoder.onSentence = { outputs.encode(.sentence(Array($0.line))) }
    var offset = 0
    var chunk = 0
    while offset < stream.count {
        let end = min(stream.count, offset + max(1, chunkSizes.isEmpty ? stream.count : chunkSizes[chunk % chunkSizes.count]))
        decoder.feed(UnsafeRawBufferPointer(rebasing: stream[offset..<end])) { outputs.encode($0) }
        offset = end
        chunk += 1
    }
    decoder.finish { outputs.encode($0) }
    outputs.poll()
    return 0
}

/// The entry point SwiftPM links this executable under.
@_cdecl("FuzzOutputs_main")
public func fuzzOutputsMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzOutputs(UnsafeRawPointer(data), size) }
}
