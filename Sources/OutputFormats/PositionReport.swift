import GPSFix

/// The receiver's position as a caster wants it: an NMEA GGA sentence.
///
/// A network's virtual reference station is computed for this position, and a caster
/// that picks the nearest base picks it from this position, so it is sent from the
/// first fix (or the configured position before it) and then at a steady interval.
public struct PositionReport: Equatable, Sendable {
    public var latitude: Double
    public var longitude: Double
    /// Metres above mean sea level.
    public var altitude: Double?
    public var geoidSeparation: Double?
    /// GGA's quality digit: 1 GPS, 2 differential, 4 RTK fixed, 5 RTK float.
    public var quality: Int
    public var satellitesUsed: Int?
    public var hdop: Double?

    public init(
        latitude: Double, longitude: Double, altitude: Double? = nil, geoidSeparation: Double? = nil, quality: Int = 1,
        satellitesUsed: Int? = nil, hdop: Double? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.geoidSeparation = geoidSeparation
        self.quality = quality
        self.satellitesUsed = satellitesUsed
        self.hdop = hdop
    }

    /// Why a position could not be read from text.
    public struct ParsingError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// A position written `LAT,LON` (or `LAT,LON,ALT` when `altitude` is allowed), degrees
    /// and metres, each a finite number within its ``ValueRanges`` range.
    public init(parsing text: String, allowingAltitude: Bool) throws(ParsingError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.filter { $0 != " " } }
        guard parts.count == 2 || (allowingAltitude && parts.count == 3) else {
            throw ParsingError(description: allowingAltitude ? "give LAT,LON or LAT,LON,ALT" : "give LAT,LON")
        }
        func number(_ index: Int, _ name: String, _ unit: String, _ range: ClosedRange<Double>) throws(ParsingError) -> Double {
            // Double("inf") and Double("nan") are numbers to Swift; not here.
            guard let value = Double(parts[index]), range.contains(value) else {
                throw ParsingError(
                    description: "the \(name) '\(parts[index])' is not a number of \(unit) from "
                        + "\(FixedPoint.string(range.lowerBound, decimals: 0)) to \(FixedPoint.string(range.upperBound, decimals: 0))")
            }
            return value
        }
        let latitude = try number(0, "latitude", "degrees", ValueRanges.latitude)
        let longitude = try number(1, "longitude", "degrees", ValueRanges.longitude)
        let altitude = parts.count == 3 ? try number(2, "altitude", "metres", ValueRanges.altitude) : nil
        self.init(latitude: latitude, longitude: longitude, altitude: altitude)
    }

    /// The report for a fix of two or three dimensions; `nil` for one without a position.
    public init?(fix: Fix, satellitesUsed: Int?, hdop: Double?) {
        guard fix.mode >= .twoDimensional, let latitude = fix.latitude, let longitude = fix.longitude else { return nil }
        let quality = switch fix.status {
        case .differential: 2
        case .rtkFixed: 4
        case .rtkFloat: 5
        case .deadReckoning: 6
        case .simulated: 8
        default: 1
        }
        self.init(
            latitude: latitude, longitude: longitude, altitude: fix.mode == .threeDimensional ? fix.altitudeMSL : nil,
            geoidSeparation: fix.geoidSeparation, quality: quality, satellitesUsed: satellitesUsed, hdop: hdop)
    }

    /// The GGA sentence (`$GPGGA...*CS\r\n`) stamped with `time`, UTC.
    public func gga(at time: WallTime) -> [UInt8] { gga(clock: NMEAFields.clock(time)) }

    /// The GGA sentence stamped with `clock` (`hhmmss.ss`, or empty for no time), within
    /// NMEA's 82 characters: millimetres where they fit, fewer decimals where not.
    func gga(clock: String) -> [UInt8] {
        // A position outside the Earth's ranges (only a caller's own values can be: fixes
        // and the configured position are checked) is sent as none, quality 0.
        let hasPosition = ValueRanges.latitude.contains(latitude) && ValueRanges.longitude.contains(longitude)
        let checksummed = NMEAFields.fitted { minuteDecimals in
            // Heights to a millimetre with positions to one, a decimetre with the fewest.
            let heightDecimals = minuteDecimals - 4
            var fields: [String] = ["GPGGA", clock]
            if hasPosition {
                fields += [NMEAFields.angle(abs(latitude), degreeDigits: 2, decimals: minuteDecimals), latitude < 0 ? "S" : "N"]
                fields += [NMEAFields.angle(abs(longitude), degreeDigits: 3, decimals: minuteDecimals), longitude < 0 ? "W" : "E"]
            } else {
                fields += ["", "", "", ""]
            }
            let hdopText = hdop.map { FixedPoint.string($0, decimals: 1) } ?? ""
            fields += [hasPosition ? String(quality) : "0", satellitesUsed.map { NMEAFields.digits(min(max($0, 0), 99), 2) } ?? "", hdopText]
            fields += [altitude.map { FixedPoint.string($0, decimals: heightDecimals) } ?? "", "M"]
            fields += [geoidSeparation.map { FixedPoint.string($0, decimals: heightDecimals) } ?? "", "M", "", ""]
            return NMEALine.checksummed(Array(("$" + fields.joined(separator: ",")).utf8))
        }
        return checksummed + [13, 10]
    }
}

