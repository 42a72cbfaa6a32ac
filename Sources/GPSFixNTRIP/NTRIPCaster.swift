import NTRIPCasting
import ServiceAddress

/// Where corrections come from: `ntrip://[USER[:PASSWORD]@]HOST[:PORT]/MOUNT`, or
/// `ntrips://` for TLS. The port is 2101 (NTRIP's) unless given, for both.
///
/// Without a mountpoint the address names the caster alone, for its source table.
public struct NTRIPCaster: Equatable, Sendable {
    public var host: String
    public var port: Int
    public var usesTLS: Bool
    public var username: String?
    /// From the address, or (so that it stays out of `ps`) from a file or the
    /// environment: see ``with(password:)``.
    public var password: String?
    /// The mountpoint, without its slash; empty for the caster's source table.
    public var mountpoint: String

    /// Parses an `ntrip://` or `ntrips://` address as ``ServiceAddress`` reads one: the
    /// password may hold `@`, `:`, `/` and `%` as they are.
    public init(url given: String) throws(NTRIPError) {
        // Errors name the address without its password.
        let url = ServiceAddress.redacted(given)
        guard given.hasPrefix("ntrip://") || given.hasPrefix("ntrips://") else {
            throw .address("'\(url)' is not an NTRIP address: write ntrip://[USER@]HOST[:PORT]/MOUNT or ntrips://...")
        }
        let address: ServiceAddress
        do throws(ServiceAddressError) {
            address = try ServiceAddress(parsing: given, role: "caster")
        } catch {
            throw .address(error.description)
        }
        mountpoint = address.path ?? ""
        guard mountpoint.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }) else {
            throw .address("'\(url)': a mountpoint is one name of printable ASCII, as /RTCM3")
        }
        usesTLS = address.scheme == "ntrips"
        host = address.host
        port = address.port ?? 2101
        username = address.username
        password = address.password
    }

    /// The same caster with `password` (read from a file or the environment) in place of
    /// the address's.
    public func with(password: String?) -> NTRIPCaster {
        var caster = self
        if let password { caster.password = password }
        return caster
    }

    /// The address for logs and errors: never the password.
    public var description: String {
        let user = username.map { "\($0)@" } ?? ""
        return "\(usesTLS ? "ntrips" : "ntrip")://\(user)\(host):\(port)/\(mountpoint)"
    }

    /// `Host`'s value: the host (an IPv6 address in brackets) and the port.
    var hostHeader: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// `Authorization`'s value: Basic, with the user (empty when none) and the password.
    var basicAuthorization: String { "Basic \(Base64.encode(Array("\(username ?? ""):\(password ?? "")".utf8)))" }

    /// `text`, a caster's answer to be shown, with the password masked, as sent and as
    /// Basic carries it: a caster may echo either.
    func masked(_ text: String) -> String {
        guard let password, !password.isEmpty else { return text }
        var masked = text
        // The Base64 first: the password could be part of it, and masking that part would
        // leave the rest of the Base64 shown.
        for secret in [String(basicAuthorization.dropFirst("Basic ".count)), password] {
            masked = masked.replacing(secret, with: "***")
        }
        return masked
    }

    /// The request for the mountpoint (or, without one, the source table): NTRIP 2.0,
    /// which a 1.0 caster also answers (it reads the request line and `Authorization`).
    public func request(userAgent: String) -> [UInt8] {
        var lines = [
            "GET /\(mountpoint) HTTP/1.1",
            "Host: \(hostHeader)",
            "Ntrip-Version: Ntrip/2.0",
            "User-Agent: NTRIP \(userAgent)",
        ]
        if username != nil { lines.append("Authorization: \(basicAuthorization)") }
        lines.append("Connection: close")
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }
}

/// Why an NTRIP address or exchange failed. The text never holds a password.
public enum NTRIPError: Error, Equatable, CustomStringConvertible {
    /// The address is malformed.
    case address(String)
    /// The caster refused the request (a wrong password, no such mountpoint).
    case refused(String)
    /// The caster answered something that is not NTRIP.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .address(let text), .refused(let text), .protocolViolation(let text): text
        }
    }
}
