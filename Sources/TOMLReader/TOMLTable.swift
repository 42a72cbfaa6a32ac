/// A TOML table: its keys in the order the file gives them, each with the line it is on.
///
/// The configuration file's reader (``TOMLTable/init(parsing:)``) reads the part of TOML
/// 1.0 a configuration file uses: `KEY = VALUE` lines, comments, `[table]` and
/// `[table."sub table"]` headers, dotted keys, inline tables, and values that are strings
/// (basic, with escapes, and literal), integers (decimal, `0x`, `0o`, `0b`, with `_`),
/// floats (`inf` and `nan` included), booleans and arrays of those. Multi-line strings,
/// arrays of tables (`[[...]]`) and dates are refused with a message that says so, rather
/// than read wrongly.
public struct TOMLTable: Equatable, Sendable, Sequence {
    /// One key of a table.
    public struct Entry: Equatable, Sendable {
        /// The key, unquoted.
        public var key: String
        /// Its value.
        public var value: TOMLValue
        /// The line (from 1) that sets the key, or that opens its table.
        public var line: Int
    }

    /// The keys, in the order the file gives them.
    public private(set) var entries: [Entry] = []
    /// Where each key is in ``entries``.
    private var positions: [String: Int] = [:]

    /// An empty table.
    public init() {}

    /// Whether the table sets no key.
    public var isEmpty: Bool { entries.isEmpty }

    /// The value of `key`, or `nil` when the table does not set it.
    public subscript(key: String) -> TOMLValue? {
        positions[key].map { entries[$0].value }
    }

    /// The line that sets `key`.
    public func line(of key: String) -> Int? {
        positions[key].map { entries[$0].line }
    }

    /// The entries in the file's order.
    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    /// Whether a `[header]` opened this table (a table made on the way to a deeper key
    /// or header may still get its own header, once).
    private var isHeaded = false

    public static func == (left: TOMLTable, right: TOMLTable) -> Bool { left.entries == right.entries }

    /// Sets `value` at `path` under this table, making the tables on the way.
    mutating func insert(_ value: TOMLValue, at path: ArraySlice<String>, line: Int) throws(TOMLError) {
        try update(at: path, line: line) { existing throws(TOMLError) in
            if let existing { throw TOMLError(line: line, message: "'\(path.last!)' is set twice (first on line \(existing.line))") }
            return value
        }
    }

    /// Opens the table at `path` for a `[header]`: a new one, or one made on the way to
    /// a deeper key that has no header of its own yet.
    mutating func openTable(at path: ArraySlice<String>, line: Int) throws(TOMLError) {
        try update(at: path, line: line) { existing throws(TOMLError) in
            guard let existing else {
                var table = TOMLTable()
                table.isHeaded = true
                return .table(table)
            }
            guard case .table(var table) = existing.value else {
                throw TOMLError(line: line, message: "'\(path.last!)' is a value (line \(existing.line)), not a table")
            }
            guard !table.isHeaded else {
                throw TOMLError(line: line, message: "[\(path.joined(separator: "."))] is defined twice (first on line \(existing.line))")
            }
            table.isHeaded = true
            return .table(table)
        }
    }

    /// Replaces the entry at `path` by what `change` makes of it (`nil`: there is none
    /// yet), making the tables on the way.
    private mutating func update(
        at path: ArraySlice<String>, line: Int, _ change: (Entry?) throws(TOMLError) -> TOMLValue
    ) throws(TOMLError) {
        let key = path.first!
        let index = positions[key]
        if path.count == 1 {
            let value = try change(index.map { entries[$0] })
            if let index { entries[index].value = value } else { append(Entry(key: key, value: value, line: line)) }
            return
        }
        guard let index else {
            var table = TOMLTable()
            try table.update(at: path.dropFirst(), line: line, change)
            append(Entry(key: key, value: .table(table), line: line))
            return
        }
        guard case .table(var table) = entries[index].value else {
            throw TOMLError(line: line, message: "'\(key)' is a value (line \(entries[index].line)), not a table")
        }
        // Taken out while it changes, so that it changes in place rather than as a copy.
        entries[index].value = .boolean(false)
        defer { entries[index].value = .table(table) }
        try table.update(at: path.dropFirst(), line: line, change)
    }

    private mutating func append(_ entry: Entry) {
        positions[entry.key] = entries.count
        entries.append(entry)
    }
}

/// A value of a TOML file.
public enum TOMLValue: Equatable, Sendable {
    /// A basic or literal string, escapes resolved.
    case string(String)
    /// A decimal, hexadecimal, octal or binary integer.
    case integer(Int)
    /// A float, `inf` and `nan` included.
    case float(Double)
    /// `true` or `false`.
    case boolean(Bool)
    /// An array of values.
    case array([TOMLValue])
    /// A table: a `[header]`'s, an inline one, or one a dotted key makes.
    case table(TOMLTable)

    /// The string, when the value is one.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, when the value is one.
    public var integer: Int? { if case .integer(let value) = self { value } else { nil } }
    /// The float, when the value is one.
    public var float: Double? { if case .float(let value) = self { value } else { nil } }
    /// The boolean, when the value is one.
    public var boolean: Bool? { if case .boolean(let value) = self { value } else { nil } }
    /// The array, when the value is one.
    public var array: [TOMLValue]? { if case .array(let value) = self { value } else { nil } }
    /// The table, when the value is one.
    public var table: TOMLTable? { if case .table(let value) = self { value } else { nil } }
}

/// A file that is not the TOML the reader takes, and the line where it stops being so.
public struct TOMLError: Error, Equatable, CustomStringConvertible {
    /// The line (from 1).
    public var line: Int
    /// What is wrong there, and what to write instead where it can tell.
    public var message: String

    public var description: String { "line \(line): \(message)" }
}
