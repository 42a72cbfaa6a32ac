import Foundation
import GPSDProtocol
import GPSFix

/// Compares GPSFix's reports for a capture with gpsd's own (its `.chk` file), per epoch,
/// as `shared/fixtures/gpsd/README.md` describes.
struct Conformance {
    struct Result {
        var log: String
        var fixEpochs = 0
        var fixAgreeing = 0
        var skyEpochs = 0
        var skyAgreeing = 0
        var rolloverForgiven = false
        var firstDisagreements: [String] = []

        mutating func disagree(_ text: String) {
            if firstDisagreements.count < 3 { firstDisagreements.append(text) }
        }
    }

    static let rolloverMilliseconds = Int64(1024 * 7 * 86_400) * 1000

    /// Decodes `log` in-process and compares it with `log.chk`.
    static func check(log: URL) throws -> Result {
        var result = Result(log: log.lastPathComponent)
        let ours = try decode(log)
        let theirs = try gpsdEpochs(URL(fileURLWithPath: log.path + ".chk"))
        for (time, tpv) in theirs.fixes.sorted(by: { $0.key < $1.key }) {
            result.fixEpochs += 1
            var key = time
            if ours.fixes[key] == nil, ours.fixes[time - rolloverMilliseconds] != nil {
                key = time - rolloverMilliseconds
                result.rolloverForgiven = true
            }
            guard let fix = ours.fixes[key] else {
                result.disagree("TPV \(tpv["time"] ?? "?"): no fix for this epoch")
                continue
            }
            if let problem = compare(fix: fix, with: tpv) {
                result.disagree("TPV \(tpv["time"] ?? "?"): \(problem)")
            } else {
                result.fixAgreeing += 1
            }
        }
        for (time, sky) in theirs.skies.sorted(by: { $0.key < $1.key }) {
            result.skyEpochs += 1
            let key = ours.skies[time] == nil && ours.skies[time - rolloverMilliseconds] != nil
                ? time - rolloverMilliseconds : time
            guard let view = ours.skies[key] else {
                result.disagree("SKY at \(time): no sky view with satellites for this epoch")
                continue
            }
            if let problem = compare(sky: view, with: sky) {
                result.disagree("SKY at \(time): \(problem)")
            } else {
                result.skyAgreeing += 1
            }
        }
        return result
    }

    /// Our last fix and last sky view with satellites per epoch (milliseconds since 1970).
    static func decode(_ log: URL) throws -> (fixes: [Int64: Fix], skies: [Int64: SkyView]) {
        let capture = CaptureLog(Array(try Data(contentsOf: log)))
        let decoder = NMEAStreamDecoder(for: capture)
        var fixes: [Int64: Fix] = [:]
        var skies: [Int64: SkyView] = [:]
        let emit: (LocationUpdate) -> Void = { update in
            switch update {
            case .fix(let fix):
                if let time = fix.time { fixes[milliseconds(time)] = fix }
            case .sky(let sky):
                if let time = sky.time, !sky.satellites.isEmpty { skies[milliseconds(time)] = sky }
            default: break
            }
        }
        capture.payload.withUnsafeBytes { decoder.feed($0, emit) }
        decoder.finish(emit)
        return (fixes, skies)
    }

    static func milliseconds(_ time: GPSTime) -> Int64 {
        Int64(time.daysSince1970) * 86_400_000 + time.time.nanosecondsSinceMidnight / 1_000_000
    }

