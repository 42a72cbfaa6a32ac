import GPSFix

/// NMEA 0183 sentences written from a fix and a sky view, for a receiver that sends none
/// of its own (a u-blox receiver set to UBX only): GGA, RMC and ZDA for each fix, GSA and
/// GSV for each view with satellites, as gpsd writes them for `nmea` watchers of a binary
/// device. Chartplotters, geoclue and a gpsd reading NMEA out then see a receiver that
/// speaks NMEA.
public enum FixSentences {
    /// GGA, RMC and ZDA for `fix` (none without a time), each `$...*hh` without CR LF.
    public static func sentences(for fix: Fix, satellitesUsed: Int?, hdop: Double?) -> [[UInt8]] {
        guard let time = fix.time else { return [] }
        let stamp = WallTime(time)
        var result: [[UInt8]] = []
        let position = PositionReport(fix: fix, satellitesUsed: satellitesUsed, hdop: hdop)
            ?? PositionReport(latitude: .nan, longitude: .nan, quality: 0)
        result.append(Array(position.gga(at: stamp).dropLast(2)))
        let valid = fix.mode >= .twoDimensional && fix.latitude != nil && fix.longitude != nil
        var rmc = ["GPRMC", clock(stamp), valid ? "A" : "V"]
        if valid, let latitude = fix.latitude, let longitude = fix.longitude {
            rmc += [angle(abs(latitude), 2), latitude < 0 ? "S" : "N", angle(abs(longitude), 3), longitude < 0 ? "W" : "E"]
        } else {
            rmc += ["", "", "", ""]
        }
        rmc += [fix.speed.map { FixedPoint.string($0 / 0.514_444_444, decimals: 3) } ?? ""]
        rmc += [fix.track.map { FixedPoint.string($0, decimals: 3) } ?? ""]
        rmc += [digits(time.day, 2) + digits(time.month, 2) + digits(time.year % 100, 2), "", ""]
        rmc += [valid ? (fix.status == .differential ? "D" : fix.status == .deadReckoning ? "E" : "A") : "N"]
        result.append(line(rmc))
        result.append(line(["GPZDA", clock(stamp), digits(time.day, 2), digits(time.month, 2), digits(time.year, 4), "00", "00"]))
        return result
    }

    /// GSA and the GSV group for `sky`; nothing for a view without satellites.
    public static func sentences(for sky: SkyView, mode: FixMode) -> [[UInt8]] {
        // One entry per satellite: a signal-level view lists a satellite once per signal.
        var seen = Set<Int>()
        let satellites = sky.satellites.filter { seen.insert($0.identity.prn).inserted }
        guard !satellites.isEmpty else { return [] }
        var result: [[UInt8]] = []
        let used = satellites.filter(\.used).prefix(12).map { String($0.identity.prn) }
        var gsa = ["GPGSA", "A", String(max(mode.rawValue, 1))] + used + Array(repeating: "", count: 12 - used.count)
        gsa += [sky.pdop, sky.hdop, sky.vdop].map { $0.map { FixedPoint.string($0, decimals: 1) } ?? "" }
        result.append(line(gsa))
        let groups = (satellites.count + 3) / 4
        for group in 0..<groups {
            var gsv = ["GPGSV", String(groups), String(group + 1), digits(satellites.count, 2)]
            for satellite in satellites[(group * 4)..<min(satellites.count, group * 4 + 4)] {
                gsv += [
                    digits(satellite.identity.prn, 2), satellite.elevation.map { digits(Int($0.rounded()), 2) } ?? "",
                    satellite.azimuth.map { digits(Int($0.rounded()), 3) } ?? "",
                    satellite.snr.map { digits(Int($0.rounded()), 2) } ?? "",
                ]
            }
            result.append(line(gsv))
        }
        return result
    }

    private static func line(_ fields: [String]) -> [UInt8] {
        NMEALine.checksummed(Array(("$" + fields.joined(separator: ",")).utf8))
    }

    private static func clock(_ time: WallTime) -> String { NMEAFields.clock(time) }
    private static func angle(_ degrees: Double, _ digits: Int) -> String { NMEAFields.angle(degrees, degreeDigits: digits) }
    private static func digits(_ value: Int, _ count: Int) -> String { NMEAFields.digits(max(value, 0), count) }
}
