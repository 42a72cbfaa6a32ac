#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import GPSFix
import GPSFixDevices
import GPSFixMQTT
import GPSFixMetrics
import GPSFixNTRIP
import GPSFixServer
import GPSFixTime
import GPSFixTraccar
import Glibc
import Logging
import NIOCore
import NIOPosix
import ReceiverFraming
import ServiceAddress
import StopSignals
import SystemdSupport

struct GPSFixDaemon: AsyncParsableCommand {
    /// The release gpsd's VERSION report names.
    static let release = "gpsfix-\(BuildInfo.version)"
    /// How the daemon names itself to casters and servers.
    static let userAgent = "GPSFix/\(BuildInfo.version)"

    static let configuration = CommandConfiguration(
        commandName: "gpsfixd",
        abstract: "A GPS daemon: NMEA from serial receivers (or a gpsd) to clients, in gpsd's JSON protocol.",
        discussion: """
            Devices: /dev/ttyUSB0 (a serial port; a stable /dev/serial/by-id link is best), \
            file:LOG (a recorded log, read once), gpsd://HOST:PORT[/DEVICE] (a running gpsd). \
            With --demo and no device, a bundled capture is replayed through a pseudo-terminal \
            and read as a serial port. gpsd's clients (gpspipe, cgps, the Python gps module, \
            libgps programs) connect over TCP: give --tcp 127.0.0.1:2947.
            """,
        version: "gpsfixd \(BuildInfo.version) (\(BuildInfo.commit))"
    )

    @Argument(help: "Devices to read.")
    var devices: [String] = []

    @Option(help: """
        Read the options from this TOML file (/etc/gpsfix/gpsfixd.conf under systemd): one key per option, \
        named without its dashes, and devices = [...]. The command line overrides it, option by option.
        """)
    var config: String?

    @Flag(help: "Check the configuration (the file and the command line), print it as it takes effect, and exit: with 69 when MQTT is configured and libmosquitto cannot be loaded.")
    var checkConfig = false

    @Option(help: """
        The Unix socket to serve on (mode 0660); /run/gpsfixd/gpsfixd.sock unless the service manager \
        passes one, which then stands in for it.
        """)
    var socket: String?

    /// Where the Unix socket is when neither the command line nor the service manager says.
    static let defaultSocket = "/run/gpsfixd/gpsfixd.sock"

    @Option(help: "Also serve on TCP at HOST:PORT (loopback only, unless --allow-remote).")
    var tcp: String?

    @Flag(help: "Allow --tcp to bind a non-loopback address (gpsd's -G).")
    var allowRemote = false

    @Option(help: """
        Serial speed in bps (4800 to 921600). Without it the port autobauds each time it is \
        opened: it listens for up to 1.5 s at each common speed, the last speed found first, \
        until two valid sentences arrive.
        """)
    var speed: Int?

    @Option(help: "Seconds (0.2 to 3600) without a valid sentence before a device's fix decays to no fix.")
    var silenceTimeout: Double = 3

    @Option(help: """
        Seconds (1 to 3600) a client may stay over its cap of unread bytes (32 KiB) before it is cut off, \
        whether or not it reads a little meanwhile.
        """)
    var stallTimeout: Double = 5

    @Option(help: """
        Connections (2 to 100000) on the network listeners together (gpsd's TCP port, HTTP, NMEA 0183 out's port), \
        and as many again on the local sockets (gpsd's Unix socket, the control socket, NMEA 0183 out's socket), \
        counted apart: a full network side never locks out a local client. On each side one listener takes two \
        thirds at most. At a cap the connection idle the longest is closed to make room. Each connection costs the \
        daemon 80 KiB at most.
        """)
    var maxClients: Int = 192

    @Option(help: "Seconds (10 to 86400) a gpsd client that watches nothing and asks nothing is kept (gpsd's 15 minutes).")
    var idleTimeout: Double = 900

    @Option(help: """
        Seconds (0 to 3600) lagging clients may hold back a source that can wait (a pseudo-terminal, a file, \
        a gpsd) in a row; after that the source reads on, four times as long at least before it is held again, \
        and the clients that did not catch up lose their reports until they do.
        """)
    var holdBack: Double = 2

    @Option(help: "Seconds (1 to 86400) between the status and counters lines in the log (they are logged at shutdown too).")
    var statusInterval: Double = 60

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Flag(help: "With no device: replay a bundled capture through a pseudo-terminal and serve it.")
    var demo = false

    @Option(help: """
        Where chronyd's SOCK refclock sockets are: receiver time to DIR/chrony.clk.BASENAME.sock, \
        pulses to DIR/chrony.BASENAME.sock (BASENAME: the device path's last component).
        """)
    var chronySocketDir = "/run"

