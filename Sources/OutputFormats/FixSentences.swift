import GPSFix

/// NMEA 0183 sentences written from a fix and a sky view, for a receiver that sends none
/// of its own (a u-blox receiver set to UBX only): GGA, RMC and ZDA for each fix, GSA and
/// GSV for each view with satellites, as gpsd writes them for `nmea` watchers of a binary
/// device. Chartplotters, geoclue and a gpsd reading NMEA out then see a receiver that
/// speaks NMEA.
public enum FixSentences {
    /// GGA, RMC and ZDA for `fix`, each `$...*hh` without CR LF. A fix without a time (a
    /// receiver starting cold) gives GGA and RMC without one, saying no fix: a chartplotter
    /// then shows the receiver there and without a position, rather than gone.
    public static func sentences(for fix: Fix, satellitesUsed: Int?, hdop: Double?) -> [[UInt8]] {
        // The receiver's own clock: 23:59:60 stays the leap second (a count of seconds
        // would name it the next midnight, with the day before's date).
        let clock = fix.time.map(NMEAFields.clock) ?? ""
        var result: [[UInt8]] = []
        let position = PositionReport(fix: fix, satellitesUsed: satellitesUsed, hdop: hdop)
            ?? PositionReport(latitude: .nan, longitude: .nan, quality: 0)
        result.append(Array(position.gga(clock: clock).dropLast(2)))
        let valid = fix.mode >= .twoDimensional && fix.latitude != nil && fix.longitude != nil && fix.time != nil
        // NMEA 2.3: the status is A only for an autonomous or differential position; a
        // dead-reckoned one (mode E) or a simulated one (S) is V.
        let mode = if !valid {
            "N"
        } else {
            switch fix.status {
            case .differential, .rtkFixed, .rtkFloat: "D"
            case .deadReckoning: "E"
            case .simulated: "S"
            default: "A"
            }
        }
        let date = fix.time.map { digits($0.day, 2) + digits($0.month, 2) + digits($0.year % 100, 2) } ?? ""
        result.append(NMEAFields.fitted { minuteDecimals in
            var rmc = ["GPRMC", clock, mode == "A" || mode == "D" ? "A" : "V"]
            if valid, let latitude = fix.latitude, let longitude = fix.longitude {
                rmc += [
                    NMEAFields.angle(abs(latitude), degreeDigits: 2, decimals: minuteDecimals), latitude < 0 ? "S" : "N",
                    NMEAFields.angle(abs(longitude), degreeDigits: 3, decimals: minuteDecimals), longitude < 0 ? "W" : "E",
                ]
            } else {
                rmc += ["", "", "", ""]
            }
            rmc += [fix.speed.map { FixedPoint.string($0 / 0.514_444_444, decimals: 3) } ?? ""]
            rmc += [fix.track.map { FixedPoint.string($0, decimals: 3) } ?? ""]
            return line(rmc + [date, "", "", mode])
        })
        if let time = fix.time {
            result.append(line(["GPZDA", clock, digits(time.day, 2), digits(time.month, 2), digits(time.year, 4), "00", "00"]))
        }
        return result
    }

    /// GSA and the GSV group for `sky`; nothing for a view without satellites, but for one
    /// that says the receiver tracks none (`$GPGSV,1,1,00`: a chartplotter clears its bars).
    public static func sentences(for sky: SkyView, mode: FixMode) -> [[UInt8]] {
        // One entry per satellite: a signal-level view lists a satellite once per signal.
        var seen = Set<Int>()
        let satellites = sky.satellites.filter { seen.insert($0.identity.prn).inserted }
        guard !satellites.isEmpty || sky.listsNoSatellites else { return [] }
        var result: [[UInt8]] = []
        let used = satellites.filter(\.used).prefix(12).map { String($0.identity.prn) }
        var gsa = ["GPGSA", "A", String(max(mode.rawValue, 1))] + used + Array(repeating: "", count: 12 - used.count)
        gsa += [sky.pdop, sky.hdop, sky.vdop].map { $0.map { FixedPoint.string($0, decimals: 1) } ?? "" }
        result.append(line(gsa))
        let groups = max(1, (satellites.count + 3) / 4)
        for group in 0..<groups {
            var gsv = ["GPGSV", String(groups), String(group + 1), digits(satellites.count, 2)]
            for satellite in satellites[(group * 4)..<min(satellites.count, group * 4 + 4)] {
                gsv += [
                    digits(satellite.identity.prn, 2), satellite.elevation.map { digits(Int($0.rounded()), 2) } ?? "",
                    satellite.azimuth.map { digits(Int($0.rounded()), 3) } ?? "",
                    // Not tracked (a signal of 0): empty, as NMEA says it.
                    satellite.snr.flatMap { $0 >= 0.5 ? digits(Int($0.rounded()), 2) : nil } ?? "",
                ]
            }
            result.append(line(gsv))
        }
        return result
    }

    private static func line(_ fields: [String]) -> [UInt8] {
        NMEALine.checksummed(Array(("$" + fields.joined(separator: ",")).utf8))
    }

    private static func digits(_ value: Int, _ count: Int) -> String { NMEAFields.digits(max(value, 0), count) }
}