/// The fields NMEA 0183 writes alike in every sentence.
enum NMEAFields {
    /// The longest sentence NMEA 0183 allows, `$` to CR LF.
    static let maximumLength = 82

    /// The sentence `build` makes with as many decimals of a minute (7, about a
    /// millimetre; 6; 5, about 2 cm) as fit within ``maximumLength`` with CR LF: a
    /// multiplexer or a chartplotter may drop a longer one.
    static func fitted(_ build: (_ minuteDecimals: Int) -> [UInt8]) -> [UInt8] {
        for decimals in [7, 6] {
            let sentence = build(decimals)
            if sentence.count + 2 <= maximumLength { return sentence }
        }
        return build(5)
    }

    /// `ddmm.mmmmmmm` (or `dddmm...`): degrees and minutes, with `decimals` of a minute
    /// (seven: about a millimetre).
    static func angle(_ degrees: Double, degreeDigits: Int, decimals: Int = 7) -> String {
        var whole = Int(degrees)
        // Minutes are rounded to the decimals written before the padding is chosen:
        // 9.99999999 is written 10.0000000, two digits, and 59.99999999 carries a degree.
        let scale = (0..<decimals).reduce(1.0) { value, _ in value * 10 }
        var minutes = ((degrees - Double(whole)) * 60 * scale).rounded() / scale
        if minutes >= 60 {
            whole += 1
            minutes = 0
        }
        let text = FixedPoint.string(minutes, decimals: decimals)
        return digits(whole, degreeDigits) + (minutes < 10 ? "0" : "") + text
    }

    /// `value` in at least `count` digits, zero-padded.
    static func digits(_ value: Int, _ count: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }

    /// `hhmmss.ss` of a receiver's time, as its clock read: 23:59:60 for a leap second.
    static func clock(_ time: GPSTime) -> String {
        let clock = time.time
        return digits(Int(clock.hour), 2) + digits(Int(clock.minute), 2) + digits(Int(clock.second), 2) + "."
            + digits(Int(clock.nanosecond) / 10_000_000, 2)
    }

    /// `hhmmss.ss`, UTC.
    static func clock(_ time: WallTime) -> String {
        let secondOfDay = ((time.seconds % 86_400) + 86_400) % 86_400
        return digits(secondOfDay / 3600, 2) + digits(secondOfDay / 60 % 60, 2) + digits(secondOfDay % 60, 2) + "."
            + digits(time.nanoseconds / 10_000_000, 2)
    }
}
