import ArgumentParser
import ServiceAddress
import Glibc

/// The configuration file, read before the arguments are parsed, and the effective
/// configuration `--check-config` prints.
extension GPSFixDaemon {
    /// Reads `--config` into the arguments before they are parsed, and names the file's
    /// line when one of its settings is refused.
    static func main() async {
        let commandLine = Array(CommandLine.arguments.dropFirst())
        let file: ConfigurationFile?
        do {
            file = try configurationFile(in: commandLine)
        } catch {
            printError("gpsfixd: \(error)")
            Glibc.exit(78)  // EX_CONFIG
        }
        let arguments = file?.arguments(overriddenBy: commandLine, options: options) ?? commandLine
        do {
            var command = try parseAsRoot(arguments)
            if var daemon = command as? GPSFixDaemon {
                daemon.effectiveArguments = arguments
                try await daemon.run()
            } else {
                try command.run()
            }
        } catch {
            let message = fullMessage(for: error)
            if let file, let setting = file.setting(namedIn: message) {
                printError("gpsfixd: \(file.path):\(setting.line): \(setting.key): \(message)")
                Glibc.exit(exitCode(for: error).rawValue)
            }
            Self.exit(withError: error)
        }
    }

    /// Writes `line` to standard error at once, unbuffered: for errors before the daemon logs.
    static func printError(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// The daemon's options, as the configuration file takes them.
    static let options = OptionCatalogue(of: GPSFixDaemon.self)

    /// The file `--config` names in `commandLine`, read; `nil` without one.
    static func configurationFile(in commandLine: [String]) throws(ConfigurationError) -> ConfigurationFile? {
        let path = commandLine.indices.lazy.compactMap { index -> String? in
            let argument = commandLine[index]
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
            return argument == "--config" && index + 1 < commandLine.count ? commandLine[index + 1] : nil
        }.last
        return try path.map { path throws(ConfigurationError) in try ConfigurationFile(path: path, options: options) }
    }

    /// Every option as it takes effect, in the file's format, passwords masked.
    func effectiveConfiguration() -> String {
        var values: [String: [String]] = [:]
        var index = 0
        let options = Self.options
        while index < effectiveArguments.count {
            let argument = effectiveArguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                values["devices", default: []].append(argument)
                continue
            }
            let name = String(argument.dropFirst(2).prefix { $0 != "=" })
            switch options.kinds[name] {
            case .flag?: values[name] = ["true"]
            case nil where name == "config" && !argument.contains("="):
                index += 1
            case .option?, .repeating?:
                let value = argument.contains("=")
                    ? String(argument.drop { $0 != "=" }.dropFirst()) : index < effectiveArguments.count ? effectiveArguments[index] : ""
                if !argument.contains("=") { index += 1 }
                values[name] = (options.kinds[name] == .repeating ? values[name] ?? [] : []) + [value]
            default: break
            }
        }
        // A number bare when the file reads it back as the same text; anything else
        // quoted (`"0042"` is an identifier, and a bare 0042 no TOML number).
        func quoted(_ value: String) -> String {
            let text = ServiceAddress.redacted(value)
            if Int(text).map({ String($0) }) == text || Double(text).map({ "\($0)" }) == text { return text }
            return "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        }
        return options.order.map { key in
            let kind = options.kinds[key]
            if kind == .flag { return "\(key) = \(values[key] != nil)" }
            if values[key] != nil, TraccarOptions.secretOptions.contains(key) { return "\(key) = \"***\"" }
            if let given = values[key] {
                let list = kind == .positional || kind == .repeating
                return "\(key) = " + (list ? "[" + given.map(quoted).joined(separator: ", ") + "]" : quoted(given[0]))
            }
            if let value = options.defaults[key] { return "\(key) = \(quoted(value))" }
            return "# \(key) is not set"
        }.joined(separator: "\n")
    }
}
