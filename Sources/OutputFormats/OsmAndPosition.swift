import GPSFix

/// One position in Traccar's OsmAnd protocol: the query string of one request,
/// `id=ID&lat=..&lon=..&timestamp=..&speed=..&bearing=..&altitude=..&accuracy=..&hdop=..`.
///
/// Units are Traccar's: `timestamp` in whole milliseconds since 1970 (Traccar's OsmAnd
/// decoder reads a whole number, under 2³¹ as seconds and above as milliseconds, and drops
/// the connection at a fraction), `speed` in **knots** (a TPV's m/s × 1.943844),
/// `bearing` in degrees true, `altitude` above mean sea level and `accuracy` (the
/// receiver's horizontal error estimate) in metres. What the fix does not know is left
/// out. A position is kept without its `id` (``fields(for:hdop:)``), which is put first as
/// it is sent (``query(id:fields:)``): positions queued under an earlier `--traccar-id`
/// go under the current one.
public enum OsmAndPosition {
    /// Knots per metre per second.
    public static let knotsPerMetrePerSecond = 3600.0 / 1852.0

    /// The fields of `fix`'s position, with the last HDOP the device reported, all but
    /// `id`; `nil` unless the fix has a position and a time.
    public static func fields(for fix: Fix, hdop: Double?) -> String? {
        guard fix.mode >= .twoDimensional, let latitude = fix.latitude, let longitude = fix.longitude, let time = fix.time
        else { return nil }
        // Every number through the project's one formatter, FixedPoint.
        var fields = [
            ("lat", FixedPoint.string(latitude, decimals: 7)), ("lon", FixedPoint.string(longitude, decimals: 7)),
            ("timestamp", String(time.daysSince1970 * 86_400_000 + Int(time.time.nanosecondsSinceMidnight / 1_000_000))),
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

    /// The query that sends a position's `fields` as the device `id`.
    public static func query(id: String, fields: String) -> String {
        "id=\(escaped(id))&\(fields)"
    }

    /// A position's fields as GPSFix 0.2.0 kept them in its journal, which Traccar refuses:
    /// the device's `id` first, and the timestamp in seconds with three decimals. Fields
    /// kept as now are returned as they are.
    public static func fields(journaled text: String) -> String {
        var fields = text.split(separator: "&", omittingEmptySubsequences: false)
        if fields.first?.hasPrefix("id=") == true { fields.removeFirst() }
        for index in fields.indices where fields[index].hasPrefix("timestamp=") {
            let value = fields[index].dropFirst("timestamp=".count)
            guard let point = value.firstIndex(of: "."), let seconds = Int(value[..<point]),
                case let decimals = value[value.index(after: point)...], decimals.count == 3, let thousandths = Int(decimals),
                case let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000), !overflow
            else { continue }
            fields[index] = "timestamp=\(milliseconds + thousandths)"
        }
        return fields.joined(separator: "&")
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