    @Flag(help: "Write no NTP shared-memory segments (SHM refclock units 0 and 1 for the first device as root, from 2 otherwise).")
    var noShm = false

    @Option(help: "A kernel PPS device (/dev/ppsN) for the serial devices in order; repeat for several.")
    var pps: [String] = []

    @Option(help: "Seconds (-2 to 2) by which the receiver's sentences lag its time, subtracted before the clock sees them.")
    var timeOffset: Double = 0

    @Flag(help: "Serve time from pseudo-terminals too (a replay with gpsfix replay --retime), for tests and demos.")
    var timeFromPty = false

    @Option(help: """
        Publish to an MQTT broker: mqtt://[USER[:PASSWORD]@]HOST[:PORT][/PREFIX], or mqtts:// for TLS. \
        Topics PREFIX/DEVICE/tpv, sky and device (PREFIX: gpsfix/HOSTNAME unless given; DEVICE: \
        the device path's last component); the latest TPV and the device state are retained.
        """)
    var mqtt: String?

    @Option(help: "A file whose first line is the broker password (or set GPSFIX_MQTT_PASSWORD), kept out of ps.")
    var mqttPasswordFile: String?

    @Option(help: "The certificate authorities for mqtts:// (a PEM file); the system's by default.")
    var mqttCa: String?

    @Option(help: "gpsd (gpsd JSON), owntracks (OwnTracks locations on owntracks/HOSTNAME/DEVICE) or both.")
    var mqttFormat: FleetConfiguration.Format = .gpsd

    @Option(help: "Seconds (0 to 3600) between a device's published TPVs (and SKYs); 0 publishes every cycle.")
    var mqttInterval: Double = 0

    @Option(help: "MQTT quality of service: 0 (at most once) or 1 (at least once).")
    var mqttQos: Int = 0

    @Flag(help: """
        With --mqtt: Home Assistant's MQTT discovery, a device tracker and sensors per device that appear \
        in Home Assistant by themselves.
        """)
    var mqttHomeassistant = false

    @Option(help: "Home Assistant's discovery prefix, if it was told another.")
    var mqttHomeassistantPrefix = "homeassistant"

    @Option(help: """
        Serve the status page at http://HOST:PORT/, the API at /api/v1/, the reports as Server-Sent Events at \
        /events and Prometheus metrics at /metrics (loopback only, unless --allow-remote).
        """)
    var http: String?

    @Option(help: "Allow this origin (https://dashboard.example) to read the API and the events from its pages.")
    var httpCors: String?

    @Option(help: "Serve Prometheus metrics at http://HOST:PORT/metrics: the same server as --http, on this address.")
    var metrics: String?

    @OptionGroup(title: "NMEA 0183 out")
    var nmeaOut: NMEAOutputOptions

    @OptionGroup(title: "Traccar")
    var traccarOptions: TraccarOptions

    @OptionGroup(title: "RTK corrections (NTRIP)")
    var ntripOptions: NTRIPOptions

    @OptionGroup(title: "Pushing the base's corrections to casters (NTRIP server)")
    var ntripServerOptions: NTRIPServerOptions

    @OptionGroup(title: "RTK base station: the caster")
    var casterOptions: CasterOptions

    @OptionGroup(title: "u-blox receivers")
    var receiverOptions: ReceiverOptions

