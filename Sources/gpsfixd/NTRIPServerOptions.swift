import ArgumentParser
import ClientTLS
import GPSFixNTRIP
import Logging
import NIOCore

/// The options of pushing the base receiver's RTCM 3 frames to NTRIP casters.
struct NTRIPServerOptions: ParsableArguments {
    @Option(help: """
        Push the base receiver's RTCM 3 frames to an NTRIP caster: ntrip://[USER@]HOST[:PORT]/MOUNT \
        (port 2101), or ntrips:// for TLS. Give it once per caster (a public and a private one).
        """)
    var ntripServer: [String] = []

    @Option(help: """
        A file whose first line is the caster password (or set GPSFIX_NTRIP_SERVER_PASSWORD), kept out of ps: \
        once for every --ntrip-server, or once per --ntrip-server, in their order.
        """)
    var ntripServerPasswordFile: [String] = []

    @Option(help: "1 (SOURCE, which every caster takes) or 2 (POST with Basic authentication and chunked transfer).")
    var ntripServerVersion = 1

    @Option(help: "The certificate authorities for ntrips:// casters (a PEM file); the system's by default.")
    var ntripServerCa: String?

    func validate() throws {
        guard !ntripServer.isEmpty else {
            if !ntripServerPasswordFile.isEmpty { throw ValidationError("--ntrip-server-password-file goes with --ntrip-server: give --ntrip-server too") }
            return
        }
        for address in ntripServer {
            let caster: NTRIPCaster
            do { caster = try NTRIPCaster(url: address) } catch { throw ValidationError("--ntrip-server: \(error)") }
            guard !caster.mountpoint.isEmpty else {
                throw ValidationError("--ntrip-server \(caster.description) names no mountpoint: add /MOUNT")
            }
        }
        guard NTRIPServerVersion(rawValue: ntripServerVersion) != nil else {
            throw ValidationError("--ntrip-server-version \(ntripServerVersion): give 1 or 2")
        }
        guard [0, 1, ntripServer.count].contains(ntripServerPasswordFile.count) else {
            throw ValidationError(
                "--ntrip-server-password-file is given \(ntripServerPasswordFile.count) times for \(ntripServer.count) --ntrip-server: "
                    + "give it once for all, or once per caster")
        }
    }

    /// One push per `--ntrip-server`, on `eventLoop`. The password of each from its
    /// `--ntrip-server-password-file`, else `GPSFIX_NTRIP_SERVER_PASSWORD`, else its address.
    func servers(environment: [String: String], userAgent: String, eventLoop: any EventLoop, logger: Logger) throws -> [NTRIPServer] {
        guard let version = NTRIPServerVersion(rawValue: ntripServerVersion) else { return [] }
        return try ntripServer.enumerated().map { index, address in
            var password = environment["GPSFIX_NTRIP_SERVER_PASSWORD"]
            if !ntripServerPasswordFile.isEmpty {
                let file = ntripServerPasswordFile[ntripServerPasswordFile.count == 1 ? 0 : index]
                password = try Secrets.firstLine(of: file, option: "--ntrip-server-password-file")
            }
            let caster = try NTRIPCaster(url: address).with(password: password)
            guard let secret = caster.password else {
                throw ValidationError(
                    "--ntrip-server \(caster.description) has no password: give --ntrip-server-password-file or set GPSFIX_NTRIP_SERVER_PASSWORD")
            }
            // NTRIP 1.0 sends it in the request line, between spaces: one there would change the request.
            if version == .one, secret.contains(where: { $0 == " " || $0.isNewline || $0 == "\t" }) {
                throw ValidationError(
                    "--ntrip-server \(caster.description): the password holds a space or a line end, which NTRIP 1.0's SOURCE line cannot carry; use --ntrip-server-version 2")
            }
            let configuration = NTRIPServer.Configuration(
                caster: caster, version: version, certificateAuthorities: ntripServerCa, userAgent: userAgent)
            logger.info("RTK corrections of the base pushed to \(caster.description) (NTRIP \(version.rawValue))")
            do {
                return try NTRIPServer(configuration: configuration, eventLoop: eventLoop, logger: logger)
            } catch let error as ClientTLS.Unavailable {
                throw ValidationError("--ntrip-server \(caster.description): \(error)")
            } catch {
                throw ValidationError("--ntrip-server-ca \(ntripServerCa ?? ""): \(error)")
            }
        }
    }
}
