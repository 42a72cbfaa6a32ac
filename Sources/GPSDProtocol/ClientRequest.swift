/// One request from a gpsd client: `?NAME;` or `?NAME={json}`, parsed.
public enum ClientRequest: Equatable, Sendable {
    case version
    case devices
    /// `?WATCH;` reports the current settings; `?WATCH={...}` changes them first.
    case watch(WatchRequest?)
    case poll
    /// `?DEVICE;` reports every device; `?DEVICE={...}` names one (and would set it).
    case device(DeviceRequest?)
    /// `?STATUS;`, GPSFix's own: the clients' and devices' counters and the services'
    /// state, the document of the HTTP API's `/api/v1/status` (`gpsfix doctor` reads it).
    case status
    /// Anything else, answered with an ERROR naming it.
    case unrecognized(String)

    /// The requests on one line, in order.
    ///
    /// As gpsd does: a line that does not start with `?` is ignored; several requests may
    /// share a line, separated by optional spaces (a CR or LF left on the line is a space); a bare `?NAME` needs its `;`, but after
    /// a JSON argument the `;` is optional (the Python module, gpscsv and gpsmon leave it
    /// out). The first malformed request ends the line with an ``unrecognized`` naming it.
    public static func parse(line: some Collection<UInt8>) -> [ClientRequest] {
        let bytes = Array(line)
        var index = 0
        // A request split after its JSON argument leaves the `;` gpsd ignores to start the
        // next line.
        while index < bytes.count, bytes[index] == UInt8(ascii: ";") { index += 1 }
        let lineStart = index
        var requests: [ClientRequest] = []
        while true {
            while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count else { break }
            guard bytes[index] == UInt8(ascii: "?") else {
                if requests.isEmpty && index == lineStart { return [] }
                requests.append(.unrecognized(String(decoding: bytes[index...], as: UTF8.self)))
                break
            }
            let start = index
            index += 1
            let nameStart = index
            while index < bytes.count, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[index]) { index += 1 }
            let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
            var argument: JSONObject?
            if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                guard let (object, end) = JSONObject.parse(bytes, from: index + 1) else {
                    requests.append(.unrecognized(String(decoding: bytes[start...], as: UTF8.self)))
                    break
                }
                argument = object
                index = end
                if index < bytes.count, bytes[index] == UInt8(ascii: ";") { index += 1 }
            } else if index < bytes.count, bytes[index] == UInt8(ascii: ";") {
                index += 1
            } else {
                requests.append(.unrecognized(String(decoding: bytes[start...], as: UTF8.self)))
                break
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            switch (name, argument) {
            case ("VERSION", nil): requests.append(.version)
            case ("DEVICES", nil): requests.append(.devices)
            case ("POLL", nil): requests.append(.poll)
            case ("STATUS", nil): requests.append(.status)
            case ("WATCH", let object): requests.append(.watch(object.map(WatchRequest.init)))
            case ("DEVICE", let object): requests.append(.device(object.map(DeviceRequest.init)))
            default: requests.append(.unrecognized(text))
            }
        }
        return requests
    }

    /// Spaces between requests, and a line ending left on the line.
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }
}

/// The options of `?WATCH={...}`; each is `nil` when the request leaves it as it is.
public struct WatchRequest: Equatable, Sendable {
    public var enable: Bool?
    public var json: Bool?
    public var nmea: Bool?
    public var raw: Int?
    public var scaled: Bool?
    public var split24: Bool?
    public var pps: Bool?
    public var timing: Bool?
    public var device: String?

