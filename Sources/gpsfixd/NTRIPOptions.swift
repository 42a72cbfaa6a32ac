#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import ClientTLS
import GPSFixDevices
import GPSFixNTRIP
import GPSFixServer
import Logging
import OutputFormats

/// The options of RTK corrections from an NTRIP caster.
struct NTRIPOptions: ParsableArguments {
    @Option(help: """
        Write RTK corrections from an NTRIP caster into the receiver: ntrip://[USER@]HOST[:PORT]/MOUNT \
        (port 2101), or ntrips:// for TLS. The daemon writes nothing else to a receiver.
        """)
    var ntrip: String?

    @Option(help: "The receiver that gets the corrections, when several are served.")
    var ntripDevice: String?

    @Option(help: "A file whose first line is the caster password (or set GPSFIX_NTRIP_PASSWORD), kept out of ps.")
    var ntripPasswordFile: String?

    @Option(help: "The certificate authorities for ntrips:// (a PEM file); the system's by default.")
    var ntripCa: String?

    @Option(help: "Seconds (0 to 3600) between positions (GGA) sent to the caster, from the first fix; 0 sends none.")
    var ntripGgaInterval: Double = 10

    @Option(help: "LAT,LON[,ALT] (degrees, metres): the position sent to the caster before the receiver has a fix.")
    var ntripPosition: String?

    @Option(help: "Seconds (1 to 600) to wait for the caster to connect, answer, or send corrections before reconnecting.")
    var ntripTimeout: Double = 30

    @Option(help: "Bytes of corrections (1024 to 1048576) waiting for the receiver's port; past it the oldest are dropped.")
    var ntripQueue = 16 * 1024

    func validate() throws {
        guard let ntrip else {
            if ntripDevice != nil || ntripPosition != nil || ntripPasswordFile != nil {
                throw ValidationError("--ntrip-device, --ntrip-position and --ntrip-password-file go with --ntrip: give --ntrip too")
            }
            return
        }
        let caster: NTRIPCaster
        do { caster = try NTRIPCaster(url: ntrip) } catch { throw ValidationError("--ntrip: \(error)") }
        guard !caster.mountpoint.isEmpty else { throw ValidationError("--ntrip \(caster.description) names no mountpoint: add /MOUNT") }
        guard (0...3600).contains(ntripGgaInterval) else {
            throw ValidationError("--ntrip-gga-interval \(ntripGgaInterval) is out of range: give 0 to 3600 seconds")
        }
        guard (1...600).contains(ntripTimeout) else {
            throw ValidationError("--ntrip-timeout \(ntripTimeout) is out of range: give 1 to 600 seconds")
        }
        guard (1024...1_048_576).contains(ntripQueue) else {
            throw ValidationError("--ntrip-queue \(ntripQueue) is out of range: give 1024 to 1048576 bytes")
        }
        _ = try position()
    }

    /// `--ntrip-position` read; `nil` when not given.
    func position() throws -> PositionReport? {
        guard let ntripPosition else { return nil }
        do {
            return try PositionReport(parsing: ntripPosition, allowingAltitude: true)
        } catch {
            throw ValidationError(
                "--ntrip-position '\(ntripPosition)': \(error); give LAT,LON[,ALT] in degrees and metres, as 52.37,4.89,12")
        }
    }

    /// The client asked for, feeding the receiver among `sources` that `--ntrip-device`
    /// names (or the only one); `nil` without `--ntrip`. The password from
    /// `--ntrip-password-file`, else `GPSFIX_NTRIP_PASSWORD`, else the address.
    func client(
        sources: [any ByteSource], writable: WritableReceivers, environment: [String: String], userAgent: String,
        relay: CorrectionRelay?, logger: Logger
    ) throws -> NTRIPClient? {
        guard let ntrip else { return nil }
        let receivers = sources.filter { source in ntripDevice.map { DeviceName($0)?.description == source.name } ?? true }
        guard receivers.count == 1, let receiver = receivers.first else {
            if let ntripDevice { throw ValidationError("--ntrip-device \(ntripDevice) is not one of the devices served") }
            throw ValidationError("--ntrip: \(sources.count) devices are served; name the receiver with --ntrip-device")
        }
        guard let port = receiver as? SerialPort, let writer = writable[port.name]?.writer else {
            throw ValidationError("--ntrip: \(receiver.name) is not a serial receiver, so corrections cannot be written to it")
        }
        var password = environment["GPSFIX_NTRIP_PASSWORD"]
        if let ntripPasswordFile {
            password = try Secrets.firstLine(of: ntripPasswordFile, option: "--ntrip-password-file")
        }
        let caster = try NTRIPCaster(url: ntrip).with(password: password)
        let configuration = NTRIPClient.Configuration(
            caster: caster, device: port.name, positionInterval: .milliseconds(Int64(ntripGgaInterval * 1000)),
            fixedPosition: try position(), timeout: .milliseconds(Int64(ntripTimeout * 1000)),
            certificateAuthorities: ntripCa, userAgent: userAgent, relay: relay)
        logger.info("RTK corrections from \(caster.description) to \(port.name)")
        do {
            return try NTRIPClient(configuration: configuration, writer: writer, logger: logger)
        } catch let error as ClientTLS.Unavailable {
            throw ValidationError("--ntrip \(caster.description): \(error)")
        } catch {
            throw ValidationError("--ntrip-ca \(ntripCa ?? ""): \(error)")
        }
    }
}
