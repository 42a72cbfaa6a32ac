extension TOMLTable {
    /// Reads `text`, a TOML document, as its root table.
    public init(parsing text: String) throws(TOMLError) {
        var parser = TOMLParser(Array(text.utf8))
        self = try parser.document()
    }
}

/// A reader of TOML's bytes, one line's construct at a time.
private struct TOMLParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    /// How deep arrays and inline tables may nest, and how many parts a dotted key may
    /// have: a configuration needs two.
    static let maximumDepth = 32
    private var depth = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        // A byte-order mark, as some editors write.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func fail(_ message: String) -> TOMLError { TOMLError(line: line, message: message) }

    mutating func document() throws(TOMLError) -> TOMLTable {
        var root = TOMLTable()
        var table: [String] = []
        while true {
            skipBlanks()
            guard let byte = current else { return root }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "#"), UInt8(ascii: "\r"):
                try endOfLine()
            case UInt8(ascii: "["):
                index += 1
                if current == UInt8(ascii: "[") { throw fail("arrays of tables ([[...]]) are not used in this file") }
                let headerLine = line
                table = try keyPath(endingAt: UInt8(ascii: "]"))
                index += 1
                try root.openTable(at: table[...], line: headerLine)
                try endOfLine()
            default:
                let keyLine = line
                let key = try keyPath(endingAt: UInt8(ascii: "="))
                index += 1
                skipBlanks()
                let value = try self.value()
                try root.insert(value, at: (table + key)[...], line: keyLine)
                try endOfLine()
            }
        }
    }

    /// `a.b."c d"` up to `end`, which is left to read.
    private mutating func keyPath(endingAt end: UInt8) throws(TOMLError) -> [String] {
        var path: [String] = []
        while true {
            skipBlanks()
            // Each part is a table on the way, made by a call of its own: bounded as nesting is.
            guard path.count < Self.maximumDepth else { throw fail("a key of more than \(Self.maximumDepth) parts") }
            path.append(try key())
            skipBlanks()
            switch current {
            case UInt8(ascii: "."): index += 1
            case end: return path
            default: throw fail(end == UInt8(ascii: "=") ? "a key is followed by = and its value" : "a table header ends with ]")
            }
        }
    }

    /// A bare, basic or literal key.
    private mutating func key() throws(TOMLError) -> String {
        switch current {
        case UInt8(ascii: "\""): return try basicString()
        case UInt8(ascii: "'"): return try literalString()
        default:
            let start = index
            while let byte = current, byte.isBareKey { index += 1 }
            guard index > start else { throw fail("a key is expected here") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }

    private mutating func value() throws(TOMLError) -> TOMLValue {
        switch current {
        case UInt8(ascii: "\""):
            if bytes[index...].starts(with: "\"\"\"".utf8) { throw fail("multi-line strings are not used in this file") }
            return .string(try basicString())
        case UInt8(ascii: "'"):
            if bytes[index...].starts(with: "'''".utf8) { throw fail("multi-line strings are not used in this file") }
            return .string(try literalString())
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw fail("values nest more than \(Self.maximumDepth) deep") }
            depth += 1
            defer { depth -= 1 }
            return current == UInt8(ascii: "[") ? .array(try array()) : .table(try inlineTable())
        case nil, UInt8(ascii: "\n"), UInt8(ascii: "#"):
            throw fail("a value is missing after =")
        default:
            return try scalar()
        }
    }

    /// `true`, `false`, an integer or a float: the bytes up to the next separator.
    private mutating func scalar() throws(TOMLError) -> TOMLValue {
        let start = index
        while let byte = current, !byte.endsScalar { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        switch text {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        if let integer = Self.integer(text) { return .integer(integer) }
        if let float = Self.float(text) { return .float(float) }
        // The text is not repeated: an unquoted value may be a password.
        if text.count >= 10, text.dropFirst(4).first == "-", text.prefix(4).allSatisfy(\.isNumber) {
            throw fail("dates are not used in this file: write the date as a string, in quotes")
        }
        throw fail(text.isEmpty ? "a value is missing here" : "this is not a value: write text in quotes")
    }

    /// Whether each `_` of `text` stands between two digits, as TOML asks.
    private static func underscoresBetweenDigits(_ text: String) -> Bool {
        let characters = Array(text)
        return characters.indices.allSatisfy { index in
            characters[index] != "_"
                || (index > 0 && index + 1 < characters.count && characters[index - 1].isHexDigit && characters[index + 1].isHexDigit)
        }
    }

    /// A decimal integer (sign and `_` allowed), or `0x`, `0o`, `0b` and digits.
    private static func integer(_ text: String) -> Int? {
        guard underscoresBetweenDigits(text) else { return nil }
        let digits = text.filter { $0 != "_" }
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where digits.hasPrefix(prefix) {
            let rest = digits.dropFirst(2)
            guard !rest.isEmpty, rest.allSatisfy({ $0.hexDigitValue.map { $0 < radix } ?? false }) else { return nil }
            return Int(rest, radix: radix)
        }
        let unsigned = digits.first == "+" || digits.first == "-" ? digits.dropFirst() : Substring(digits)
        // TOML has no leading zeros in decimal integers.
        guard unsigned.allSatisfy(\.isNumber), unsigned == "0" || !unsigned.hasPrefix("0") else { return nil }
        return Int(digits)
    }

    /// A decimal float: an integer part as TOML writes integers, then a fraction, an
    /// exponent or both.
    private static func float(_ text: String) -> Double? {
        guard underscoresBetweenDigits(text) else { return nil }
        let digits = text.filter { $0 != "_" }
        let unsigned = digits.first == "+" || digits.first == "-" ? digits.dropFirst() : Substring(digits)
        let integerPart = unsigned.prefix { $0.isNumber }
        // A point has digits on both sides.
        let pointed = unsigned.firstIndex(of: ".").map { point in
            point > unsigned.startIndex && unsigned[unsigned.index(after: point)...].first?.isNumber == true
        }
        guard !integerPart.isEmpty, integerPart == "0" || !integerPart.hasPrefix("0"), pointed != false,
            unsigned.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }),
            unsigned.allSatisfy({ "0123456789+-.eE".contains($0) })
        else { return nil }
        return Double(digits).flatMap { $0.isFinite ? $0 : nil }
    }

    private mutating func array() throws(TOMLError) -> [TOMLValue] {
        index += 1
        var elements: [TOMLValue] = []
        while true {
            try skipBlanksAndLines()
            if current == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            elements.append(try value())
            try skipBlanksAndLines()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): break
            default: throw fail("an array's values are separated by commas and end with ]")
            }
        }
    }

    /// `{ key = value, ... }` on one line.
    private mutating func inlineTable() throws(TOMLError) -> TOMLTable {
        index += 1
        var table = TOMLTable()
        skipBlanks()
        if current == UInt8(ascii: "}") {
            index += 1
            return table
        }
        while true {
            let key = try keyPath(endingAt: UInt8(ascii: "="))
            index += 1
            skipBlanks()
            try table.insert(try value(), at: key[...], line: line)
            skipBlanks()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return table
            default: throw fail("an inline table's keys are separated by commas and end with }, on one line")
            }
        }
    }

    /// `"..."` with TOML's escapes.
    private mutating func basicString() throws(TOMLError) -> String {
        index += 1
        var text: [UInt8] = []
        while true {
            guard let byte = current, byte != UInt8(ascii: "\n") else { throw fail("a string is not closed on its line") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try Self.text(text, line: line)
            case UInt8(ascii: "\\"):
                guard let escape = current else { throw fail("a string is not closed on its line") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): text.append(escape)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "u"), UInt8(ascii: "U"):
                    let count = escape == UInt8(ascii: "u") ? 4 : 8
                    guard index + count <= bytes.count, bytes[index..<index + count].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                        let scalar = UInt32(String(decoding: bytes[index..<index + count], as: UTF8.self), radix: 16)
                            .flatMap(Unicode.Scalar.init)
                    else { throw fail("\\u is followed by \(count) hexadecimal digits of a Unicode scalar") }
                    index += count
                    text.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw fail("\\\(Character(Unicode.Scalar(escape))) is not an escape: write \\\\ for a backslash, or use 'single quotes'")
                }
            default:
                text.append(byte)
            }
        }
    }

    /// `'...'`, as it is.
    private mutating func literalString() throws(TOMLError) -> String {
        index += 1
        let start = index
        while let byte = current, byte != UInt8(ascii: "'") {
            guard byte != UInt8(ascii: "\n") else { throw fail("a string is not closed on its line") }
            index += 1
        }
        guard current != nil else { throw fail("a string is not closed on its line") }
        index += 1
        return try Self.text(bytes[start..<index - 1], line: line)
    }

    private static func text(_ bytes: some Collection<UInt8>, line: Int) throws(TOMLError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw TOMLError(line: line, message: "a string is not UTF-8")
        }
        return text
    }

    private mutating func skipBlanks() {
        while current == UInt8(ascii: " ") || current == UInt8(ascii: "\t") { index += 1 }
    }

    /// Blanks, comments and line ends, inside an array.
    private mutating func skipBlanksAndLines() throws(TOMLError) {
        while true {
            skipBlanks()
            guard let byte = current, byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "#") else { return }
            try endOfLine()
        }
    }

    /// What may follow a construct: blanks, a comment, the line's end.
    private mutating func endOfLine() throws(TOMLError) {
        skipBlanks()
        if current == UInt8(ascii: "#") {
            while let byte = current, byte != UInt8(ascii: "\n") { index += 1 }
        }
        if current == UInt8(ascii: "\r") { index += 1 }
        switch current {
        case nil: return
        case UInt8(ascii: "\n"):
            index += 1
            line += 1
        default:
            throw fail("'\(Character(Unicode.Scalar(current!)))' after a value: one key = value a line (a comment starts with #)")
        }
    }
}

extension UInt8 {
    /// A letter, digit, `_` or `-`: what a bare key is made of.
    fileprivate var isBareKey: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || (0x30...0x39).contains(self) || self == 0x5F || self == 0x2D
    }

    /// What ends a bare value: a blank, a separator, a comment, a line's end.
    fileprivate var endsScalar: Bool {
        [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "#"),
         UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(self)
    }
}
