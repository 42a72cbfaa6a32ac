import GPSFix

/// What a client session has asked to be sent: gpsd's WATCH settings.
public struct WatchSettings: Equatable, Sendable {
    public var enable = false
    public var json = false
    public var nmea = false
    public var raw = 0
    public var scaled = false
    public var split24 = false
    public var pps = false
    public var timing = false
    /// Only this device's reports, when set.
    public var device: String?

    public init() {}

    /// Applies a request as gpsd's `json_watch_read` does: `json`, `nmea` and `raw` keep
    /// their values unless named; every other option takes the request's value or its
    /// default (`pps`, `scaled`, `split24`, `timing` false, `device` none), and `enable`,
    /// left out, turns watching on (gpsmon sends `?WATCH={"raw":2,"pps":true}`). As with
    /// gpsd 3.22, enabling without `json` on a connection that never asked for it streams
    /// no reports: only `"json":true` does.
    ///
    /// `scaled`, `split24` and `timing` are kept and echoed but change nothing: gpsd's
    /// `scaled` and `split24` concern AIS and subframe reports, which an NMEA position
    /// receiver does not produce, and `timing` is a latency-debugging aid of gpsd's own
    /// builds. `pps` asks for the time service's TOFF and PPS reports.
    public mutating func apply(_ request: WatchRequest) {
        enable = request.enable ?? true
        if let value = request.json { json = value }
        if let value = request.nmea { nmea = value }
        if let value = request.raw { raw = value }
        scaled = request.scaled ?? false
        split24 = request.split24 ?? false
        pps = request.pps ?? false
        timing = request.timing ?? false
        device = request.device
    }

    /// Whether the session asked for what devices send to be streamed to it: their
    /// reports, sentences or bytes (not only the time service's reports).
    public var streamsReportsOrSentences: Bool { enable && (json || nmea || raw > 0) }

    /// Whether the session wants reports (TPV, SKY, ...) of `device`.
    public func wantsReports(of device: String) -> Bool { enable && json && self.device.map { $0 == device } ?? true }

    /// Whether the session wants the time service's TOFF and PPS reports of `device`
    /// (`pps`; gpsd sends them whatever `json` and `raw` say, and gpsmon reads them with
    /// `raw:2`).
    public func wantsTimeReports(of device: String) -> Bool { enable && pps && self.device.map { $0 == device } ?? true }

    /// Whether the session wants the accepted sentences of `device` (`nmea`, or `raw:1`),
    /// each ended CR LF.
    public func wantsSentences(of device: String) -> Bool {
        enable && (nmea || raw == 1) && raw < 2 && self.device.map { $0 == device } ?? true
    }

    /// Whether the session wants the bytes of `device` verbatim, as read (`raw:2`): what
    /// the device sent, refused lines and noise included.
    public func wantsBytes(of device: String) -> Bool {
        enable && raw >= 2 && self.device.map { $0 == device } ?? true
    }
}

/// A device as the protocol describes it in DEVICE and DEVICES reports: only what is
/// known of it; whatever is `nil` is left out of the report, as gpsd leaves out what it
/// has not learned.
public struct DeviceInfo: Equatable, Sendable {
    public var path: String
    /// The driver that reads it (`NMEA0183`, `u-blox`), once it has sent a valid frame.
    public var driver: String?
    /// What the receiver said of itself (u-blox MON-VER), as gpsd's `subtype` and `subtype1`.
    public var subtype: String?
    public var subtype1: String?
    /// gpsd's `native`: whether the driver reads the receiver's binary protocol (1) or
    /// NMEA 0183 (0). Said once ``driver`` is known.
    public var native = false
    /// When the first valid sentence arrived, or when the device was opened again after
    /// being lost; `nil` while the device has sent none.
    public var activated: String?
    /// Whether the device is closed: lost (the provider trying to reopen it) or its data
    /// over. gpsd then deactivates it: its notice says `"activated":0`, and its answers
    /// to `?DEVICE` and `?DEVICES` have no `activated`.
    public var closed: Bool = false
    /// The serial line's settings as applied (the speed autobaud found included); `nil`
    /// for devices that are no serial line (files, gpsd) and before the port is open.
    public var line: SerialLine?
    /// Seconds between the receiver's cycles, measured from its fix times.
    public var cycle: Double?
    /// GPSFix's own field: whether the device is reading now (`false` while lost or silent).
    public var online: Bool = false

    public init(path: String) {
        self.path = path
    }
}

/// The reports a server sends a session: VERSION, DEVICE(S), WATCH, POLL, ERROR.
public enum SessionReport {
    /// The protocol version GPSFix speaks: gpsd's 3.14, which every client accepts.
    public static let protocolMajor = 3
    public static let protocolMinor = 14

