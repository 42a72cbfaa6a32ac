/// The address of a service the daemon talks to, `SCHEME://[USER[:PASSWORD]@]HOST[:PORT][/PATH]`:
/// an MQTT broker, an NTRIP caster. One reading of such addresses, and one way of keeping
/// their passwords out of messages and of `ps`, for every output that takes one.
///
/// The user and password end at the **last** `@` of the address, so a password may hold
/// `/`, `@`, `:` and `%` as they are (`mqtt://fleet:pa/s@:s%@broker`): generated passwords
/// hold such characters, and a path never needs an `@` (an NTRIP mountpoint, an MQTT topic
/// prefix), so the address cannot be read two ways. A user ends at its first `:`. In the
/// user and the password, `%` and two hexadecimal digits is a percent escape (`%40` is
/// `@`; write a `%` followed by two such digits as `%25`); any other `%` is itself. The
/// host ends at the first `/` after the `@`; a host in brackets is an IPv6 address
/// (`[::1]:1883`). No message ever holds the password.
public struct ServiceAddress: Equatable, Sendable {
    /// What comes before `://`, as written (`mqtts`).
    public var scheme: String
    public var username: String?
    public var password: String?
    public var host: String
    /// The port, when the address names one; each service has its own default.
    public var port: Int?
    /// What follows the first `/` after the host, or `nil` when there is no `/`.
    public var path: String?

    /// Parses `url`. `role` names the host in the messages ("broker", "caster"), which
    /// name the address with its password masked.
    public init(parsing url: String, role: String) throws(ServiceAddressError) {
        let shown = Self.redacted(url)
        guard let schemeEnd = url.firstRange(of: "://") else {
            // Without one there is no telling where a password would be: the address is
            // not repeated.
            throw ServiceAddressError("the \(role)'s address has no scheme: write SCHEME://HOST")
        }
        scheme = String(url[..<schemeEnd.lowerBound])
        var rest = url[schemeEnd.upperBound...]
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                username = Self.percentDecoded(credentials[..<colon])
                password = Self.percentDecoded(credentials[credentials.index(after: colon)...])
            } else {
                username = Self.percentDecoded(credentials)
            }
        }
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        guard let (hostPart, portText) = Self.splitHostAndPort(rest) else {
            throw ServiceAddressError("'\(shown)': write an IPv6 \(role) host in brackets, as [::1]:PORT")
        }
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw ServiceAddressError("'\(shown)': the port must be a number from 1 to 65535")
            }
            port = number
        }
        guard !hostPart.isEmpty else { throw ServiceAddressError("'\(shown)' names no \(role) host") }
        host = String(hostPart)
    }

    /// `HOST[:PORT]` as every address, option and device name writes it, split: the one
    /// reader of such text. A host in brackets is an IPv6 address (`[::1]:2947`, `[::1]`,
    /// brackets removed); unbracketed text with more than one `:` is an IPv6 address
    /// without a port (`::1`); otherwise the port follows the only `:`. `nil` when a
    /// bracket does not close or something other than `:PORT` follows it. The port is
    /// returned as written, for the caller to check against its own range.
    public static func splitHostAndPort(_ text: Substring) -> (host: Substring, port: Substring?)? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":") else { return nil }
            return (host, rest.dropFirst())
        }
        let colons = text.count { $0 == ":" }
        guard colons == 1, let colon = text.firstIndex(of: ":") else { return (text, nil) }
        return (text[..<colon], text[text.index(after: colon)...])
    }

    /// The name a TLS client gives the server and checks its certificate against: `host`
    /// when it is a host name, `nil` for an IP address, which TLS does not name.
    public static func tlsServerName(of host: String) -> String? {
        host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
    }

    /// `url` with its password, if it holds one, masked as `***`: for messages.
    public static func redacted(_ url: String) -> String {
        var bytes = Array(url.utf8)
        guard let range = passwordRange(in: bytes) else { return url }
        bytes.replaceSubrange(range, with: Array("***".utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Where the password is in `text` when it holds an address with one (offsets from
    /// its start): what the daemon overwrites in its own command line, and masks in the
    /// configuration it prints and in its messages. Text without `://` that holds
    /// `USER:PASSWORD@` is read as an address whose scheme was forgotten or mistyped
    /// (`rover:pw@caster/M`, `ntrip:/u:pw@caster/M`): its password is found all the same.
    public static func passwordRange(in text: some RandomAccessCollection<UInt8>) -> Range<Int>? {
        let bytes = Array(text)
        let separator = Array("://".utf8)
        let scheme = (0..<max(0, bytes.count - 2)).first { bytes[$0...].starts(with: separator) }
        let authorityStart = scheme.map { $0 + separator.count } ?? 0
        // The same reading as ``init(parsing:role:)``: the user and password end at the last `@`.
        guard let at = bytes[authorityStart...].lastIndex(of: UInt8(ascii: "@")),
            let colon = bytes[authorityStart..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
        else { return nil }
        return (colon + 1)..<at
    }

    /// `text` with each `%` and two hexadecimal digits decoded; any other `%` kept.
    private static func percentDecoded(_ text: Substring) -> String {
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count, let high = hexValue(utf8[index + 1]),
                let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
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

/// An address that cannot be used, with what is wrong with it; the text never holds the
/// password.
public struct ServiceAddressError: Error, Equatable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
