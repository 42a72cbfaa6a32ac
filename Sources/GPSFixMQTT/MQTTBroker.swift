import ServiceAddress

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

    /// Parses an `mqtt://` or `mqtts://` address as ``ServiceAddress`` reads one: the
    /// password may hold `@`, `:`, `/` and `%` as they are.
    public init(url: String) throws(MQTTAddressError) {
        // Errors name the address without its password.
        let shown = ServiceAddress.redacted(url)
        guard url.hasPrefix("mqtt://") || url.hasPrefix("mqtts://") else {
            throw MQTTAddressError("'\(shown)' is not an MQTT address: write mqtt://HOST[:PORT][/PREFIX] or mqtts://...")
        }
        let address: ServiceAddress
        do throws(ServiceAddressError) {
            address = try ServiceAddress(parsing: url, role: "broker")
        } catch {
            throw MQTTAddressError(error.description)
        }
        usesTLS = address.scheme == "mqtts"
        host = address.host
        port = address.port ?? (usesTLS ? 8883 : 1883)
        username = address.username
        password = address.password
        let path = (address.path ?? "").split(separator: "/", omittingEmptySubsequences: true)
        prefix = path.isEmpty ? nil : path.joined(separator: "/")
        if let prefix, prefix.contains(where: { $0 == "+" || $0 == "#" }) {
            throw MQTTAddressError("'\(shown)': a topic prefix cannot hold the wildcards + or #")
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
}

/// An MQTT address that cannot be used, with what is wrong with it.
public struct MQTTAddressError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
