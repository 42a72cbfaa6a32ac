import GPSDProtocol
import GPSFix

/// One device's entry in the HTTP API's documents (`/api/v1/fix`, `/api/v1/sky`): a
/// stable schema in which every field is present, `null` where there is no value. The
/// server writes the documents around these entries; the schema (`APISchema`) says the same.
public enum APIEntries {
    /// `fix`'s entry in `/api/v1/fix`, with `age`, the seconds since the device's last
    /// fix, written into the object `item`.
    public static func writeFix(_ fix: Fix, device: String, age: Double?, into item: inout JSONWriter) {
        item.field("device", string: device)
        item.field("time", orNull: fix.time?.iso8601)
        item.field("mode", fix.mode.rawValue)
        item.field("status", orNull: fix.mode >= .twoDimensional ? fix.status.rawValue : nil)
        item.field("lat", orNull: fix.latitude, decimals: 9)
        item.field("lon", orNull: fix.longitude, decimals: 9)
        item.field("altHAE", orNull: fix.altitudeHAE, decimals: 3)
        item.field("altMSL", orNull: fix.altitudeMSL, decimals: 3)
        item.field("speed", orNull: fix.speed, decimals: 3)
        item.field("track", orNull: fix.track, decimals: 4)
        item.field("climb", orNull: fix.climb, decimals: 3)
        item.field("eph", orNull: fix.horizontalError, decimals: 3)
        item.field("epv", orNull: fix.verticalError, decimals: 3)
        item.field("dgpsAge", orNull: fix.differentialAge, decimals: 1)
        item.field("dgpsSta", orNull: fix.differentialStation)
        item.field("age", orNull: age, decimals: 3)
    }

    /// `sky`'s entry in `/api/v1/sky`, written into the object `item`.
    public static func writeSky(_ sky: SkyView, device: String, into item: inout JSONWriter) {
        item.field("device", string: device)
        item.field("time", orNull: sky.time?.iso8601)
        item.field("hdop", orNull: sky.hdop, decimals: 2)
        item.field("vdop", orNull: sky.vdop, decimals: 2)
        item.field("pdop", orNull: sky.pdop, decimals: 2)
        item.field("tdop", orNull: sky.tdop, decimals: 2)
        item.field("gdop", orNull: sky.gdop, decimals: 2)
        item.field("xdop", orNull: sky.xdop, decimals: 2)
        item.field("ydop", orNull: sky.ydop, decimals: 2)
        item.field("nSat", sky.visibleCount)
        item.field("uSat", orNull: sky.usedCount)
        item.nested("satellites", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { satellites in
            for satellite in sky.satellites {
                satellites.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { entry in
                    entry.field("PRN", satellite.identity.prn)
                    entry.field("gnssid", satellite.identity.gnss.rawValue)
                    entry.field("svid", satellite.identity.svid)
                    entry.field("el", orNull: satellite.elevation, decimals: 1)
                    entry.field("az", orNull: satellite.azimuth, decimals: 1)
                    entry.field("ss", orNull: satellite.snr, decimals: 1)
                    entry.field("used", satellite.used)
                }
            }
        }
    }
}