    /// The VERSION report: the `release`, and as gpsd's `rev` the source `revision` the
    /// binary was built from, left out when it is not known (libgps and the Python module
    /// default it).
    public static func version(release: String, revision: String?) -> [UInt8] {
        var json = JSONWriter(class: "VERSION")
        json.field("release", string: release)
        if let revision { json.field("rev", string: revision) }
        json.field("proto_major", protocolMajor)
        json.field("proto_minor", protocolMinor)
        return json.finish()
    }

    /// A DEVICE report. For a closed device, the `notice` pushed to watchers when it
    /// changes says `"activated":0`, as gpsd's notice of a device it deactivates; an answer
    /// to `?DEVICE` has no `activated`, as gpsd's answer for such a device.
    public static func device(_ device: DeviceInfo, notice: Bool = false) -> [UInt8] {
        var json = JSONWriter(class: "DEVICE")
        write(device, into: &json, notice: notice)
        return json.finish()
    }

    public static func devices(_ devices: [DeviceInfo]) -> [UInt8] {
        var json = JSONWriter(class: "DEVICES")
        json.nested("devices", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { array in
            for device in devices {
                array.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { object in
                    object.field("class", string: "DEVICE")
                    write(device, into: &object)
                }
            }
        }
        return json.finish()
    }

    /// The longest `subtype` and `subtype1` written, in UTF-8 bytes: libgps 3.22 keeps each
    /// in 128 bytes and refuses a DEVICE whose string is longer, and with it the whole
    /// DEVICES; gpsd cuts them to this. A receiver's own text (a u-blox's MON-VER
    /// extensions, a Trimble's product name) can be longer.
    public static let maximumSubtypeBytes = 127

    /// `text` cut to ``maximumSubtypeBytes``, at a character's end.
    private static func clipped(_ text: String) -> String {
        guard text.utf8.count > maximumSubtypeBytes else { return text }
        var count = 0
        return String(String.UnicodeScalarView(text.unicodeScalars.prefix { scalar in
            count += scalar.utf8.count
            return count <= maximumSubtypeBytes
        }))
    }

    /// gpsd's fields in gpsd's order.
    private static func write(_ device: DeviceInfo, into json: inout JSONWriter, notice: Bool = false) {
        json.field("path", string: device.path)
        if let driver = device.driver { json.field("driver", string: driver) }
        if let subtype = device.subtype { json.field("subtype", string: clipped(subtype)) }
        if let subtype1 = device.subtype1 { json.field("subtype1", string: clipped(subtype1)) }
        if device.closed {
            if notice { json.field("activated", 0) }
        } else if let activated = device.activated {
            json.field("activated", string: activated)
        }
        // gpsd's `flags`: 1 once GPS data has been seen, which is what activates a device.
        json.field("flags", device.activated == nil ? 0 : 1)
        if device.driver != nil { json.field("native", device.native ? 1 : 0) }
        if let line = device.line {
            json.field("bps", line.bps)
            json.field("parity", string: String(line.parity))
            json.field("stopbits", line.stopBits)
        }
        if let cycle = device.cycle { json.field("cycle", cycle, decimals: 2) }
        json.field("online", device.online)
    }

    public static func watch(_ settings: WatchSettings) -> [UInt8] {
        var json = JSONWriter(class: "WATCH")
        json.field("enable", settings.enable)
        json.field("json", settings.json)
        json.field("nmea", settings.nmea)
        json.field("raw", settings.raw)
        json.field("scaled", settings.scaled)
        json.field("timing", settings.timing)
        json.field("split24", settings.split24)
        json.field("pps", settings.pps)
        if let device = settings.device { json.field("device", string: device) }
        return json.finish()
    }

    /// POLL: the latest fix, error estimate and sky view of each active device.
    public static func poll(time: GPSTime, active: Int, fixes: [(String, Fix)], estimates: [(String, ErrorEstimate)],
                            skies: [(String, SkyView)]) -> [UInt8] {
        var json = JSONWriter(class: "POLL")
        json.time("time", time)
        json.field("active", active)
        json.embed("tpv", fixes.map { GPSDReport.tpv($0.1, device: $0.0) })
        json.embed("gst", estimates.map { GPSDReport.gst($0.1, device: $0.0) })
        json.embed("sky", skies.map { GPSDReport.sky($0.1, device: $0.0) })
        return json.finish()
    }

    public static func error(_ message: String) -> [UInt8] {
        var json = JSONWriter(class: "ERROR")
        json.field("message", string: message)
        return json.finish()
    }
}

extension JSONWriter {
    /// An array of complete reports (each ending `}\r\n`), embedded as objects.
    mutating func embed(_ name: StaticString, _ reports: [[UInt8]]) {
        key(name)
        appendByte(UInt8(ascii: "["))
        for (index, report) in reports.enumerated() {
            if index > 0 { appendByte(UInt8(ascii: ",")) }
            for byte in report.dropLast(2) { appendByte(byte) }
        }
        appendByte(UInt8(ascii: "]"))
    }
}
