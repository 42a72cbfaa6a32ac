import GPSFix
import ServiceAddress

/// Where a device is, as users name it: `/dev/ttyUSB0` (a serial port),
/// `file:log.nmea` (a recorded log), or `gpsd://host:port[/device]` (a running gpsd;
/// `gpsd://[::1]:2947` for an IPv6 host).
public enum DeviceName: Hashable, Sendable, CustomStringConvertible {
    case serial(path: String)
    case file(path: String)
    case gpsd(host: String, port: Int, device: String?)

    /// Parses a device name; `nil` when it is none of the forms above.
    public init?(_ text: String) {
        if text.hasPrefix("file:") {
            self = .file(path: String(text.dropFirst("file:".count)))
        } else if text.hasPrefix("gpsd://") {
            let rest = text.dropFirst("gpsd://".count)
            let hostPort = rest.prefix { $0 != "/" }
            let device = rest.dropFirst(hostPort.count)
            // `[::1]:2947` and `[::1]`: an IPv6 host is written in brackets.
            guard let (host, portText) = ServiceAddress.splitHostAndPort(hostPort), !host.isEmpty else { return nil }
            let port = portText.map { Int($0) } ?? 2947
            guard let port, (1...65535).contains(port) else { return nil }
            self = .gpsd(host: String(host), port: port, device: device.isEmpty ? nil : String(device))
        } else if text.hasPrefix("/") {
            self = .serial(path: text)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .serial(let path): path
        case .file(let path): "file:" + path
        case .gpsd(let host, let port, let device):
            "gpsd://\(host.contains(":") ? "[\(host)]" : host):\(port)\(device ?? "")"
        }
    }

    /// The byte source for this device.
    public func source(settings: SerialSettings = SerialSettings()) -> any ByteSource {
        switch self {
        case .serial(let path): SerialPort(path: path, settings: settings)
        case .file(let path): FileSource(path: path)
        case .gpsd(let host, let port, let device): GPSDSource(host: host, port: port, device: device)
        }
    }
}
