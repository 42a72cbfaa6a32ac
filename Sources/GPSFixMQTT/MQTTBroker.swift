/// Where to publish: `mqtt://[USER[:PASSWORD]@]HOST[:PORT][/PREFIX]`, or `mqtts://` for
/// TLS (port 8883 unless given).
public struct MQTTBroker: Equatable, Sendable {
    public var host: String
    public var port: Int
    public var usesTLS: Bool
    public var username: String?
    /// From the address, or (better, so that it stays out of `ps`) from a file or the
    /// environment: see ``MQTTBroker/with(password:)``.
    public var password: String?
    /// The topics' prefix (`fleet/boat7`); `nil` for the default, `gpsfix/HOSTNAME`.
    public var prefix: String?

    /// Parses an `mqtt://` or `mqtts://` address; percent escapes are decoded in the user
    /// and the password, so either may hold `@`, `:` or `/`.
    public init(url: String) throws(MQTTAddressError) {
        // Errors name the address without its password.
        let (given, url) = (url, Self.redacted(url))
        let scheme: Substring
        var rest: Substring
        if given.hasPrefix("mqtt://") {
            (scheme, rest) = ("mqtt", given.dropFirst("mqtt://".count))
        } else if given.hasPrefix("mqtts://") {
            (scheme, rest) = ("mqtts", given.dropFirst("mqtts://".count))
        } else {
            throw MQTTAddressError("'\(url)' is not an MQTT address: write mqtt://HOST[:PORT][/PREFIX] or mqtts://...")
        }
        usesTLS = scheme == "mqtts"
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...].split(separator: "/", omittingEmptySubsequences: true)
            prefix = path.isEmpty ? nil : path.joined(separator: "/")
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                username = try Self.percentDecoded(credentials[..<colon])
                password = try Self.percentDecoded(credentials[credentials.index(after: colon)...])
            } else {
                username = try Self.percentDecoded(credentials)
            }
        }
        var hostPart = rest
        port = usesTLS ? 8883 : 1883
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else {
                throw MQTTAddressError("'\(url)': the port must be a number from 1 to 65535")
            }
            port = number
            hostPart = rest[..<colon]
        }
        if hostPart.hasPrefix("["), hostPart.hasSuffix("]") { hostPart = hostPart.dropFirst().dropLast() }
        guard !hostPart.isEmpty else { throw MQTTAddressError("'\(url)' names no broker host") }
        host = String(hostPart)
        if let prefix, prefix.contains(where: { $0 == "+" || $0 == "#" }) {
            throw MQTTAddressError("'\(url)': a topic prefix cannot hold the wildcards + or #")
        }
    }

    /// The same broker with `password` (read from a file or the environment) in place of
    /// the address's.
    public func with(password: String?) -> MQTTBroker {
        var broker = self
        if let password { broker.password = password }
        return broker
    }

    /// The address for logs: never the password.
    public var description: String {
        let user = username.map { "\($0)@" } ?? ""
        return "\(usesTLS ? "mqtts" : "mqtt")://\(user)\(host):\(port)"
    }

    /// `url` with the password, if it holds one, masked: for messages.
    static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let hostAndUser = url[schemeEnd.upperBound...].prefix { $0 != "/" }
        guard let at = hostAndUser.lastIndex(of: "@") else { return url }
        let authority = url[schemeEnd.upperBound..<at]
        guard let colon = authority.firstIndex(of: ":") else { return url }
        return String(url[..<authority.index(after: colon)]) + "****" + String(url[at...])
    }

    private static func percentDecoded(_ text: Substring) throws(MQTTAddressError) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                throw MQTTAddressError("the user or password: a % must be followed by two hexadecimal digits")
            }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// An MQTT address that cannot be used, with what is wrong with it.
public struct MQTTAddressError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
