import GPSDProtocol
import GPSFix

/// A Home Assistant MQTT device tracker's attributes for a fix: the JSON object its
/// `json_attributes_topic` carries, `{"latitude":..,"longitude":..,"gps_accuracy":..,...}`,
/// with no line end. Units are Home Assistant's: degrees, metres, metres per second.
public enum HomeAssistantAttributes {
    /// The attributes of `fix`; `nil` unless it has a position (2D or better).
    public static func payload(for fix: Fix) -> ArraySlice<UInt8>? {
        guard fix.mode >= .twoDimensional, let latitude = fix.latitude, let longitude = fix.longitude else { return nil }
        var json = JSONWriter(objectWithCapacity: 160)
        json.field("latitude", latitude, decimals: 7)
        json.field("longitude", longitude, decimals: 7)
        json.field("gps_accuracy", fix.horizontalError, decimals: 1)
        json.field("altitude", fix.altitudeMSL, decimals: 1)
        json.field("speed", fix.speed, decimals: 2)
        json.field("course", fix.track, decimals: 1)
        return json.finish().dropLast(2)
    }
}
