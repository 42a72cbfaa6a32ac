import GPSDProtocol
import GPSFix

/// A report as the hub sent it to the sockets: what it is, of which device, and the very
/// bytes (gpsd JSON, `\r\n` included) the watchers got, encoded once and shared.
public struct PublishedReport: Sendable {
    public enum Content: Sendable {
        case tpv(Fix)
        case sky(SkyView)
        /// The device's state changed (activated, lost, silent, back).
        case device(DeviceInfo)
        /// What the time service did with a sample (gpsd's TOFF or PPS).
        case time(TimeReport)
    }

    /// The device's path, as configured.
    public var device: String
    public var content: Content
    public var json: [UInt8]

    public init(device: String, content: Content, json: [UInt8]) {
        self.device = device
        self.content = content
        self.json = json
    }
}

/// Something beyond the sockets that takes every TPV, SKY, DEVICE, TOFF and PPS report of
/// every device: the MQTT publisher, Traccar's forwarder.
///
/// ``receive(_:)`` is called on the server's event loop, in the order of the reports,
/// so it must only hand the report over (to a bounded queue of its own) and return.
public protocol ReportSubscriber: Sendable {
    func receive(_ report: PublishedReport)
}
