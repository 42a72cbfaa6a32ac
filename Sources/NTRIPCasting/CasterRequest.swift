/// An NTRIP client's request to a caster, from its head: NTRIP 1.0 (`GET /MOUNT HTTP/1.0`,
/// answered with `ICY 200 OK` and the bare stream) or 2.0 (`Ntrip-Version: Ntrip/2.0`,
/// answered in HTTP/1.1 with a chunked stream).
public struct CasterRequest: Sendable, Equatable {
    /// The method: `GET` for a stream or the source table; a source pushing to a caster
    /// says `SOURCE` (1.0) or `POST` (2.0).
    public var method: String
    /// The mountpoint asked for, without its slash; empty for the source table (`GET /`).
    public var mountpoint: String
    /// Whether the client speaks NTRIP 2.0.
    public var isVersion2: Bool
    /// The `Authorization` header's value, as sent.
    public var authorization: String?

    /// The longest head read: request line and headers together.
    public static let maximumHeadLength = 4096

    /// Reads a head (the request line and headers, up to the empty line, either line end
    /// accepted); `nil` when it is not a request.
    public init?(head: some Collection<UInt8>) {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.makeIterator()
        guard let requestLine = lines.next() else { return nil }
        let words = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count >= 2 else { return nil }
        method = String(words[0])
        var target = Substring(words[1])
        // An absolute form (http://host/MOUNT) names the mountpoint after the host.
        if let scheme = target.firstRange(of: "://") {
            target = target[scheme.upperBound...]
            target = target.firstIndex(of: "/").map { target[$0...] } ?? ""
        }
        mountpoint = String(target.drop { $0 == "/" }.prefix { $0 != "?" && $0 != ";" })
        isVersion2 = false
        authorization = nil
        while let line = lines.next(), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
            switch name {
            case "ntrip-version": isVersion2 = value.lowercased().hasPrefix("ntrip/2")
            case "authorization": authorization = value
            default: break
            }
        }
    }

    /// The end of the head in `bytes` (the index after its empty line), if it is all there.
    public static func headEnd(in bytes: [UInt8]) -> Int? {
        var index = 0
        while let newline = bytes[index...].firstIndex(of: 10) {
            let next = newline + 1
            if next < bytes.count, bytes[next] == 10 { return next + 1 }
            if next + 1 < bytes.count, bytes[next] == 13, bytes[next + 1] == 10 { return next + 2 }
            index = next
        }
        return nil
    }

    /// The user and password of a Basic `Authorization`; `nil` for another scheme or a
    /// malformed value.
    public var basicCredentials: (user: String, password: String)? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = Base64.decode(parts[1]) else { return nil }
        guard let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return (String(decoding: decoded[..<colon], as: UTF8.self), String(decoding: decoded[(colon + 1)...], as: UTF8.self))
    }
}

/// Base64 (RFC 4648, padded), as Basic authentication carries a user and password.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The bytes `text` encodes; `nil` when it is not Base64.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var values: [UInt8] = []
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(value))
        }
        guard values.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let group = values[index..<min(index + 4, values.count)]
            var bits = 0
            for value in group { bits = bits << 6 | Int(value) }
            bits <<= 6 * (4 - group.count)
            for shift in [16, 8, 0].prefix(group.count - 1) { bytes.append(UInt8(truncatingIfNeeded: bits >> shift)) }
            index += 4
        }
        return bytes
    }

    /// `bytes` in Base64, padded.
    public static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let group = bytes[index..<min(index + 3, bytes.count)]
            var bits = 0
            for byte in group { bits = bits << 8 | Int(byte) }
            bits <<= 8 * (3 - group.count)
            for position in 0..<4 {
                text.append(position <= group.count ? alphabet[(bits >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }
}
