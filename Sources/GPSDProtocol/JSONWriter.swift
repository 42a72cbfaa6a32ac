/// Writes one gpsd report: compact JSON, `class` first, no `null`, ended by CR LF.
///
/// gpsd's clients depend on the exact shape: cgps and gpxlogger look for the literal
/// `"class":"TPV"` at the first `"class":`, the Python module skips lines that do not
/// end in `}\r\n`. Numbers are printed with gpsd's precision for each field, straight
/// into bytes, without Foundation or an intermediate `String`.
public struct JSONWriter {
    /// The report so far.
    public private(set) var bytes: [UInt8]
    private var needsComma = false

    /// An empty writer, for values written outside a report.
    init() {
        bytes = []
    }

    /// Starts a report of `reportClass` (`"TPV"`), reserving room for a typical report.
    public init(class reportClass: StaticString, capacity: Int = 256) {
        self.init(class: reportClass, appendingTo: [])
        bytes.reserveCapacity(capacity)
    }

    /// Starts a report at the end of `buffer`, so that many reports can be written into
    /// one buffer without copying each.
    public init(class reportClass: StaticString, appendingTo buffer: [UInt8]) {
        bytes = buffer
        bytes.append(UInt8(ascii: "{"))
        field("class", string: reportClass)
    }

    /// Ends the object and the line; the bytes are then one complete report.
    public mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(13)
        bytes.append(10)
        return bytes
    }

    /// Adds `"name":` after a comma when needed.
    public mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        bytes.append(UInt8(ascii: "\""))
        append(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func field(_ name: StaticString, string: StaticString) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        append(string)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string field, escaped as JSON requires.
    public mutating func field(_ name: StaticString, string: String) {
        key(name)
        appendQuoted(string)
    }

    public mutating func field(_ name: StaticString, _ value: Int) {
        key(name)
        appendInteger(value)
    }

    public mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        append(value ? "true" : "false")
    }

    /// A number with `decimals` digits after the point; left out when `nil` or not finite.
    public mutating func field(_ name: StaticString, _ value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        key(name)
        appendFixed(value, decimals: decimals)
    }

    /// An object or array value written by `body`; the writer starts it and closes it.
    public mutating func nested(_ name: StaticString?, open: UInt8, close: UInt8, _ body: (inout JSONWriter) -> Void) {
        if let name { key(name) } else if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(open)
        needsComma = false
        body(&self)
        bytes.append(close)
        needsComma = true
    }

    /// Appends one byte as it is, for callers that build a value themselves.
    mutating func appendByte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Field names are a few bytes: a loop beats a call to memmove.
    private mutating func append(_ text: StaticString) {
        let start = text.utf8Start
        for index in 0..<text.utf8CodeUnitCount { bytes.append(start[index]) }
    }

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(contentsOf: [Self.hexDigit(byte >> 4), Self.hexDigit(byte & 0xF)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    mutating func appendInteger(_ value: Int, minimumDigits: Int = 1) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, minimumDigits: minimumDigits)
    }

    private mutating func appendDigits(_ value: UInt, minimumDigits: Int) {
        var divisor: UInt = 1
        var digits = 1
        while divisor <= value / 10 {
            divisor *= 10
            digits += 1
        }
        for _ in digits..<max(digits, minimumDigits) { bytes.append(UInt8(ascii: "0")) }
        var remaining = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining / divisor))
            remaining %= divisor
            divisor /= 10
        }
    }

    /// `value` rounded half away from zero to `decimals` places, as `printf("%.*f")` prints
    /// it except at exact binary ties.
    mutating func appendFixed(_ value: Double, decimals: Int) {
        var unit: Double = 1
        for _ in 0..<decimals { unit *= 10 }
        let scaled = (value.magnitude * unit).rounded()
        guard scaled < 9e18 else {
            bytes.append(contentsOf: Array(String(value).utf8))
            return
        }
        let digits = UInt(scaled)
        let divisor = UInt(unit)
        if value < 0, digits != 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(digits / divisor, minimumDigits: 1)
        if decimals > 0 {
            bytes.append(UInt8(ascii: "."))
            appendDigits(digits % divisor, minimumDigits: decimals)
        }
    }
}
