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

    /// NTRIP's IANA port.
    static let defaultPort = 2101

    func validate() throws {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        guard !casterMountpoint.isEmpty, casterMountpoint.utf8.allSatisfy(allowed.contains) else {
            throw ValidationError("--caster-mountpoint '\(casterMountpoint)': use letters, digits, - and _ only")
        }
        if caster == nil, casterUsers != nil {
            throw ValidationError("--caster-users goes with --caster: give --caster too")
        }
    }

    /// The caster asked for, its users read; `nil` without `--caster`.
    func configuration(allowRemote: Bool) throws -> CasterConfiguration? {
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
        return CasterConfiguration(host: address.host, port: address.port, mountpoint: casterMountpoint, users: users)
    }
}
