/// The address of a service the daemon talks to, `SCHEME://[USER[:PASSWORD]@]HOST[:PORT][/PATH]`:
/// an MQTT broker, an NTRIP caster. One reading of such addresses, and one way of keeping
/// their passwords out of messages and of `ps`, for every output that takes one.
///
/// Percent escapes are decoded in the user and the password, so either may hold `@`, `:`
/// or `/`. A host in brackets is an IPv6 address (`[::1]:1883`).
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
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                username = try Self.percentDecoded(credentials[..<colon], in: shown)
                password = try Self.percentDecoded(credentials[credentials.index(after: colon)...], in: shown)
            } else {
                username = try Self.percentDecoded(credentials, in: shown)
            }
        }
        var hostPart = rest
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else {
                throw ServiceAddressError("'\(shown)': the port must be a number from 1 to 65535")
            }
            port = number
            hostPart = rest[..<colon]
        }
        if hostPart.hasPrefix("["), hostPart.hasSuffix("]") { hostPart = hostPart.dropFirst().dropLast() }
        guard !hostPart.isEmpty else { throw ServiceAddressError("'\(shown)' names no \(role) host") }
        host = String(hostPart)
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
    /// configuration it prints.
    public static func passwordRange(in text: some RandomAccessCollection<UInt8>) -> Range<Int>? {
        let bytes = Array(text)
        let separator = Array("://".utf8)
        guard let scheme = (0..<max(0, bytes.count - 2)).first(where: { bytes[$0...].starts(with: separator) }) else {
            return nil
        }
        let authorityStart = scheme + separator.count
        let authorityEnd = bytes[authorityStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
        guard let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")),
            let colon = bytes[authorityStart..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
        else { return nil }
        return (colon + 1)..<at
    }

    private static func percentDecoded(_ text: Substring, in shown: String) throws(ServiceAddressError) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                throw ServiceAddressError("'\(shown)': a % in the user or password must be followed by two hexadecimal digits")
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

/// An address that cannot be used, with what is wrong with it; the text never holds the
/// password.
public struct ServiceAddressError: Error, Equatable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
