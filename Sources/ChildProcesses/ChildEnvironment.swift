#if canImport(Glibc)
import Glibc
#endif

/// The environment a child of the daemon runs with: the daemon's, without its secrets.
///
/// The daemon takes its passwords from `GPSFIX_MQTT_PASSWORD`, `GPSFIX_NTRIP_PASSWORD` and
/// the like; a child has no use for them, and anything it passes them on to (a crash
/// report, a log of its environment, `/proc/PID/environ` read by its own user) would
/// leak them. Every `GPSFIX_` variable is left out, and every variable whose name says
/// it holds a secret (`PASSWORD`, `SECRET`, `TOKEN`, `CREDENTIAL`, in any case).
public enum ChildEnvironment {
    /// `variables` (`NAME=value` entries) without the secrets.
    public static func withoutSecrets(_ variables: [String]) -> [String] {
        variables.filter { entry in
            let name = entry.prefix { $0 != "=" }.uppercased()
            return !name.hasPrefix("GPSFIX_") && !["PASSWORD", "SECRET", "TOKEN", "CREDENTIAL"].contains { name.contains($0) }
        }
    }

    /// The process's environment now, without its secrets.
    public static func current() -> [String] { withoutSecrets(whole()) }

    /// The process's environment now, all of it.
    static func whole() -> [String] {
        var variables: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            variables.append(String(cString: pointer))
            entry += 1
        }
        return variables
    }
}
