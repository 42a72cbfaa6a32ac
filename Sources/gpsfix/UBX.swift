import ArgumentParser
import GPSDProtocol
import GPSFixDevices
import UBXConfiguration

/// `gpsfix ubx`: a u-blox receiver shown and configured by what the user wants of it; the
/// generation (and so the messages) found by asking the receiver.
struct UBXCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ubx",
        abstract: "Show and configure a u-blox receiver by intent: rate, constellations, output, speed, time pulse, timing mode.",
        subcommands: [Show.self, Set.self, Reset.self])

    /// The receiver to talk to, and how.
    struct Connection: ParsableArguments {
        @Argument(help: "The receiver's serial port: /dev/ttyACM0, /dev/serial/by-id/...")
        var device: String

        @Option(help: "The port's current speed in bps; found as the daemon finds it when not given.")
        var speed: Int?

        @Option(help: "Which of the receiver's ports the device reaches: uart1, uart2 or usb (default: usb for ttyACM, else uart1).")
        var port: ReceiverPort?

        @Option(help: "Seconds to wait for each answer (each request is sent up to 3 times).")
        var timeout: Double = 1

        @Option(name: .customLong("control-socket"), help: "The daemon's control socket, through which a receiver it holds is reached.")
        var controlSocket = "/run/gpsfixd/gpsfixd-control.sock"

        func validate() throws {
            if let speed, !ReceiverSettings.speeds.contains(speed) { throw ValidationError("--speed \(speed) is not a serial speed") }
            guard (0.1...30).contains(timeout) else { throw ValidationError("--timeout \(timeout): give 0.1 to 30 seconds") }
        }

        /// The port named, or the one the device's name suggests.
        var receiverPort: ReceiverPort {
            port ?? ReceiverPort(guessingFor: SerialPort.resolved(device) ?? device)
        }

        /// Reaches the receiver (through the daemon when it holds the port, else by opening
        /// the port) and asks it who it is.
        func open() throws -> (ReceiverConfigurator<ContinuousClock>, any ClosableLink) {
            let link: any ClosableLink
            do {
                link = try DaemonControlLink.connect(path: controlSocket, device: device) ?? openPort()
            } catch let denied as DaemonControlLink.Denied {
                do {
                    link = try openPort()
                } catch {
                    throw ConfigurationError.unsupported(
                        "\(error); if gpsfixd holds \(device), its control socket \(denied.path) is for root and the daemon's user: run as root")
                }
            }
            let conversation = ReceiverConversation(link: link, clock: ContinuousClock(), answerTimeout: .milliseconds(Int64(timeout * 1000)))
            let configurator = ReceiverConfigurator(conversation: conversation, port: receiverPort)
            try configurator.identify()
            return (configurator, link)
        }

        /// The port, opened by the tool at `--speed` or the speed found.
        private func openPort() throws -> SerialReceiverLink {
            if let speed { return try SerialReceiverLink(path: device, speed: speed) }
            guard let link = try SerialReceiverLink(findingSpeedOf: device) else {
                throw ConfigurationError.silent("at any speed, with NMEA or UBX", attempts: 1)
            }
            return link
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print the receiver's identity and current settings (read-only).")

        @OptionGroup var connection: Connection

        @Flag(help: "Print the report as JSON.")
        var json = false

        func run() throws {
            let (configurator, link) = try connection.open()
            defer { link.close() }
            var report = try configurator.report()
            report.baudRate = report.baudRate ?? (report.port?.isUART == true ? link.speed : nil)
            try writeLine(json ? String(decoding: report.json, as: UTF8.self) : report.lines.joined(separator: "\n"))
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Apply exactly the settings given, each acknowledged by the receiver; nothing else changes.")

        @OptionGroup var connection: Connection

        @Option(help: "Measurements (and navigation solutions) per second.")
        var rate: String?

        @Option(help: "The constellations to use, all others off: gps,galileo,beidou,glonass,qzss,sbas,navic.")
        var gnss: String?

        @Option(help: "What the port sends: ubx, nmea or both.")
        var output: String?

        @Option(help: "The port's new speed in bps.")
        var baud: String?

        @Option(name: .customLong("dynamic-model"), help: "portable, stationary, pedestrian, automotive, sea, airborne1g, airborne2g, airborne4g, wrist or bike.")
        var dynamicModel: String?

        @Option(help: "PERIOD[,LENGTH][,locked]: a pulse every PERIOD seconds, LENGTH seconds long (default 0.1); locked: only with a fix.")
        var timepulse: String?

        @Option(name: .customLong("survey-in"), help: "SECONDS,METRES: survey the position for at least SECONDS, until the mean is within METRES.")
        var surveyIn: String?

        @Option(name: .customLong("fixed-position"), help: "LAT,LON,HEIGHT: the antenna's position (degrees, metres above the ellipsoid).")
        var fixedPosition: String?

        @Flag(help: "Navigate again (no survey-in, no fixed position).")
        var navigate = false

        @Option(help: "msm4, msm7 or off: the RTCM 3 messages a base station sends (1005, MSM4 or MSM7 of each constellation, 1230), at 1 Hz.")
        var rtcm: String?

        @Flag(help: "Also keep the settings over a power cycle (battery-backed RAM and flash).")
        var save = false

        @Flag(name: .customLong("dry-run"), help: "Ask the receiver who it is, print the frames that would be sent, and send none.")
        var dryRun = false

        func validate() throws {
            _ = try settings()
        }

        /// The settings given, read as the daemon reads its receiver table.
        func settings() throws -> ReceiverSettings {
            var settings = ReceiverSettings()
            let given = [
                ("rate", rate), ("gnss", gnss), ("output", output), ("baud", baud), ("dynamic-model", dynamicModel),
                ("timepulse", timepulse), ("survey-in", surveyIn), ("fixed-position", fixedPosition), ("navigate", navigate ? "true" : nil),
                ("rtcm", rtcm),
            ]
            do {
                for case let (name, text?) in given { try settings.set(name, to: text) }
            } catch {
                throw ValidationError("--\(error.description)")
            }
            guard !settings.isEmpty || save else { throw ValidationError("nothing to set: give a setting, or --save") }
            return settings
        }

        func run() throws {
            let (configurator, link) = try connection.open()
            defer { link.close() }
            let layers: ConfigurationLayers = save ? [.ram, .batteryBacked, .flash] : .ram
            let steps = try configurator.plan(try settings(), layers: layers)
            if let version = configurator.version {
                try writeLine(ReceiverReport(version: version, protocolVersion: configurator.protocolVersion).lines.joined(separator: "\n"))
            }
            if dryRun {
                try writeLine("would send, and sends nothing:")
                for step in steps { try writeLine("  \(step)") }
                return
            }
            try configurator.apply(steps)
            try writeLine("applied\(save ? " and saved" : ""): \(steps.map(\.settings).filter { !$0.isEmpty }.joined(separator: ", "))")
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset",
            abstract: "Restart the receiver; with --factory, its saved settings cleared first.")

        @OptionGroup var connection: Connection

        @Flag(help: "How much navigation data it keeps (default: hot, all of it).")
        var restart: ReceiverRestart = .hot

        func run() throws {
            let (configurator, link) = try connection.open()
            defer { link.close() }
            do {
                try configurator.restart(restart)
            } catch ConfigurationError.silent where restart == .factory && connection.speed == nil {
                // Its factory settings may have put the port back to its default speed.
                link.close()
                _ = try connection.open()
            }
            try writeLine("restarted (\(restart.rawValue)); the receiver answers again")
        }
    }
}

extension ReceiverPort: ExpressibleByArgument {}
extension ReceiverRestart: EnumerableFlag {}

/// A link the tool closes when done: the port it opened, or its connection to the daemon.
protocol ClosableLink: ReceiverLink {
    /// The port's speed now.
    var speed: Int { get }
    func close()
}

extension SerialReceiverLink: ClosableLink {}

extension DaemonControlLink: ClosableLink {}