    /// gpsd's last TPV per epoch, and its last SKY with satellites per cycle.
    ///
    /// A `.chk` echoes each sentence gpsd read before the reports it caused. A SKY is
    /// attributed to the cycle of the last timed sentence before it (GGA, RMC, GLL, ZDA,
    /// GNS, GST), with the date of the TPVs around it: gpsd sends a cycle's TPV only
    /// after its RMC, so attaching a SKY to the preceding TPV, as the corpus README
    /// suggests, would hand the next cycle's satellites to this one.
    static func gpsdEpochs(_ check: URL) throws -> (fixes: [Int64: [String: Any]], skies: [Int64: [String: Any]]) {
        let text = try String(contentsOf: check, encoding: .isoLatin1)
        var fixes: [Int64: [String: Any]] = [:]
        var pendingSkies: [(timeOfDay: Int64, sky: [String: Any])] = []
        var lastTimeOfDay: Int64?
        let timed: Set<String> = ["GGA", "RMC", "GLL", "ZDA", "GNS", "GST"]
        var days: [(timeOfDay: Int64, day: Int64)] = []
        for line in text.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("$") {
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                guard let address = fields.first, address.count == 6, timed.contains(String(address.suffix(3))),
                    fields.count > 1
                else { continue }
                let field = address.hasSuffix("GLL") ? (fields.count > 5 ? fields[5] : "") : fields[1]
                if field.count >= 6, let hours = Int64(field.prefix(2)), let minutes = Int64(field.dropFirst(2).prefix(2)),
                    let seconds = Double(field.dropFirst(4))
                {
                    lastTimeOfDay = (hours * 3600 + minutes * 60) * 1000 + Int64((seconds * 1000).rounded())
                }
                continue
            }
            guard line.hasPrefix("{"),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { continue }
            switch object["class"] as? String {
            case "TPV":
                guard let time = (object["time"] as? String).flatMap(parseTime) else { continue }
                fixes[time] = object
                days.append((time % 86_400_000, time - time % 86_400_000))
            case "SKY":
                if let lastTimeOfDay, let satellites = object["satellites"] as? [Any], !satellites.isEmpty {
                    pendingSkies.append((lastTimeOfDay, object))
                }
            default:
                continue
            }
        }
        var skies: [Int64: [String: Any]] = [:]
        for (timeOfDay, sky) in pendingSkies {
            // The date of the TPV nearest in time of day (a capture spans hours, not days).
            guard let day = days.min(by: { abs($0.timeOfDay - timeOfDay) < abs($1.timeOfDay - timeOfDay) })?.day
            else { continue }
            skies[day + timeOfDay] = sky
        }
        return (fixes, skies)
    }

    static func parseTime(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { "-T:Z".contains($0) })
        guard parts.count == 6, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            let hour = UInt8(parts[3]), let minute = UInt8(parts[4]), let seconds = Double(parts[5])
        else { return nil }
        let whole = UInt8(seconds)
        let nanosecond = UInt32(((seconds - Double(whole)) * 1000).rounded()) * 1_000_000
        return milliseconds(GPSTime(year: year, month: month, day: day, time: .init(hour: hour, minute: minute, second: whole, nanosecond: nanosecond)))
    }

    static func compare(fix: Fix, with tpv: [String: Any]) -> String? {
        func number(_ key: String) -> Double? { (tpv[key] as? NSNumber)?.doubleValue }
        if let mode = tpv["mode"] as? Int, mode != fix.mode.rawValue { return "mode \(fix.mode.rawValue), gpsd \(mode)" }
        let checks: [(String, Double?, Double?, Double, Bool)] = [
            ("lat", fix.latitude, number("lat"), 1e-6, true),
            ("lon", fix.longitude, number("lon"), 1e-6, true),
            ("altMSL", fix.altitudeMSL, number("altMSL") ?? number("alt"), 0.01, true),
            ("track", fix.track, number("track"), 0.01, true),
            // gpsd derives speed from positions when a cycle reports none. Climb is derived by
            // gpsd's model and by GPSFix's own rule (no NMEA sentence carries it): not compared.
            ("speed", fix.speed, number("speed"), 0.001, false),
        ]
        for (name, ours, theirs, tolerance, required) in checks {
            guard let theirs else { continue }
            guard let ours else {
                if required { return "\(name) missing, gpsd \(theirs)" }
                continue
            }
            if abs(ours - theirs) > tolerance + 1e-9 { return "\(name) \(ours), gpsd \(theirs)" }
        }
        if let status = tpv["status"] as? Int, fix.status.rawValue >= 2, status != fix.status.rawValue {
            return "status \(fix.status.rawValue), gpsd \(status)"
        }
        return nil
    }

    static func compare(sky: SkyView, with object: [String: Any]) -> String? {
        func number(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }
        if let nSat = object["nSat"] as? Int, nSat != sky.visibleCount { return "nSat \(sky.visibleCount), gpsd \(nSat)" }
        if let uSat = object["uSat"] as? Int, uSat != sky.usedCount { return "uSat \(sky.usedCount ?? -1), gpsd \(uSat)" }
        // gpsd replaces the receiver's DOPs with its own, computed from the satellites'
        // geometry, when it has that geometry (its SKY then carries xdop/ydop, which no
        // NMEA sentence gives): such DOPs are gpsd's model, not what the receiver said.
        let gpsdComputedDOPs = object["xdop"] != nil
        for (name, ours) in [("hdop", sky.hdop), ("vdop", sky.vdop), ("pdop", sky.pdop)] where !gpsdComputedDOPs {
            guard let theirs = number(name) else { continue }
            guard let ours, abs(ours - theirs) <= 0.0051 else { return "\(name) \(ours as Any), gpsd \(theirs)" }
        }
        // Satellites are matched by PRN and signal, in order: a receiver may list one twice.
        let theirs = (object["satellites"] as? [[String: Any]]) ?? []
        var ours: [String: [Satellite]] = [:]
        for satellite in sky.satellites { ours["\(satellite.identity.prn)/\(satellite.signal ?? 0)", default: []].append(satellite) }
        for satellite in theirs {
            let key = "\(satellite["PRN"] as? Int ?? -1)/\(satellite["sigid"] as? Int ?? 0)"
            guard let mine = ours[key]?.first else { return "satellite \(key) missing" }
            ours[key]?.removeFirst()
            for (name, value) in [("el", mine.elevation), ("az", mine.azimuth), ("ss", mine.snr)] {
                let expected = (satellite[name] as? NSNumber)?.doubleValue
                if expected.map({ value == nil || abs(value! - $0) > 0.5 }) ?? (value != nil) {
                    return "satellite \(key) \(name) \(value as Any), gpsd \(expected as Any)"
                }
            }
            if let used = satellite["used"] as? Bool, used != mine.used { return "satellite \(key) used \(mine.used), gpsd \(used)" }
        }
        return nil
    }
}
