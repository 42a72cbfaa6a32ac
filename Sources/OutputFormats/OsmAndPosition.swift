import GPSFix

/// One position in Traccar's OsmAnd protocol: the query string of one request,
/// `id=ID&lat=..&lon=..&timestamp=..&speed=..&bearing=..&altitude=..&accuracy=..&hdop=..`.
///
/// Units are Traccar's: `timestamp` in seconds since 1970, `speed` in **knots** (Traccar's
/// OsmAnd decoder takes knots; a TPV's m/s × 1.943844), `bearing` in degrees true,
/// `altitude` above mean sea level and `accuracy` (the receiver's horizontal error
/// estimate) in metres. What the fix does not know is left out.
public enum OsmAndPosition {
    /// Knots per metre per second.
    public static let knotsPerMetrePerSecond = 3600.0 / 1852.0

    /// The query for `fix` of the device `id`, with the last HDOP the device reported;
    /// `nil` unless the fix has a position and a time.
    public static func query(for fix: Fix, id: String, hdop: Double?) -> String? {
        guard fix.mode >= .twoDimensional, let latitude = fix.latitude, let longitude = fix.longitude, let time = fix.time
        else { return nil }
        // Every number through the project's one formatter, FixedPoint.
        var fields = [
            ("id", escaped(id)), ("lat", FixedPoint.string(latitude, decimals: 7)),
            ("lon", FixedPoint.string(longitude, decimals: 7)),
            ("timestamp", FixedPoint.string(time.secondsSince1970, decimals: 3)),
        ]
        func add(_ name: String, _ value: Double?, decimals: Int) {
            if let value, value.isFinite { fields.append((name, FixedPoint.string(value, decimals: decimals))) }
        }
        add("speed", fix.speed.map { $0 * knotsPerMetrePerSecond }, decimals: 3)
        add("bearing", fix.track, decimals: 1)
        add("altitude", fix.altitudeMSL, decimals: 1)
        add("accuracy", fix.horizontalError, decimals: 1)
        add("hdop", hdop, decimals: 2)
        return fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// `text` percent-encoded for a query (letters, digits and `-._~` as they are).
    public static func escaped(_ text: String) -> String {
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
