import GPSDProtocol
import GPSFix

/// OwnTracks' location message, which OwnTracks' recorder and Home Assistant's OwnTracks
/// integration read from `owntracks/USER/DEVICE` as they are:
/// `{"_type":"location","tid":"S0","lat":..,"lon":..,"tst":..,"acc":..,"alt":..,"vel":..,"cog":..}`.
///
/// Units are OwnTracks': `tst` in seconds since 1970, `acc` and `alt` in whole metres,
/// `vel` in whole km/h, `cog` in whole degrees. What the fix does not know is left out.
public enum OwnTracksLocation {
    /// The message for `fix`, ended by CR LF like a gpsd report; `nil` unless the fix has
    /// a position (2D or better) and a time.
    public static func payload(for fix: Fix, trackerID: String) -> [UInt8]? {
        guard fix.mode >= .twoDimensional, let latitude = fix.latitude, let longitude = fix.longitude,
            let time = fix.time
        else { return nil }
        var json = JSONWriter(typeField: "_type", type: "location")
        json.field("tid", string: trackerID)
        json.field("lat", latitude, decimals: 7)
        json.field("lon", longitude, decimals: 7)
        json.field("tst", time.daysSince1970 * 86_400 + Int(time.time.nanosecondsSinceMidnight / 1_000_000_000))
        json.field("acc", fix.horizontalError, decimals: 0)
        json.field("alt", fix.altitudeMSL, decimals: 0)
        json.field("vel", fix.speed.map { $0 * 3.6 }, decimals: 0)
        // 359.6 rounds to 0, not 360.
        json.field("cog", fix.track.map { $0.rounded() >= 360 ? 0 : $0 }, decimals: 0)
        return json.finish()
    }

    /// OwnTracks' two-character tracker id, from the device's name: its last two letters
    /// or digits (`ttyUSB0` → `B0`).
    public static func trackerID(for deviceName: String) -> String {
        let characters = deviceName.filter { $0.isLetter || $0.isNumber }
        return characters.isEmpty ? "gp" : String(characters.suffix(2))
    }
}