    public init(_ object: JSONObject) {
        enable = object.bool("enable")
        json = object.bool("json")
        nmea = object.bool("nmea")
        raw = object.int("raw")
        scaled = object.bool("scaled")
        split24 = object.bool("split24")
        pps = object.bool("pps")
        timing = object.bool("timing")
        // An empty path is every device, as gpsd reads it (libgps sends one for a source
        // named `host:port:`).
        device = object.string("device").flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The options of `?DEVICE={...}`.
public struct DeviceRequest: Equatable, Sendable {
    public var path: String?
    /// The settings the request names (`bps`, `parity`, `stopbits`, `native`, `cycle`), as given.
    public var settings: [String: JSONObject.Value]
    /// Whether the request carries bytes for the receiver (`hexdata`, as `ubxtool` sends
    /// its messages through gpsd).
    public var writesToReceiver: Bool

    public init(_ object: JSONObject) {
        path = object.string("path")
        settings = object.values.filter { ["bps", "parity", "stopbits", "native", "cycle"].contains($0.key) }
        writesToReceiver = object.values["hexdata"] != nil
    }

    /// Whether the request asks `device` to change a setting: one it names at another
    /// value than the device has (a client that sends back the DEVICE it read changes
    /// nothing, and gpsd answers it with the DEVICE).
    public func changes(_ device: DeviceInfo) -> Bool {
        settings.contains { name, value in
            switch (name, value) {
            case ("bps", .number(let bps)): device.line.map { Double($0.bps) != bps } ?? true
            case ("parity", .string(let parity)): device.line.map { String($0.parity) != parity } ?? true
            case ("stopbits", .number(let bits)): device.line.map { Double($0.stopBits) != bits } ?? true
            case ("native", .number(let native)): native != (device.native ? 1 : 0)
            // As DEVICE writes it, to the hundredth.
            case ("cycle", .number(let cycle)): device.cycle.map { abs($0 - cycle) >= 0.005 } ?? true
            default: true
            }
        }
    }
}

/// A flat JSON object, as gpsd's requests carry: strings, numbers, booleans, null.
public struct JSONObject: Equatable, Sendable {
    public enum Value: Equatable, Sendable {
        case string(String), number(Double), bool(Bool), null
    }

    public var values: [String: Value]

    public func bool(_ key: String) -> Bool? { if case .bool(let value)? = values[key] { value } else { nil } }
    public func string(_ key: String) -> String? { if case .string(let value)? = values[key] { value } else { nil } }
    public func int(_ key: String) -> Int? {
        switch values[key] {
        case .number(let value)?: Int(exactly: value)
        case .bool(let value)?: value ? 1 : 0
        default: nil
        }
    }

    /// Parses an object starting at `start`; returns it and the index after its `}`.
    static func parse(_ bytes: [UInt8], from start: Int) -> (JSONObject, Int)? {
        var parser = Parser(bytes: bytes, index: start)
        guard let object = parser.object() else { return nil }
        return (object, parser.index)
    }

    private struct Parser {
        let bytes: [UInt8]
        var index: Int

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0D, 0x0A].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func object() -> JSONObject? {
            guard expect(UInt8(ascii: "{")) else { return nil }
            var values: [String: Value] = [:]
            if expect(UInt8(ascii: "}")) { return JSONObject(values: values) }
            repeat {
                skipSpace()
                guard let key = string(), expect(UInt8(ascii: ":")), let value = value() else { return nil }
                values[key] = value
            } while expect(UInt8(ascii: ","))
            guard expect(UInt8(ascii: "}")) else { return nil }
            return JSONObject(values: values)
        }

        mutating func value() -> Value? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default:
                let start = index
                while index < bytes.count, "+-.eE0123456789".utf8.contains(bytes[index]) { index += 1 }
                return Double(String(decoding: bytes[start..<index], as: UTF8.self)).map(Value.number)
            }
        }

        /// The character of a `\uXXXX` escape (the index after the `u`), a UTF-16 pair
        /// of escapes joined; `nil` when malformed or a lone half of a pair.
        mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let first = hexQuad() else { return nil }
            guard (0xD800...0xDBFF).contains(first) else { return Unicode.Scalar(first) }
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                return nil
            }
            index += 2
            guard let second = hexQuad(), (0xDC00...0xDFFF).contains(second) else { return nil }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
        }

        /// Four hexadecimal digits.
        mutating func hexQuad() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            let digits = bytes[index..<(index + 4)]
            guard digits.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                let value = UInt32(String(decoding: digits, as: UTF8.self), radix: 16)
            else { return nil }
            index += 4
            return value
        }

        mutating func literal(_ text: String, _ value: Value) -> Value? {
            let word = Array(text.utf8)
            guard index + word.count <= bytes.count, Array(bytes[index..<(index + word.count)]) == word else { return nil }
            index += word.count
            return value
        }

        mutating func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var result: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: result, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escaped = bytes[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "n"): result.append(0x0A)
                    case UInt8(ascii: "t"): result.append(0x09)
                    case UInt8(ascii: "r"): result.append(0x0D)
                    case UInt8(ascii: "b"): result.append(0x08)
                    case UInt8(ascii: "f"): result.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        result.append(contentsOf: String(Character(scalar)).utf8)
                    default: result.append(escaped)
                    }
                default: result.append(byte)
                }
            }
            return nil
        }
    }
}
