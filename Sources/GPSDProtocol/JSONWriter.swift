import GPSFix

/// Writes one gpsd report: compact JSON, `class` first, no `null`, ended by CR LF.
///
/// gpsd's clients depend on the exact shape: cgps and gpxlogger look for the literal
/// `"class":"TPV"` at the first `"class":`, the Python module skips lines that do not
/// end in `}\r\n`. Numbers are printed with gpsd's precision for each field, straight
/// into bytes, without Foundation or an intermediate `String`.
///
/// The writer writes into ``JSONBytes``, which it owns while it writes; every token (a
/// key, a number, a time) is written with one capacity check, straight into that memory.
/// The bytes become an array once, when the report is finished, or go on to the next
/// report's writer (``init(class:continuing:reserving:)``, ``finishBytes()``). Its
/// small writers (a key, a field) are inlined into the reports, where each key's length
/// and each number's precision are constants.
public struct JSONWriter: ~Copyable {
    // Usable from inlinable code: a report's fields are written where they are named,
    // with their keys' lengths and their precisions known.
    @usableFromInline var bytes: JSONBytes
    @usableFromInline var needsComma = false

    /// An empty writer, for values written outside a report.
    init(capacity: Int = 64) {
        bytes = JSONBytes(capacity: capacity)
    }

    /// Starts a report of `reportClass` (`"TPV"`), with room for `capacity` bytes before it grows.
    public init(class reportClass: StaticString, capacity: Int = 256) {
        self.init(class: reportClass, continuing: JSONBytes(capacity: capacity))
    }

    /// Starts a report after the bytes already in `bytes` (the reports before it), with
    /// room for `reserving` more bytes before they grow: ``finishBytes()`` gives them back
    /// with the report appended.
    public init(class reportClass: StaticString, continuing bytes: consuming JSONBytes, reserving: Int = 256) {
        bytes.reserve(reserving)
        self.bytes = bytes
        appendByte(UInt8(ascii: "{"))
        field("class", string: reportClass)
    }

    /// Starts an object of another protocol, whose first field names its type: for
    /// OwnTracks, `JSONWriter(typeField: "_type", type: "location")`.
    public init(typeField: StaticString, type: StaticString, capacity: Int = 256) {
        self.init(capacity: capacity)
        appendByte(UInt8(ascii: "{"))
        field(typeField, string: type)
    }

    /// Starts a plain JSON object, with no type field first: Home Assistant's discovery
    /// configs and attributes.
    public init(objectWithCapacity capacity: Int) {
        self.init(capacity: capacity)
        appendByte(UInt8(ascii: "{"))
    }

    /// Ends the object and the line; returns the complete report as an array.
    public consuming func finish() -> [UInt8] {
        finishBytes().array
    }

    /// Ends the object and the line; returns the bytes, those given at the start (if
    /// any) followed by the complete report.
    public consuming func finishBytes() -> JSONBytes {
        appendToken(maximumCount: 3) { output in
            output[0] = UInt8(ascii: "}")
            output[1] = 13
            output[2] = 10
            return 3
        }
        return bytes
    }

    /// What has been written so far, as text.
    var text: String { bytes.text }

    /// Adds `"name":` after a comma when needed.
    @inlinable @inline(always)
    public mutating func key(_ name: StaticString) {
        let comma = needsComma
        needsComma = true
        appendToken(maximumCount: name.utf8CodeUnitCount + 4) { output in
            var count = 0
            if comma {
                output[0] = UInt8(ascii: ",")
                count = 1
            }
            output[count] = UInt8(ascii: "\"")
            count += 1
            // Names are a few bytes: a loop beats a call to memmove.
            for index in 0..<name.utf8CodeUnitCount {
                output[count] = name.utf8Start[index]
                count += 1
            }
            output[count] = UInt8(ascii: "\"")
            output[count + 1] = UInt8(ascii: ":")
            return count + 2
        }
    }

    public mutating func field(_ name: StaticString, string: StaticString) {
        key(name)
        appendByte(UInt8(ascii: "\""))
        append(string)
        appendByte(UInt8(ascii: "\""))
    }

    /// A string field, escaped as JSON requires.
    public mutating func field(_ name: StaticString, string: String) {
        key(name)
        appendQuoted(string)
    }

    @inlinable @inline(always)
    public mutating func field(_ name: StaticString, _ value: Int) {
        key(name)
        appendInteger(value)
    }

