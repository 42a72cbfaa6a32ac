import GPSFix

/// One position in Traccar's OsmAnd protocol: the query string of one request,
/// `id=ID&lat=..&lon=..&timestamp=..&speed=..&bearing=..&altitude=..&accuracy=..&hdop=..`.
///
/// Units are Traccar's: `timestamp` in seconds since 1970, `speed` in **knots** (Traccar's
/// OsmAnd decoder takes knots; a TPV's m/s × 1.943844), `bearing` in degrees true,
/// `altitude` above mean sea level and `accuracy` (the receiver's horizontal error
/// estimate) in metres. What the fix does not know is left out.
enum OsmAndPosition {
    /// Knots per metre per second.
    static let knotsPerMetrePerSecond = 3600.0 / 1852.0

    /// The query for `fix` of the device `id`, with the last HDOP the device reported;
    /// `nil` unless the fix has a position and a time.
    static func query(for fix: Fix, id: String, hdop: Double?) -> String? {
        guard fix.mode >= .twoDimensional, let latitude = fix.latitude, let longitude = fix.longitude, let time = fix.time
        else { return nil }
        var fields = [
            ("id", escaped(id)), ("lat", format(latitude, 7)), ("lon", format(longitude, 7)),
            ("timestamp", format(time.secondsSince1970, 3)),
        ]
        if let speed = fix.speed, speed.isFinite { fields.append(("speed", format(speed * knotsPerMetrePerSecond, 3))) }
        if let track = fix.track, track.isFinite { fields.append(("bearing", format(track, 1))) }
        if let altitude = fix.altitudeMSL, altitude.isFinite { fields.append(("altitude", format(altitude, 1))) }
        if let error = fix.horizontalError, error.isFinite { fields.append(("accuracy", format(error, 1))) }
        if let hdop, hdop.isFinite { fields.append(("hdop", format(hdop, 2))) }
        return fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// `value` with `decimals` digits after the point, trailing zeros left.
    static func format(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale), fraction = Int(scaled.truncatingRemainder(dividingBy: scale))
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return "\(sign)\(whole)" }
        let digits = String(fraction)
        return "\(sign)\(whole)." + String(repeating: "0", count: decimals - digits.count) + digits
    }

    /// `text` percent-encoded for a query (letters, digits and `-._~` as they are).
    static func escaped(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                result += "%\(digits[Int(byte >> 4)])\(digits[Int(byte & 15)])"
            }
        }
        return result
    }
}