    func validate() throws {
        guard !devices.isEmpty || demo else { throw ValidationError("name a device, or give --demo to serve a bundled capture") }
        for device in devices where DeviceName(device) == nil {
            // A caster's address given as a device holds its password: not in the message.
            throw ValidationError("'\(ServiceAddress.redacted(device))' is not a device: use /dev/..., file:PATH or gpsd://HOST:PORT")
        }
        let names = devices.compactMap { DeviceName($0)?.description }
        if let twice = names.firstRepeated {
            throw ValidationError("\(twice) is named twice: a device can be read once")
        }
        // One port by two names (a /dev/serial/by-id link and its /dev/ttyACM0) would be
        // read twice, its bytes split between two readers.
        var ports: [String: String] = [:]
        for case .serial(let path)? in devices.map(DeviceName.init) {
            let port = SerialPort.resolved(path) ?? path
            if let other = ports.updateValue(path, forKey: port) {
                throw ValidationError("\(other) and \(path) are one device, \(port): a device can be read once")
            }
        }
        // Written into response heads as it is: a line break would start a header of its own.
        if let httpCors, httpCors.isEmpty || !httpCors.unicodeScalars.allSatisfy({ (0x21..<0x7F).contains($0.value) }) {
            throw ValidationError("--http-cors '\(httpCors.printable(limit: 80))' is not an origin: give one as https://dashboard.example")
        }
        if let speed, SerialSettings.commonSpeeds.contains(speed) == false {
            throw ValidationError("--speed \(speed) is not one of \(SerialSettings.commonSpeeds.sorted())")
        }
        guard (0.2...3600).contains(silenceTimeout) else {
            throw ValidationError("--silence-timeout \(silenceTimeout) is out of range: give 0.2 to 3600 seconds")
        }
        try receiverOptions.validate(speed: speed, silenceTimeout: silenceTimeout, devices: names)
        guard (1...3600).contains(stallTimeout) else {
            throw ValidationError("--stall-timeout \(stallTimeout) is out of range: give 1 to 3600 seconds")
        }
        guard (2...100_000).contains(maxClients) else {
            throw ValidationError("--max-clients \(maxClients) is out of range: give 2 to 100000")
        }
        guard (10...86400).contains(idleTimeout) else {
            throw ValidationError("--idle-timeout \(idleTimeout) is out of range: give 10 to 86400 seconds")
        }
        guard (0...3600).contains(holdBack) else {
            throw ValidationError("--hold-back \(holdBack) is out of range: give 0 to 3600 seconds")
        }
        guard (1...86_400).contains(statusInterval) else {
            throw ValidationError("--status-interval \(statusInterval) is out of range: give 1 to 86400 seconds")
        }
        guard (-2...2).contains(timeOffset) else {
            throw ValidationError("--time-offset \(timeOffset) is out of range: give -2 to 2 seconds")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        for (option, address) in [("--tcp", tcp), ("--metrics", metrics), ("--http", http)] {
            guard let address else { continue }
            let (host, _) = try Self.parseAddress(address, option: option)
            if !allowRemote, !Self.isLoopback(host) {
                throw ValidationError("\(option) \(address) is not a loopback address: add --allow-remote to serve other hosts")
            }
        }
        _ = try nmeaOut.output(allowRemote: allowRemote)
        if mqttHomeassistant, mqtt == nil {
            throw ValidationError("--mqtt-homeassistant publishes through a broker: give --mqtt too")
        }
        if let mqtt {
            do { _ = try MQTTBroker(url: mqtt) } catch { throw ValidationError("--mqtt: \(error)") }
            guard (0...1).contains(mqttQos) else { throw ValidationError("--mqtt-qos \(mqttQos): give 0 or 1") }
            guard (0...3600).contains(mqttInterval) else {
                throw ValidationError("--mqtt-interval \(mqttInterval) is out of range: give 0 to 3600 seconds")
            }
            let names = devices.map(FleetConfiguration.topicName(forDevice:))
            if Set(names).count < names.count {
                throw ValidationError("--mqtt: two devices end in the same name (\(names)), so their topics would collide")
            }
        }
    }

    /// The arguments the daemon was parsed from (the file's and the command line's).
    var effectiveArguments: [String] = []

    func run() async throws {
        if checkConfig {
            print(effectiveConfiguration())
            // Besides the file, what the daemon would end on at start.
            if let reason = mqttUnavailability {
                Self.printError("gpsfixd: \(reason)")
                throw Self.unavailableStatus
            }
            return
        }
        ServiceAddress.hidePasswordsInCommandLine(alsoValuesOf: TraccarOptions.secretOptions)
        signal(SIGPIPE, SIG_IGN)
        let stopSignals = try StopSignals()
        Self.raiseDescriptorLimit()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "gpsfixd")
        let address = try tcp.map { try Self.parseAddress($0, option: "--tcp") }
        let environment = Self.environment()
        let service = ServiceEnvironment(environment: environment)
        let notifier = SystemdNotifier(environment: environment)

        var demoReplay: (terminal: PseudoTerminal, replayer: Replayer)?
        var sources: [any ByteSource] = devices.compactMap { DeviceName($0)?.source(settings: SerialSettings(speed: speed)) }
        if sources.isEmpty, demo {
            let terminal = try PseudoTerminal()
            // From its first fix, retimed to now: the demo has a fix at once, and its times
            // keep increasing across loops like a live receiver's.
            demoReplay = (terminal, Replayer(log: CaptureLog(PackageResources.demo_nmea), speed: 1, startingAtFirstFix: true))
            sources.append(SerialPort(path: terminal.path))
            logger.info("demo: replaying a bundled capture", metadata: ["pty": "\(terminal.path)"])
        }
        // One event-loop group for all of the daemon's SwiftNIO work: the server's loop (clients,
        // devices), the receivers' writers and NTRIP on them, Traccar's uploads (its default).
        let eventLoops = MultiThreadedEventLoopGroup.singleton
        let clock = EventLoopClock(eventLoop: eventLoops.next())
        let fleet = try mqtt.map { try fleetPublisher(url: $0, devices: sources.map(\.name), environment: environment, logger: logger) }
        let traccar = try sources.first.flatMap {
            try traccarOptions.forwarder(device: $0.name, environment: environment, clock: clock, logger: logger)
        }
        let receivers = WritableReceivers(sources: sources, capacity: ntripOptions.ntripQueue, group: eventLoops)
        // What --ntrip fetches, served again by the caster under --caster-relay.
        let relay = casterOptions.casterRelay == nil ? nil : CorrectionRelay()
        let ntrip = try ntripOptions.client(
            sources: sources, writable: receivers, environment: environment, userAgent: Self.userAgent, relay: relay,
            logger: logger)
        let ntripServers = try ntripServerOptions.servers(
            environment: environment, userAgent: Self.userAgent, eventLoop: eventLoops.next(), logger: logger)
        let keepers = try receiverOptions.keepers(
            sources: sources, receivers: receivers, stateDirectory: { try traccarOptions.stateDirectory(environment: environment) },
            logger: logger)
        let subscribers: [any ReportSubscriber] = [fleet as (any ReportSubscriber)?, traccar, ntrip].compactMap { $0 }
        let clientCap = ConnectionCap(connections: maxClients, perListener: max(1, maxClients * 2 / 3))
        // Other ways in for clients, beside which the default socket may be left out.
        let servedElsewhere = tcp != nil || http != nil || metrics != nil || nmeaOut.nmeaTcp != nil || nmeaOut.nmeaSocket != nil
        let server = GPSFixServer(
            configuration: .init(
                socketPath: Self.socketPath(asked: socket, passed: service.listenDescriptors, servedElsewhere: servedElsewhere, logger: logger), tcpHost: address?.host,
                tcpPort: address?.port, release: Self.release, revision: BuildInfo.commit,
                limits: SessionLimits(
                    stallTimeout: .milliseconds(Int64(stallTimeout * 1000)), idleTimeout: .milliseconds(Int64(idleTimeout * 1000)),
                    network: clientCap, local: clientCap),
                holdBackLimit: .milliseconds(Int64(holdBack * 1000)), adoptedSockets: service.listenDescriptors,
                nmeaOutput: try nmeaOut.output(allowRemote: allowRemote),
                caster: try casterOptions.configuration(allowRemote: allowRemote, relay: ntrip == nil ? nil : relay)),
            group: eventLoops, subscribers: subscribers, logger: logger)
        let timePlan = TimeServicePlan(
            chronySocketDirectory: chronySocketDir, sharedMemory: !noShm, timeFromPseudoTerminals: timeFromPty,
            timeOffset: .nanoseconds(Int64((timeOffset * 1e9).rounded())), ppsDevices: pps)
        let timeDevices = timePlan.devices(for: sources, logger: logger)
        let timeService = timeDevices.isEmpty
            ? nil : TimeService(devices: timeDevices, logger: logger, clock: clock) { report, device in server.publish(report, of: device) }
        let providers = sources.map { source in
            NMEALocationProvider(
                source: Self.readOnEventLoop(source, of: server), clock: clock, timers: server.timers,
                silenceTimeout: .milliseconds(Int64(silenceTimeout * 1000)), sentenceDemand: server.sentenceDemand,
                readingHold: server.readingHold, replies: receivers[source.name]?.replies ?? ReceiverReplies())
        }
        let httpAddresses = try [("--http", http), ("--metrics", metrics)].compactMap { option, address in
            try address.map { try Self.parseAddress($0, option: option) }
        }
        let daemon = DaemonService(
            server: server, providers: providers, timeService: timeService, fleet: fleet, traccar: traccar, ntrip: ntrip,
            ntripServers: ntripServers, keepers: keepers,
            control: receivers.controls.isEmpty ? nil : (receiverOptions.controlSocket(beside: socket), receivers.controls, receiverOptions.controlSocket != nil),
            httpAddresses: httpAddresses, httpCORS: httpCors,
            demo: demoReplay,
            notifier: notifier.isActive ? StoppingLastNotifier(notifier) : nil, watchdogInterval: service.watchdogInterval,
            statusInterval: .milliseconds(Int64(statusInterval * 1000)), clock: clock, logger: logger)
        try await daemon.run(until: stopSignals)
    }

    /// Every client is a descriptor: take the hard limit, so the only client cap is the machine's.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Every source is read on the server's event loop: each read wakes one thread, and
    /// a source that can wait is held back for a lagging client by that loop alone.
    static func readOnEventLoop(_ source: any ByteSource, of server: GPSFixServer) -> any ByteSource {
        switch source {
        case var port as SerialPort:
            port.reactor = server.descriptorReactor
            return port
        case var file as FileSource:
            file.reactor = server.descriptorReactor
            return file
        case var upstream as GPSDSource:
            upstream.reactor = server.descriptorReactor
            return upstream
        default:
            return source
        }
    }

    /// The process's environment (what systemd passes: NOTIFY_SOCKET, LISTEN_FDS, ...).
    static func environment() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }
}
