#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import ClientTLS
import GPSFixTraccar
import Logging
import ServiceAddress

/// The options of forwarding to Traccar.
struct TraccarOptions: ParsableArguments {
    @Option(help: "Send positions to Traccar's OsmAnd endpoint at URL (http://traccar.example:5055/ or https://), with nothing lost.")
    var traccar: String?

    @Option(help: "The device's identifier in Traccar: its credential, hidden from ps and --check-config.")
    var traccarId: String?

    /// The options whose values are credentials, though not passwords: OsmAnd's protocol
    /// has no login, so whoever knows the device's identifier can send positions as it.
    static let secretOptions: Set<String> = ["traccar-id"]

    @Option(help: "Seconds (0 to 86400) between positions sent; 0 sends every fix.")
    var traccarInterval: Double = 0

    @Option(help: "Metres the device must move before the next position is sent.")
    var traccarMinDistance: Double?

    @Option(help: "Positions kept while Traccar is away (1 to 10000000); past it the oldest are dropped.")
    var traccarQueue = 100_000

    @Option(help: """
        Where the daemon keeps its state (Traccar's journal, which receiver table was saved to which receiver's \
        flash): $STATE_DIRECTORY under systemd, else /var/lib/gpsfixd.
        """)
    var stateDirectory: String?

    func validate() throws {
        guard let traccar else {
            if traccarId != nil { throw ValidationError("--traccar-id names the device for --traccar: give --traccar too") }
            return
        }
        guard traccar.hasPrefix("http://") || traccar.hasPrefix("https://") else {
            throw ValidationError("--traccar wants the OsmAnd endpoint's address, as http://traccar.example:5055/")
        }
        guard (try? ServiceAddress(parsing: traccar, role: "Traccar server")).map({ $0.username == nil && $0.password == nil }) ?? true else {
            throw ValidationError(
                "--traccar \(ServiceAddress.redacted(traccar)): the OsmAnd endpoint takes no user or password; the device is known by --traccar-id")
        }
        guard let traccarId, !traccarId.isEmpty else { throw ValidationError("--traccar needs --traccar-id, the device's identifier in Traccar") }
        guard (0...86_400).contains(traccarInterval) else {
            throw ValidationError("--traccar-interval \(traccarInterval) is out of range: give 0 to 86400 seconds")
        }
        guard (1...10_000_000).contains(traccarQueue) else {
            throw ValidationError("--traccar-queue \(traccarQueue) is out of range: give 1 to 10000000 positions")
        }
        if let traccarMinDistance, !(traccarMinDistance >= 0) {
            throw ValidationError("--traccar-min-distance \(traccarMinDistance): give a distance in metres, 0 or more")
        }
    }

    /// The state directory, made if it is not there yet.
    func stateDirectory(environment: [String: String]) throws -> String {
        let directory = stateDirectory ?? environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
            ?? "/var/lib/gpsfixd"
        if mkdir(directory, 0o750) != 0, errno != EEXIST {
            throw ValidationError("--state-directory \(directory) cannot be made: \(String(cString: strerror(errno)))")
        }
        return directory
    }

    /// The forwarder asked for, its journal in the state directory; `nil` without `--traccar`.
    func forwarder(
        device: String, environment: [String: String], clock: any Clock<Duration>, logger: Logger
    ) throws -> TraccarForwarder? {
        guard let traccar, let traccarId else { return nil }
        let directory = try stateDirectory(environment: environment)
        let configuration = TraccarForwarder.Configuration(
            url: traccar, deviceID: traccarId, device: device, interval: .milliseconds(Int64(traccarInterval * 1000)),
            minimumDistance: traccarMinDistance, capacity: traccarQueue, journalPath: directory + "/traccar.journal")
        // Not the identifier: to OsmAnd's protocol, which has no login, it is the device's
        // credential, and logs are shared.
        logger.info("forwarding to Traccar", metadata: ["device": "\(device)", "journal": "\(configuration.journalPath)"])
        do {
            return try TraccarForwarder(
                configuration: configuration, uploader: HTTPPositionUploader(url: traccar), clock: clock, logger: logger)
        } catch let error as ClientTLS.Unavailable {
            throw ValidationError("--traccar \(ServiceAddress.redacted(traccar)): \(error)")
        }
    }
}
