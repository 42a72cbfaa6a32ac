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

        func validate() throws {
            if let speed, !SerialSettings.commonSpeeds.contains(speed) { throw ValidationError("--speed \(speed) is not a serial speed") }
            guard (0.1...30).contains(timeout) else { throw ValidationError("--timeout \(timeout): give 0.1 to 30 seconds") }
        }

        /// The port named, or the one the device's name suggests.
        var receiverPort: ReceiverPort {
            port ?? ((SerialPort.resolved(device) ?? device).contains("ttyACM") ? .usb : .uart1)
        }

        /// Opens the device and asks the receiver who it is.
        func open() throws -> (ReceiverConfigurator<ContinuousClock>, SerialReceiverLink) {
            let found: Int
            if let speed {
                found = speed
            } else if let detected = try SerialPort(path: device).findSpeed() {
                found = detected.speed
            } else {
                throw ConfigurationError.silent("at any speed, with NMEA or UBX", attempts: 1)
            }
            let link = try SerialReceiverLink(path: device, speed: found)
            let conversation = ReceiverConversation(link: link, clock: ContinuousClock(), answerTimeout: .milliseconds(Int64(timeout * 1000)))
            let configurator = ReceiverConfigurator(conversation: conversation, port: receiverPort)
            try configurator.identify()
            return (configurator, link)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the receiver's identity and current settings (read-only).")

        @OptionGroup var connection: Connection

        @Flag(help: "Print the report as JSON.")
        var json = false

        func run() throws {
            let (configurator, link) = try connection.open()
            defer { link.close() }
            var report = try configurator.report()
            report.baudRate = report.baudRate ?? (report.port?.isUART == true ? link.speed : nil)
            print(json ? String(decoding: report.json, as: UTF8.self) : report.lines.joined(separator: "\n"))
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply exactly the settings given, each acknowledged by the receiver; nothing else changes.")

        @OptionGroup var connection: Connection

        @Option(help: "Measurements (and navigation solutions) per second.")
        var rate: Double?

        @Option(help: "The constellations to use, all others off: gps,galileo,beidou,glonass,qzss,sbas,navic.")
        var gnss: String?

        @Option(help: "What the port sends: ubx, nmea or both.")
        var output: OutputProtocols?

        @Option(help: "The port's new speed in bps.")
        var baud: Int?

        @Option(name: .customLong("dynamic-model"), help: "portable, stationary, pedestrian, automotive, sea, airborne1g, airborne2g, airborne4g, wrist or bike.")
        var dynamicModel: DynamicModel?

        @Option(help: "PERIOD[,LENGTH][,locked]: a pulse every PERIOD seconds, LENGTH seconds long (default 0.1); locked: only with a fix.")
        var timepulse: String?

        @Option(name: .customLong("survey-in"), help: "SECONDS,METRES: survey the position for at least SECONDS, until the mean is within METRES.")
        var surveyIn: String?

        @Option(name: .customLong("fixed-position"), help: "LAT,LON,HEIGHT: the antenna's position (degrees, metres above the ellipsoid).")
        var fixedPosition: String?

        @Flag(help: "Navigate again (no survey-in, no fixed position).")
        var navigate = false

        @Flag(help: "Also keep the settings over a power cycle (battery-backed RAM and flash).")
        var save = false

        @Flag(name: .customLong("dry-run"), help: "Ask the receiver who it is, print the frames that would be sent, and send none.")
        var dryRun = false

        func validate() throws {
            _ = try settings()
        }

        func settings() throws -> ReceiverSettings {
            var settings = ReceiverSettings(output: output, dynamicModel: dynamicModel)
            if let rate {
                guard (0.01...50).contains(rate) else { throw ValidationError("--rate \(rate): give 0.01 to 50 Hz") }
                settings.rate = rate
            }
            if let gnss {
                var systems = Swift.Set<Constellation>()
                for name in gnss.split(separator: ",") {
                    guard let system = Constellation(rawValue: name.lowercased()) else {
                        throw ValidationError("--gnss: '\(name)' is none of gps, galileo, beidou, glonass, qzss, sbas, navic")
                    }
                    systems.insert(system)
                }
                guard !systems.isEmpty else { throw ValidationError("--gnss names no constellation") }
                settings.constellations = systems
            }
            if let baud {
                guard SerialSettings.commonSpeeds.contains(baud) else { throw ValidationError("--baud \(baud) is not a serial speed") }
                settings.baudRate = baud
            }
            if let timepulse { settings.timePulse = try Self.timePulse(timepulse) }
            let modes = [surveyIn != nil, fixedPosition != nil, navigate].filter { $0 }.count
            guard modes <= 1 else { throw ValidationError("give one of --survey-in, --fixed-position and --navigate") }
            if let surveyIn { settings.timingMode = try Self.surveyIn(surveyIn) }
            if let fixedPosition { settings.timingMode = try Self.fixedPosition(fixedPosition) }
            if navigate { settings.timingMode = .navigate }
            guard !settings.isEmpty || save else { throw ValidationError("nothing to set: give a setting, or --save") }
            return settings
        }

        func run() throws {
            let (configurator, link) = try connection.open()
            defer { link.close() }
            let layers: ConfigurationLayers = save ? [.ram, .batteryBacked, .flash] : .ram
            let steps = try configurator.plan(try settings(), layers: layers)
            let report = ReceiverReport(version: configurator.version!, protocolVersion: configurator.protocolVersion)
            print(report.lines.joined(separator: "\n"))
            if dryRun {
                print("would send, and sends nothing:")
                for step in steps { print("  \(step)") }
                return
            }
            try configurator.apply(steps)
            print("applied\(save ? " and saved" : ""): \(steps.map(\.settings).filter { !$0.isEmpty }.joined(separator: ", "))")
        }

        static func numbers(_ text: String, option: String) throws -> [Double] {
            try text.split(separator: ",", omittingEmptySubsequences: false).map {
                guard let value = Double($0), value.isFinite else { throw ValidationError("\(option) \(text): '\($0)' is not a number") }
                return value
            }
        }

        static func timePulse(_ text: String) throws -> TimePulse {
            var parts = text.split(separator: ",").map(String.init)
            let locked = parts.last == "locked"
            if locked { parts.removeLast() }
            let values = try numbers(parts.joined(separator: ","), option: "--timepulse")
            guard (1...2).contains(values.count) else { throw ValidationError("--timepulse \(text): give PERIOD[,LENGTH][,locked]") }
            let period = values[0]
            let length = values.count > 1 ? values[1] : 0.1
            guard (0.000_001...60).contains(period), length > 0, length < period else {
                throw ValidationError("--timepulse \(text): the period must be 1 µs to 60 s, the length more than 0 and less than the period")
            }
            return TimePulse(period: period, length: length, onlyWhenLocked: locked)
        }

        static func surveyIn(_ text: String) throws -> TimingMode {
            let values = try numbers(text, option: "--survey-in")
            guard values.count == 2, (1...31_536_000).contains(values[0]), values[0] == values[0].rounded(), (0.0001...1000).contains(values[1])
            else { throw ValidationError("--survey-in \(text): give SECONDS (1 to a year),METRES (0.0001 to 1000)") }
            return .surveyIn(seconds: UInt32(values[0]), metres: values[1])
        }

        static func fixedPosition(_ text: String) throws -> TimingMode {
            let values = try numbers(text, option: "--fixed-position")
            guard values.count == 3, (-90...90).contains(values[0]), (-180...180).contains(values[1]), (-1000...100_000).contains(values[2])
            else { throw ValidationError("--fixed-position \(text): give LAT (-90 to 90),LON (-180 to 180),HEIGHT (-1000 to 100000 m)") }
            return .fixed(latitude: values[0], longitude: values[1], height: values[2])
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Restart the receiver; with --factory, its saved settings cleared first.")

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
            print("restarted (\(restart.rawValue)); the receiver answers again")
        }
    }
}

extension ReceiverPort: ExpressibleByArgument {}
extension OutputProtocols: ExpressibleByArgument {}
extension DynamicModel: ExpressibleByArgument {}
extension ReceiverRestart: EnumerableFlag {}
