import ArgumentParser
import FoundationEssentials
import ProcessTable
import TOMLReader

/// The daemon's configuration file (`/etc/gpsfix/gpsfixd.conf`), in TOML: one key per
/// command-line option, named as the option without its dashes, and `devices` for the
/// devices:
///
///     devices = ["/dev/serial/by-id/usb-u-blox_GNSS_receiver-if00"]
///     tcp = "127.0.0.1:2947"
///     mqtt = "mqtt://broker.local"
///     mqtt-interval = 5
///     pps = ["/dev/pps0"]
///     no-shm = true
///
/// The file becomes command-line arguments placed before the real ones, except for the
/// options the command line gives itself (and `devices`, when it names any): the command
/// line overrides the file, option by option. So the file takes every option the command
/// line has, with the same checks, and nothing else: an unknown key, a table, or a value
/// of the wrong kind is an error naming the file's line.
struct ConfigurationFile {
    /// One key of the file, and the arguments it stands for.
    struct Setting {
        var key: String
        var line: Int
        var arguments: [String]
    }

    let path: String
    let settings: [Setting]

    /// Reads and checks the file at `path` against `options`.
    init(path: String, options: OptionCatalogue) throws(ConfigurationError) {
        self.path = path
        let text = try Self.contents(of: path)
        let table: TOMLTable
        do {
            table = try TOMLTable(parsing: text)
        } catch {
            throw ConfigurationError(path: path, line: error.line, message: error.message)
        }
        var settings: [Setting] = []
        for entry in table {
            let key = entry.key, value = entry.value
            func fail(_ message: String) -> ConfigurationError { ConfigurationError(path: path, line: entry.line, message: message) }
            guard let kind = options.kinds[key] else {
                throw fail("unknown key '\(key)': the keys are the options of gpsfixd --help, without their dashes")
            }
            if key == "receiver", let receiver = value.table {
                let arguments = try Self.receiverArguments(receiver).mapError { fail($0.text) }.get()
                settings.append(Setting(key: key, line: entry.line, arguments: arguments))
                continue
            }
            guard value.table == nil else {
                throw fail("[\(key)] is a table, and the file has none but [receiver]: write each option as KEY = VALUE")
            }
            var arguments: [String] = []
            switch (kind, value) {
            case (.flag, .boolean(let on)):
                if on { arguments = ["--\(key)"] }
            case (.flag, _):
                throw fail("\(key) is true or false")
            case (.positional, .array(let elements)), (.repeating, .array(let elements)):
                for element in elements {
                    guard let text = Self.text(of: element) else { throw fail("\(key) holds strings or numbers") }
                    arguments += kind == .positional ? [text] : ["--\(key)=\(text)"]
                }
            case (.positional, _), (.repeating, _):
                guard let text = Self.text(of: value) else { throw fail("\(key) is a list, as [\"...\"]") }
                arguments = kind == .positional ? [text] : ["--\(key)=\(text)"]
            case (.option, _):
                guard let text = Self.text(of: value) else { throw fail("\(key) is a string or a number") }
                // One argument, `--KEY=VALUE`: a value beginning with `-` (a negative
                // offset, a southern latitude) is then not read as an option.
                arguments = ["--\(key)=\(text)"]
            }
            settings.append(Setting(key: key, line: entry.line, arguments: arguments))
        }
        self.settings = settings.sorted { $0.line < $1.line }
    }

