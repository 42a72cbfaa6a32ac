import Foundation
import TestSupport
import Testing

/// The documents against the code: every `--option` the README, `docs/`, the man pages and
/// the packaged configuration file name is one the programs have, every configuration
/// snippet they give is one the daemon takes, and every option of the daemon (and of the
/// tool's commands) is in its man page.
///
/// The code's options come from the built programs themselves (ArgumentParser's
/// `--experimental-dump-help`, the account the configuration file is checked against
/// too), and the snippets are checked by `gpsfixd --check-config`, so nothing here keeps a
/// second list of options that could drift as the documents did.
@Suite("The documents name the options the code has")
struct DocumentedOptionsTests {
    static let root = Binaries.fixtures.deletingLastPathComponent()

    /// Options of programs that are not ours, named in the documents without their
    /// program beside them (in the benchmarks' prose); each with its program.
    static let foreignOptions: [String: String] = [
        "flood": "daemon_bench.py", "watchers": "daemon_bench.py", "hz": "daemon_bench.py", "seconds": "daemon_bench.py",
        "rounds": "daemon_bench.py", "pair": "daemon_bench.py", "repetitions": "Benchmarks/run",
    ]

    /// The documents that name options, relative to the package's root.
    static var documents: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        let manPages = ["man1", "man8"].flatMap { section in
            ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("man/\(section)").path)) ?? [])
                .map { "man/\(section)/\($0)" }
        }
        return ["README.md", "systemd/gpsfixd.conf"] + docs.filter { $0.hasSuffix(".md") }.map { "docs/\($0)" } + manPages
    }

    static func text(of document: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
    }

    // MARK: The code's options

    /// Each command's long options, by its path: `gpsfixd`, `gpsfix`, `gpsfix ubx set`.
    static func commands() throws -> [String: Set<String>] {
        var commands: [String: Set<String>] = [:]
        func walk(_ command: [String: Any], path: String) {
            let names = (command["arguments"] as? [[String: Any]] ?? []).flatMap { argument in
                (argument["names"] as? [[String: Any]] ?? []).compactMap { name in
                    name["kind"] as? String == "long" ? name["name"] as? String : nil
                }
            }
            commands[path] = Set(names)
            for child in command["subcommands"] as? [[String: Any]] ?? [] {
                guard let name = child["commandName"] as? String, name != "help" else { continue }
                walk(child, path: path + " " + name)
            }
        }
        for (name, binary) in [("gpsfixd", Binaries.gpsfixd), ("gpsfix", Binaries.gpsfix)] {
            let dump = try run(binary, ["--experimental-dump-help"])
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any], "\(name)'s --experimental-dump-help")
            walk(try #require(document["command"] as? [String: Any]), path: name)
        }
        return commands
    }

    /// The options a command line of `path` may give: its own and its subcommands'.
    static func options(of path: String, in commands: [String: Set<String>]) -> Set<String> {
        commands.filter { $0.key == path || $0.key.hasPrefix(path + " ") }.values.reduce(into: ["help", "version"]) { $0.formUnion($1) }
    }

    // MARK: The documents' options

    /// One `--option` in a document, and the command it is given to: `nil` in prose (or a
    /// code span without a program), where it may be any of ours.
    struct Mention: CustomStringConvertible {
        var document: String
        var line: Int
        var option: String
        var command: String?

        var description: String { "\(document):\(line): --\(option)" + (command.map { " (of \($0))" } ?? "") }
    }

    /// Where the text of a document is code (a command line) and where prose: a part of
    /// the document's text, with its indices.
    struct Segment {
        var text: Substring
        var isCode: Bool
    }

    /// A document cut into code (fenced and indented blocks, a line each, a line ending in
    /// `\` with the next; inline code spans, which may run over lines) and prose. A man
    /// page and the configuration file are prose throughout: their options are checked
    /// against all of ours.
    static func segments(of text: String, markdown: Bool) -> [Segment] {
        guard markdown else { return [Segment(text: text[...], isCode: false)] }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var segments: [Segment] = []
        var paragraph: String.Index?
        func flush(upTo end: String.Index) {
            guard let start = paragraph else { return }
            for (index, part) in text[start..<end].split(separator: "`", omittingEmptySubsequences: false).enumerated() {
                segments.append(Segment(text: part, isCode: index % 2 == 1))
            }
            paragraph = nil
        }
        var fenced = false
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if line.hasPrefix("```") {
                flush(upTo: line.startIndex)
                fenced.toggle()
                index += 1
            } else if fenced || line.hasPrefix("    ") {
                flush(upTo: line.startIndex)
                var last = index
                while lines[last].hasSuffix("\\"), last + 1 < lines.count { last += 1 }
                segments.append(Segment(text: text[line.startIndex..<lines[last].endIndex], isCode: true))
                index = last + 1
            } else {
                if paragraph == nil { paragraph = line.startIndex }
                if line.allSatisfy(\.isWhitespace) { flush(upTo: line.endIndex) }
                index += 1
            }
        }
        flush(upTo: text.endIndex)
        return segments
    }

    /// Every `--option` of `document`, each with the command it belongs to where the
    /// document shows one: the program a command line starts with (after `sudo`, `exec`, a
    /// variable's assignment, a quote, a pipe or `&&`), `gpsfix` with the subcommands that
    /// follow it. A command line of another program (systemctl, git, gpsd, a benchmark)
    /// gives its options to that program: they are not looked at.
    static func mentions(in document: String, commands: [String: Set<String>]) throws -> [Mention] {
        mentions(in: try Self.text(of: document), of: document, commands: commands)
    }

    static func mentions(in text: String, of document: String, commands: [String: Set<String>]) -> [Mention] {
        var text = text
        let isMarkdown = document.hasSuffix(".md")
        if !isMarkdown {
            // roff: \- is a dash; \fB, \fI, \fR and \fP change the font.
            text = text.replacingOccurrences(of: "\\-", with: "-")
                .replacingOccurrences(of: #"\\f[BIRP]"#, with: "", options: .regularExpression)
        }
        let lineEnds = text.indices.filter { text[$0] == "\n" }
        func line(of index: String.Index) -> Int {
            var low = 0, high = lineEnds.count
            while low < high {
                let middle = (low + high) / 2
                if lineEnds[middle] < index { low = middle + 1 } else { high = middle }
            }
            return low + 1
        }
        var mentions: [Mention] = []
        for segment in segments(of: text, markdown: isMarkdown) {
            // nil: no program named yet; .some(nil): another program's command line.
            var command: String?? = nil
            var atCommandPosition = segment.isCode
            var extendingSubcommands = false
            // The command a quoted one is inside of (`--daemon 'gpsfixd ...' --daemon ...`).
            var outer: String??? = nil
            for token in segment.text.split(whereSeparator: { $0 == " " || $0.isNewline }) {
                var word = token
                // A quoted or parenthesised command inside another.
                if segment.isCode, let first = word.first, "'\"($".contains(first) {
                    word = word.drop { "'\"($".contains($0) }
                    if outer == nil, first == "'" || first == "\"" { outer = .some(command) }
                    atCommandPosition = true
                }
                defer {
                    if segment.isCode, token.count > 1, let last = token.last, last == "'" || last == "\"", let saved = outer {
                        command = saved
                        outer = nil
                        extendingSubcommands = false
                    }
                }
                let bare = word.drop { "[(<".contains($0) }
                if bare.hasPrefix("--") {
                    let name = bare.dropFirst(2).prefix { $0.isLetter || $0.isNumber || $0 == "-" }
                    guard let first = name.first, first.isLowercase else { continue }
                    extendingSubcommands = false
                    atCommandPosition = false
                    switch command {
                    case .some(nil): break
                    case .some(let ours?): mentions.append(Mention(document: document, line: line(of: token.startIndex), option: String(name), command: ours))
                    case nil: mentions.append(Mention(document: document, line: line(of: token.startIndex), option: String(name), command: nil))
                    }
                } else if atCommandPosition, !word.isEmpty, !word.hasPrefix("-") {
                    if ["sudo", "exec", "env", "nohup", "time"].contains(word) || word.dropFirst().contains("=") { continue }
                    atCommandPosition = false
                    let program = word.split(separator: "/").last.map(String.init) ?? ""
                    if program == "gpsfixd" || program == "gpsfix" {
                        command = .some(program)
                        extendingSubcommands = program == "gpsfix"
                    } else {
                        command = .some(nil)
                    }
                } else if extendingSubcommands, case .some(let ours?) = command, commands[ours + " " + word] != nil {
                    command = .some(ours + " " + word)
                } else {
                    extendingSubcommands = false
                }
                if segment.isCode, ["|", "&&", ";", "&"].contains(where: { word.hasSuffix($0) }) { atCommandPosition = true }
            }
        }
        return mentions
    }

    @Test("the documents are read as a reader would: each option with the command it is given to, another program's left out")
    func mentionsAreAttributed() {
        let commands: [String: Set<String>] = [
            "gpsfixd": ["tcp", "socket"], "gpsfix": [], "gpsfix ubx": [], "gpsfix ubx set": ["rate"], "gpsfix watch": ["json"],
        ]
        let markdown = """
            Give `--tcp` (see `gpsfixd --tcp HOST:PORT`), or:

            ```sh
            sudo gpsfix ubx set /dev/ttyACM0 --rate 5 | gpsfix watch --json
            systemctl enable --now gpsfixd.socket
            daemon_bench.py --pair --daemon 'gpsfixd {device} --socket {sock}' --daemon 'gpsd -N' --hz 1
            gpsfixd /dev/ttyACM0 \\
                --tcp 127.0.0.1:2947
            ```

                gpsfix ubx set DEVICE [--rate HZ]
            """
        let found = Self.mentions(in: markdown, of: "x.md", commands: commands).map { "\($0.line) \($0.option) \($0.command ?? "any")" }
        #expect(found == [
            "1 tcp any", "1 tcp gpsfixd", "4 rate gpsfix ubx set", "4 json gpsfix watch", "6 socket gpsfixd", "8 tcp gpsfixd",
            "11 rate gpsfix ubx set",
        ])
        let roff = ".TP\n.BI \\-\\-ntrip\\-queue \" BYTES\"\n.RB [ \\-\\-near=\\fILAT,LON\\fR ]\n"
        #expect(Self.mentions(in: roff, of: "x.8", commands: commands).map { "\($0.line) \($0.option)" } == ["2 ntrip-queue", "3 near"])
    }

    @Test("every --option the documents name exists: in the command they give it to, or in one of ours")
    func documentedOptionsExist() throws {
        let commands = try Self.commands()
        let ours = commands.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        #expect(commands["gpsfixd"]?.contains("max-clients") == true, "gpsfixd's options: \(commands["gpsfixd"] ?? [])")
        #expect(commands["gpsfix ubx set"]?.contains("rate") == true, "gpsfix's commands: \(commands.keys.sorted())")
        var unknown: [String] = []
        var count = 0
        for document in Self.documents {
            for mention in try Self.mentions(in: document, commands: commands) {
                count += 1
                let known = mention.command.map { Self.options(of: $0, in: commands) } ?? ours.union(Self.foreignOptions.keys)
                if !known.contains(mention.option) { unknown.append(mention.description) }
            }
        }
        #expect(count > 300, "\(count) options found in the documents")
        #expect(unknown.isEmpty, "documented but not in the code:\n\(unknown.joined(separator: "\n"))")
    }

    @Test("every option of gpsfixd is in gpsfixd(8), and every option of gpsfix's commands in gpsfix(1)")
    func codeOptionsAreDocumented() throws {
        let commands = try Self.commands()
        let builtIn: Set<String> = ["help", "version", "experimental-dump-help"]
        for (program, page) in [("gpsfixd", "man/man8/gpsfixd.8"), ("gpsfix", "man/man1/gpsfix.1")] {
            let documented = Set(try Self.mentions(in: page, commands: commands).map(\.option))
            let missing = commands.filter { $0.key == program || $0.key.hasPrefix(program + " ") }
                .flatMap { path, options in options.subtracting(builtIn).subtracting(documented).map { "\(path) --\($0)" } }
            #expect(missing.isEmpty, "not in \(page): \(missing.sorted())")
        }
    }

    /// The configuration the documents show: the packaged file with every commented
    /// setting taken in, each TOML block of the Markdown documents, and the `[receiver]`
    /// tables shown indented; each with its document and first line.
    static func configurations() throws -> [(source: String, toml: String)] {
        let setting = #"^([a-z][a-z0-9-]* = ("[^"]*"|[-0-9.]+|true|false|\[[^\]]*\])|\[receiver[^\]]*\])( *#.*)?$"#
        var configurations: [(String, String)] = []
        // The packaged file, its commented settings (`# speed = 9600`) taken in.
        let packaged = try text(of: "systemd/gpsfixd.conf").split(separator: "\n").compactMap { line -> String? in
            let uncommented = line.hasPrefix("# ") ? line.dropFirst(2) : line
            return uncommented.range(of: setting, options: .regularExpression) != nil ? String(uncommented) : nil
        }
        #expect(packaged.count >= 15, "settings of systemd/gpsfixd.conf: \(packaged)")
        configurations.append(("systemd/gpsfixd.conf", packaged.joined(separator: "\n")))
        for document in documents where document.hasSuffix(".md") {
            // A fenced TOML block, or an indented one that starts with a [receiver] table.
            var fenced: [String]?, indented: [String]?
            var start = 0
            for (index, line) in try text(of: document).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if let lines = indented {
                    if line.hasPrefix("    "), line.dropFirst(4).range(of: setting, options: .regularExpression) != nil {
                        indented = lines + [String(line.dropFirst(4))]
                        continue
                    }
                    configurations.append(("\(document):\(start)", lines.joined(separator: "\n")))
                    indented = nil
                }
                if let lines = fenced {
                    if line == "```" {
                        configurations.append(("\(document):\(start)", lines.joined(separator: "\n")))
                        fenced = nil
                    } else {
                        fenced = lines + [String(line)]
                    }
                } else if line == "```toml" {
                    fenced = []
                    start = index + 1
                } else if line.hasPrefix("    [receiver") {
                    indented = [String(line.dropFirst(4))]
                    start = index + 1
                }
            }
        }
        return configurations
    }

    @Test("the packaged gpsfixd.conf, every setting commented in it taken in, and every configuration the documents show pass gpsfixd --check-config")
    func documentedConfigurationsAreTaken() throws {
        let folder = try makeTemporaryFolder("conf")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configurations = try Self.configurations()
        #expect(configurations.count >= 6, "\(configurations.map(\.source))")
        for (index, (source, toml)) in configurations.enumerated() {
            // A snippet without devices gets one, as the daemon needs a device to check.
            let keys = toml.split(separator: "\n").map { $0.prefix { $0 != " " } }
            let whole = (keys.contains("devices") ? "" : "devices = [\"/dev/gps0\"]\n") + toml + "\n"
            // Tables come last in a file: a snippet's keys go before them.
            let file = folder.appendingPathComponent("\(index).conf")
            try whole.write(to: file, atomically: true, encoding: .utf8)
            let check = try RunningProcess(Binaries.gpsfixd, ["--config", file.path, "--check-config"])
            let status = check.wait(timeout: 20)
            #expect(status == 0, "\(source): gpsfixd --check-config: \(check.errorText)\n\(whole)")
        }
    }
}