    @inlinable @inline(always)
    public mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        // Each literal appended on its own: its length is then a constant, copied with moves.
        if value { append("true") } else { append("false") }
    }

    /// A number with `decimals` digits after the point; left out when `nil` or not finite.
    @inlinable @inline(always)
    public mutating func field(_ name: StaticString, _ value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        key(name)
        appendFixed(value, decimals: decimals)
    }

    /// A number, or `null` when there is none: the HTTP API's fields are always present.
    public mutating func field(_ name: StaticString, orNull value: Double?, decimals: Int) {
        key(name)
        if let value, value.isFinite { appendFixed(value, decimals: decimals) } else { append("null") }
    }

    /// A whole number, or `null`.
    public mutating func field(_ name: StaticString, orNull value: Int?) {
        key(name)
        if let value { appendInteger(value) } else { append("null") }
    }

    /// A string, or `null`.
    public mutating func field(_ name: StaticString, orNull value: String?) {
        key(name)
        if let value { appendQuoted(value) } else { append("null") }
    }

    /// Raw JSON already written elsewhere (a report, an object): `value` must be valid JSON.
    public mutating func field(_ name: StaticString, json value: some Collection<UInt8>) {
        key(name)
        appendToken(maximumCount: value.count) { output in
            var count = 0
            for byte in value {
                output[count] = byte
                count += 1
            }
            return count
        }
    }

    /// One string element of an array being written by ``nested(_:open:close:_:)``.
    public mutating func element(string: String) {
        if needsComma { appendByte(UInt8(ascii: ",")) }
        needsComma = true
        appendQuoted(string)
    }

    /// An object or array value written by `body`; the writer starts it and closes it.
    public mutating func nested(_ name: StaticString?, open: UInt8, close: UInt8, _ body: (inout JSONWriter) -> Void) {
        if let name { key(name) } else if needsComma { appendByte(UInt8(ascii: ",")) }
        appendByte(open)
        needsComma = false
        body(&self)
        appendByte(close)
        needsComma = true
    }

    /// Appends one byte as it is, for callers that build a value themselves.
    @inlinable @inline(always)
    mutating func appendByte(_ byte: UInt8) {
        appendToken(maximumCount: 1) { output in
            output.pointee = byte
            return 1
        }
    }

    @inlinable @inline(always)
    mutating func append(_ text: StaticString) {
        appendToken(maximumCount: text.utf8CodeUnitCount) { output in
            UnsafeMutableRawPointer(output).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
            return text.utf8CodeUnitCount
        }
    }

    /// Lets `body` write up to `maximumCount` bytes at the end of the report, `body`
    /// returning how many it wrote: one capacity check per token instead of per byte.
    @inlinable @inline(always)
    mutating func appendToken(maximumCount: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        bytes.appendToken(maximumCount: maximumCount, body)
    }

    /// Makes room for a run of at most `maximumCount` bytes, after one capacity check,
    /// and returns the cursor that writes it; ``endRun(_:)`` keeps what it wrote. Nothing
    /// else is written between the two. The run is a value of its own: the writer's next
    /// key has its comma.
    @inline(always)
    mutating func beginRun(maximumCount: Int) -> JSONCursor {
        JSONCursor(bytes.beginRun(maximumCount: maximumCount))
    }

    /// Ends the run `cursor` wrote, begun by ``beginRun(maximumCount:)``.
    @inline(always)
    mutating func endRun(_ cursor: JSONCursor) {
        bytes.endRun(at: cursor.position)
    }

    private mutating func appendQuoted(_ text: String) {
        appendByte(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                appendByte(UInt8(ascii: "\\"))
                appendByte(byte)
            case 0..<0x20:
                append("\\u00")
                appendByte(Self.hexDigit(byte >> 4))
                appendByte(Self.hexDigit(byte & 0xF))
            default:
                appendByte(byte)
            }
        }
        appendByte(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    @inlinable @inline(always)
    mutating func appendInteger(_ value: Int, minimumDigits: Int = 1) {
        appendToken(maximumCount: 1 + max(20, minimumDigits)) { output in
            var count = 0
            if value < 0 {
                output[0] = UInt8(ascii: "-")
                count = 1
            }
            return count + Self.writeDigits(value.magnitude, minimumDigits: minimumDigits, to: output + count)
        }
    }

    /// Writes `value` in decimal, zero-padded to `minimumDigits`, at `output`; returns how
    /// many bytes it wrote (at most 20, or `minimumDigits`).
    @inlinable @inline(always)
    static func writeDigits(_ value: UInt, minimumDigits: Int, to output: UnsafeMutablePointer<UInt8>) -> Int {
        FixedPoint.writeDigits(value, minimumDigits: minimumDigits, to: output)
    }

    /// `value` with `decimals` places (0...9), as ``FixedPoint`` writes every number.
    @inlinable @inline(always)
    mutating func appendFixed(_ value: Double, decimals: Int) {
        appendToken(maximumCount: FixedPoint.maximumCount(for: value, decimals: decimals)) { output in
            FixedPoint.write(value, decimals: decimals, to: output)
        }
    }
}