    /// The file's text, or why it cannot be had.
    private static func contents(of path: String) throws(ConfigurationError) -> String {
        // A configuration file is a few kilobytes; a megabyte is not one.
        let bytes = try SmallFile.bytes(at: path, anyFile: true).mapError { ConfigurationError(path: path, line: nil, message: "cannot be read (\($0))") }.get()
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(path: path, line: nil, message: "is not UTF-8 text")
        }
        return text
    }

    /// `[receiver]` (the served receiver's settings) or `[receiver."/dev/..."]` (one table a
    /// device) as `--receiver` arguments: `KEY=VALUE;...`, a list joined by commas.
    private static func receiverArguments(_ table: TOMLTable) -> Result<[String], ConfigurationError.Message> {
        let perDevice = !table.isEmpty && table.allSatisfy { $0.value.table != nil }
        let tables: [(String?, TOMLTable)] = perDevice ? table.compactMap { entry in entry.value.table.map { (entry.key, $0) } } : [(nil, table)]
        var arguments: [String] = []
        for (device, settings) in tables {
            var parts = device.map { ["device=\($0)"] } ?? []
            for entry in settings {
                let text: String? = switch entry.value {
                case .boolean(let on): on ? "true" : "false"
                case .array(let elements): Self.list(of: elements)
                default: Self.text(of: entry.value)
                }
                guard let text else { return .failure(.init("[receiver] \(entry.key) is a string, a number, true or false, or a list of strings and numbers")) }
                parts.append("\(entry.key)=\(text)")
            }
            arguments += ["--receiver", parts.joined(separator: ";")]
        }
        return .success(arguments)
    }

    /// A list of strings and numbers as one argument, joined by commas; `nil` when an
    /// element is neither (a `true` left out would change what is asked).
    private static func list(of elements: [TOMLValue]) -> String? {
        let texts = elements.compactMap(Self.text(of:))
        return texts.count == elements.count ? texts.joined(separator: ",") : nil
    }

    /// A string or a number as an argument; `nil` for anything else.
    private static func text(of value: TOMLValue) -> String? {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .float(let number): "\(number)"
        default: nil
        }
    }

    /// The arguments for the daemon: the file's settings that `commandLine` does not give,
    /// then `commandLine`.
    func arguments(overriddenBy commandLine: [String], options: OptionCatalogue) -> [String] {
        let given = options.namesGiven(in: commandLine)
        return settings.filter { !given.contains($0.key) }.flatMap(\.arguments) + commandLine
    }

    /// The setting whose option an error message names, for pointing at its line.
    func setting(namedIn message: String) -> Setting? {
        settings.first { setting in
            Self.message(message, namesWhole: "--\(setting.key)")
                || (setting.key == "devices" && setting.arguments.contains { message.contains($0) })
        }
    }

    /// Whether `message` names `option` whole: `--ntrip-timeout` does not name `--ntrip`.
    private static func message(_ message: String, namesWhole option: String) -> Bool {
        var rest = message[...]
        while let found = rest.firstRange(of: option) {
            rest = rest[found.upperBound...]
            guard let next = rest.first, next.isLetter || next.isNumber || next == "-" else { return true }
        }
        return false
    }
}

/// A configuration file that cannot be used, and where.
struct ConfigurationError: Error, CustomStringConvertible {
    var path: String
    var line: Int?
    var message: String

    var description: String { "\(path)\(line.map { ":\($0)" } ?? ""): \(message)" }

    /// A message of a part of the file, before its place is known.
    struct Message: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }
}

/// The daemon's options as its command line defines them (ArgumentParser's own account of
/// them), so that the file takes exactly those.
struct OptionCatalogue {
    enum Kind: Equatable {
        case flag
        case option
        /// An option given several times (`--pps`).
        case repeating
        /// The devices.
        case positional
    }

    /// By key: the long name, or `devices`.
    let kinds: [String: Kind]
    /// The options that take a value, the command line's own included (`config`).
    private let takingValues: Set<String>
    /// By key, the default, as the help shows it.
    let defaults: [String: String]
    /// The keys in the order of `--help`.
    let order: [String]

    /// Keys that configure nothing the daemon keeps: what the command line alone asks.
    static let commandLineOnly: Set<String> = ["help", "version", "config", "check-config", "experimental-dump-help"]

    init<Command: ParsableCommand>(of command: Command.Type) {
        let info = try? JSONDecoder().decode(HelpDump.self, from: Data(command._dumpHelp().utf8))
        var kinds: [String: Kind] = [:], defaults: [String: String] = [:], order: [String] = []
        var takingValues: Set<String> = []
        for argument in info?.command.arguments ?? [] {
            let key = argument.kind == .positional
                ? argument.valueName ?? "devices" : argument.names?.first { $0.kind == "long" }?.name ?? ""
            if argument.kind == .option { takingValues.insert(key) }
            guard !key.isEmpty, !Self.commandLineOnly.contains(key) else { continue }
            kinds[key] = switch argument.kind {
            case .positional: .positional
            case .flag: .flag
            case .option: argument.isRepeating == true ? .repeating : .option
            }
            defaults[key] = argument.defaultValue
            order.append(key)
        }
        self.kinds = kinds
        self.takingValues = takingValues
        self.defaults = defaults
        self.order = order
    }

    /// The keys `commandLine` gives: its long options, and `devices` when it names one.
    func namesGiven(in commandLine: [String]) -> Set<String> {
        var given: Set<String> = []
        var index = 0
        while index < commandLine.count {
            let argument = commandLine[index]
            index += 1
            guard argument.hasPrefix("--") else {
                if !argument.hasPrefix("-") { given.insert("devices") }
                continue
            }
            let name = String(argument.dropFirst(2).prefix { $0 != "=" })
            given.insert(name)
            // A value in the next argument is not a device.
            if !argument.contains("="), takingValues.contains(name) { index += 1 }
        }
        return given
    }
}

/// The part of ArgumentParser's `--experimental-dump-help` document the catalogue reads.
private struct HelpDump: Decodable {
    struct Command: Decodable {
        var arguments: [Argument]?
    }

    struct Argument: Decodable {
        enum Kind: String, Decodable {
            case positional, option, flag
        }

        struct Name: Decodable {
            var kind: String
            var name: String
        }

        var kind: Kind
        var names: [Name]?
        var isRepeating: Bool?
        var defaultValue: String?
        var valueName: String?
    }

    var command: Command
}
