/// A decimal number exactly as a sentence wrote it: an integer magnitude, a count of
/// fraction digits, and a sign.
///
/// NMEA fields are decimal text; converting them to `Double` while parsing would lose
/// the receiver's digits and cost time on every field. `NMEADecimal` keeps the digits
/// (as minmea does) so that a value can be printed back exactly, compared exactly, and
/// converted to floating point once, at the edge, with ``doubleValue``.
///
/// `"-12.340"` is stored as magnitude 12340, scale 3, negative. Leading zeros of the
/// integer part are not kept (`"007.5"` prints as `"7.5"`); every other digit is.
public struct NMEADecimal: Hashable, Sendable {
    /// The digits as an integer, without the decimal point or sign.
    public var magnitude: UInt64
    /// How many of the digits follow the decimal point (0...18).
    public var scale: UInt8
    /// Whether the text began with `-` (kept even for zero, so `"-0.0"` round-trips).
    public var isNegative: Bool

    /// The most digits a decimal holds; a longer number is rejected rather than rounded.
    public static let maximumDigits = 18

    public init(magnitude: UInt64, scale: UInt8, isNegative: Bool = false) {
        self.magnitude = magnitude
        self.scale = scale
        self.isNegative = isNegative
    }

    /// An integer value with no fraction digits.
    public init(_ value: Int) {
        self.init(magnitude: UInt64(value.magnitude), scale: 0, isNegative: value < 0)
    }

    /// Parses `[+-]digits[.digits]`; at least one digit is required.
    ///
    /// Returns `nil` for anything else, including more than ``maximumDigits`` significant digits.
    public init?(parsing bytes: UnsafeRawBufferPointer) {
        guard let (value, _) = NMEADecimal.parse(bytes) else { return nil }
        self = value
    }

    /// ``init(parsing:)``, also giving the number's integer part as read on the way (a
    /// coordinate's `ddmm`), which would otherwise take a division to recover.
    @inline(__always)
    static func parse(_ bytes: UnsafeRawBufferPointer) -> (value: NMEADecimal, integerPart: UInt64)? {
        guard var cursor = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return nil }
        let end = cursor + bytes.count
        let negative = cursor.pointee == UInt8(ascii: "-")
        if negative || cursor.pointee == UInt8(ascii: "+") { cursor += 1 }
        let digitsStart = cursor
        var magnitude: UInt64 = 0
        while cursor < end, case let digit = cursor.pointee &- UInt8(ascii: "0"), digit < 10 {
            magnitude = magnitude &* 10 &+ UInt64(digit)
            cursor += 1
        }
        let integerPart = magnitude
        var digits = cursor - digitsStart
        var scale = 0
        if cursor < end {
            guard cursor.pointee == UInt8(ascii: ".") else { return nil }
            cursor += 1
            let fractionStart = cursor
            while cursor < end, case let digit = cursor.pointee &- UInt8(ascii: "0"), digit < 10 {
                magnitude = magnitude &* 10 &+ UInt64(digit)
                cursor += 1
            }
            guard cursor == end else { return nil }
            scale = cursor - fractionStart
            digits += scale
        }
        guard digits > 0, scale <= NMEADecimal.maximumDigits else { return nil }
        if digits > NMEADecimal.maximumDigits {
            // Leading zeros do not count; anything longer would have overflowed.
            var zeros = 0
            var scan = digitsStart
            while scan < end, scan.pointee == UInt8(ascii: "0") || scan.pointee == UInt8(ascii: ".") {
                if scan.pointee == UInt8(ascii: "0") { zeros += 1 }
                scan += 1
            }
            guard digits - zeros <= NMEADecimal.maximumDigits else { return nil }
        }
        return (NMEADecimal(magnitude: magnitude, scale: UInt8(scale), isNegative: negative), integerPart)
    }

    /// The value as a `Double`: the one place where the exact digits become binary floating point.
    public var doubleValue: Double {
        let value = Double(magnitude) / Double(NMEADecimal.powerOfTen(Int(scale)))
        return isNegative ? -value : value
    }

    /// The integer part, truncated toward zero.
    public var integerPart: Int {
        let whole = Int(truncatingIfNeeded: magnitude / NMEADecimal.powerOfTen(Int(scale)))
        return isNegative ? -whole : whole
    }

    /// The value rescaled to `scale` fraction digits, rounding half away from zero,
    /// or `nil` if it does not fit in an `Int`. `12.345` at scale 2 is 1235.
    public func scaled(to newScale: Int) -> Int? {
        guard newScale >= 0, newScale <= NMEADecimal.maximumDigits else { return nil }
        var value = magnitude
        if newScale >= Int(scale) {
            let (product, overflow) = value.multipliedReportingOverflow(
                by: NMEADecimal.powerOfTen(newScale - Int(scale)))
            if overflow { return nil }
            value = product
        } else {
            let divisor = NMEADecimal.powerOfTen(Int(scale) - newScale)
            value = (value + divisor / 2) / divisor
        }
        guard value <= UInt64(Int.max) else { return nil }
        return isNegative ? -Int(value) : Int(value)
    }

    /// 10 to the power `exponent` (0...18): a table the compiler builds, not a lazy global.
    static func powerOfTen(_ exponent: Int) -> UInt64 {
        switch exponent {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        default: 1_000_000_000_000_000_000
        }
    }
}

extension NMEADecimal: CustomStringConvertible {
    /// The digits as the sentence wrote them (bar leading zeros of the integer part).
    public var description: String {
        var digits = String(magnitude)
        let scale = Int(self.scale)
        if scale > 0 {
            if digits.count <= scale {
                digits = String(repeating: "0", count: scale - digits.count + 1) + digits
            }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -scale))
        }
        return isNegative ? "-" + digits : digits
    }
}
