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
    /// Returns `nil` for anything else, including more than ``maximumDigits`` digits.
    public init?(parsing bytes: UnsafeRawBufferPointer) {
        var index = 0
        let count = bytes.count
        var negative = false
        if count > 0, bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        var magnitude: UInt64 = 0
        var digits = 0
        var significantDigits = 0
        var scale = 0
        var seenPoint = false
        while index < count {
            let byte = bytes[index]
            index += 1
            let digit = byte &- UInt8(ascii: "0")
            if digit < 10 {
                digits += 1
                if significantDigits > 0 || digit != 0 { significantDigits += 1 }
                if significantDigits > NMEADecimal.maximumDigits { return nil }
                magnitude = magnitude &* 10 &+ UInt64(digit)
                if seenPoint { scale += 1 }
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else {
                return nil
            }
        }
        guard digits > 0, scale <= NMEADecimal.maximumDigits else { return nil }
        self.init(magnitude: magnitude, scale: UInt8(scale), isNegative: negative)
    }

    /// The value as a `Double`: the one place where the exact digits become binary floating point.
    public var doubleValue: Double {
        let value = Double(magnitude) / NMEADecimal.powersOfTen[Int(scale)]
        return isNegative ? -value : value
    }

    /// The integer part, truncated toward zero.
    public var integerPart: Int {
        let whole = Int(truncatingIfNeeded: magnitude / NMEADecimal.integerPowersOfTen[Int(scale)])
        return isNegative ? -whole : whole
    }

    /// The value rescaled to `scale` fraction digits, rounding half away from zero,
    /// or `nil` if it does not fit in an `Int`. `12.345` at scale 2 is 1235.
    public func scaled(to newScale: Int) -> Int? {
        guard newScale >= 0, newScale <= NMEADecimal.maximumDigits else { return nil }
        var value = magnitude
        if newScale >= Int(scale) {
            let (product, overflow) = value.multipliedReportingOverflow(
                by: NMEADecimal.integerPowersOfTen[newScale - Int(scale)])
            if overflow { return nil }
            value = product
        } else {
            let divisor = NMEADecimal.integerPowersOfTen[Int(scale) - newScale]
            value = (value + divisor / 2) / divisor
        }
        guard value <= UInt64(Int.max) else { return nil }
        return isNegative ? -Int(value) : Int(value)
    }

    static let powersOfTen: [Double] = (0...NMEADecimal.maximumDigits).map { exponent in
        (0..<exponent).reduce(1.0) { product, _ in product * 10 }
    }

    static let integerPowersOfTen: [UInt64] = (0...NMEADecimal.maximumDigits).map { exponent in
        (0..<exponent).reduce(UInt64(1)) { product, _ in product * 10 }
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
