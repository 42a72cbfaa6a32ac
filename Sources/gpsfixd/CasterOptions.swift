import ArgumentParser
import GPSFixServer
import NTRIPCasting

/// The options of the caster inside the daemon: a base receiver's RTCM 3 served to rovers.
struct CasterOptions: ParsableArguments {
    @Option(help: """
        Serve the base receiver's RTCM 3 frames to NTRIP 1.0 and 2.0 clients on TCP at HOST[:PORT] (port 2101 by \
        default; loopback only, unless --allow-remote). The base is the first receiver that sends RTCM 3.
        """)
    var caster: String?

    @Option(help: "The mountpoint the caster serves the stream under (letters, digits, - and _).")
    var casterMountpoint = "GPSFIX"

    @Option(help: """
        A file of USER:PASSWORD lines (the password as it is, or hashed by htpasswd -B) whose users alone may take \
        the stream; anyone may without it.
        """)
    var casterUsers: String?

    @Option(help: "Also serve what --ntrip fetches under this mountpoint: a local relay of a remote caster for a rover fleet.")
    var casterRelay: String?

    /// NTRIP's IANA port.
    static let defaultPort = 2101

    func validate() throws {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (option, name) in [("--caster-mountpoint", casterMountpoint), ("--caster-relay", casterRelay)] {
            guard let name else { continue }
            guard !name.isEmpty, name.utf8.allSatisfy(allowed.contains) else {
                throw ValidationError("\(option) '\(name)': use letters, digits, - and _ only")
            }
        }
        if casterRelay?.lowercased() == casterMountpoint.lowercased() {
            throw ValidationError("--caster-relay \(casterMountpoint) is the base's mountpoint: give the relay a name of its own")
        }
        if caster == nil, casterUsers != nil || casterRelay != nil {
            throw ValidationError("--caster-users and --caster-relay go with --caster: give --caster too")
        }
    }

    /// The caster asked for, its users read, relaying from `relay` (the `--ntrip` client's
    /// frames) under `--caster-relay`; `nil` without `--caster`.
    func configuration(allowRemote: Bool, relay: CorrectionRelay?) throws -> CasterConfiguration? {
        guard let caster else { return nil }
        let address = try GPSFixDaemon.parseAddress(caster, option: "--caster", defaultPort: Self.defaultPort)
        if !allowRemote, !GPSFixDaemon.isLoopback(address.host) {
            throw ValidationError("--caster \(address.host) is not a loopback address: add --allow-remote to serve other hosts")
        }
        let users = try casterUsers.map { path in
            do {
                return try CasterUsers(parsing: Secrets.contents(of: path, option: "--caster-users"))
            } catch let error as CasterUsers.FormatError {
                throw ValidationError("--caster-users \(path): \(error)")
            }
        }
        var relayed: (mountpoint: String, source: CorrectionRelay)?
        if let casterRelay {
            guard let relay else { throw ValidationError("--caster-relay serves what --ntrip fetches: give --ntrip too") }
            relayed = (casterRelay, relay)
        }
        return CasterConfiguration(
            host: address.host, port: address.port, mountpoint: casterMountpoint, users: users, relay: relayed)
    }
}
