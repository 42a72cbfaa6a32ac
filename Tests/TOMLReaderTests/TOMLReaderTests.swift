import Testing

@testable import TOMLReader

@Suite("TOML reader")
struct TOMLReaderTests {
    @Test("keys, values and lines of a configuration file, in the file's order")
    func configurationFile() throws {
        let table = try TOMLTable(parsing: """
            # gpsfixd's file
            devices = ["/dev/ttyACM0", '/dev/serial/by-id/usb-u-blox'] # two
            tcp = "127.0.0.1:2947"
            mqtt-interval = 5
            traccar-interval = 0.5
            no-shm = true
            hex = 0xff_ff
            big = 1_000_000
            escaped = "tab\\tquote\\" \\u00e9 \\U0001F6F0"
            "quoted key" = -3
            speeds = [
                9600,   # the factory speed
                115200,
            ]
            inline = { rate = 5, gnss = ["gps", "galileo"] }

            [receiver."/dev/ttyACM0"]
            rate = 10
            [receiver]
            save = false
            """)
        #expect(table.entries.map(\.key) == [
            "devices", "tcp", "mqtt-interval", "traccar-interval", "no-shm", "hex", "big", "escaped", "quoted key", "speeds",
            "inline", "receiver",
        ])
        #expect(table["devices"] == .array([.string("/dev/ttyACM0"), .string("/dev/serial/by-id/usb-u-blox")]))
        #expect(table.line(of: "devices") == 2)
        #expect(table["mqtt-interval"] == .integer(5))
        #expect(table["traccar-interval"] == .float(0.5))
        #expect(table["no-shm"] == .boolean(true))
        #expect(table["hex"] == .integer(0xFFFF))
        #expect(table["big"] == .integer(1_000_000))
        #expect(table["escaped"] == .string("tab\tquote\" é 🛰"))
        #expect(table["quoted key"] == .integer(-3))
        #expect(table["speeds"] == .array([.integer(9600), .integer(115_200)]))
        #expect(table.line(of: "inline") == 15)
        #expect(table["inline"]?.table?["gnss"] == .array([.string("gps"), .string("galileo")]))
        let receiver = try #require(table["receiver"]?.table)
        #expect(receiver["save"] == .boolean(false))
        #expect(receiver["/dev/ttyACM0"]?.table?["rate"] == .integer(10))
        #expect(table.line(of: "receiver") == 17)
    }

    @Test("dotted keys and headers make the tables on their way")
    func dottedKeys() throws {
        let table = try TOMLTable(parsing: "a.b.c = 1\n[x.y]\nz = 2\n[x]\nw = 3\n")
        #expect(table["a"]?.table?["b"]?.table?["c"] == .integer(1))
        #expect(table["x"]?.table?["y"]?.table?["z"] == .integer(2))
        #expect(table["x"]?.table?["w"] == .integer(3))
    }

    @Test(
        "what is not this file's TOML is refused with its line",
        arguments: [
            ("a = 1\na = 2", 2, "set twice"),
            ("[t]\n[t]", 2, "defined twice"),
            ("a = 1\n[a]", 2, "not a table"),
            ("a = \"open", 1, "not closed"),
            ("a = hello", 1, "not a value"),
            ("a = 1 2", 1, "after a value"),
            ("a =", 1, "missing"),
            ("\n\na = [1, 2", 3, "separated by commas"),
            ("a = 1979-05-27", 1, "dates"),
            ("a = \"\"\"x\"\"\"", 1, "multi-line"),
            ("[[points]]", 1, "arrays of tables"),
            ("a = 012", 1, "not a value"),
            ("a = \"\\q\"", 1, "not an escape"),
            ("= 3", 1, "key is expected"),
            ("a = { b = 1", 1, "inline table"),
            ("a = 0x-1", 1, "not a value"),
            ("a = 1_.5", 1, "not a value"),
            ("a = 1.e5", 1, "not a value"),
            ("a = -_1", 1, "not a value"),
            ("a = \"\\u+041\"", 1, "hexadecimal digits"),
            ("a = " + String(repeating: "[", count: 40), 1, "nest more than 32"),
            // A key of many parts makes a table for each: bounded as nesting is.
            (String(repeating: "a.", count: 100_000) + "b = 1", 1, "more than 32 parts"),
            ("[" + String(repeating: "a.", count: 40) + "b]", 1, "more than 32 parts"),
        ])
    func refusals(text: String, line: Int, message: String) {
        #expect {
            try TOMLTable(parsing: text)
        } throws: { error in
            guard let error = error as? TOMLError else { return false }
            return error.line == line && error.message.contains(message)
        }
    }

    @Test("a value left unquoted is refused without being repeated: it may be a password", arguments: [
        "ntrip = ntrip://rover:s3cret@caster.example:2101/MOUNT", "mqtt = mqtt://user:s3cret@broker", "password = 2024-s3cret-01",
    ])
    func refusalKeepsTheValueOut(text: String) {
        #expect {
            try TOMLTable(parsing: text)
        } throws: { error in
            guard let error = error as? TOMLError else { return false }
            return error.line == 1 && !error.message.contains("s3cret") && !"\(error)".contains("s3cret")
        }
    }

    @Test("a byte-order mark is read past; a section of many keys reads in linear time")
    func markAndSize() throws {
        #expect(try TOMLTable(parsing: "\u{FEFF}a = 1")["a"] == .integer(1))
        let keys = (0..<50_000).map { "k\($0) = \($0)" }.joined(separator: "\n")
        let table = try TOMLTable(parsing: "[receiver]\n" + keys)
        #expect(table["receiver"]?.table?.entries.count == 50_000)
        #expect(table["receiver"]?.table?["k49999"] == .integer(49_999))
    }

    @Test("an empty file and a file of comments are empty tables")
    func empty() throws {
        #expect(try TOMLTable(parsing: "").isEmpty)
        #expect(try TOMLTable(parsing: "# nothing\n\n   \n# here\r\n").isEmpty)
    }
}
