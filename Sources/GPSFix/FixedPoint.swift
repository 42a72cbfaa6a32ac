/// Numbers as every output writes them: fixed-point decimals, `-12.3456`, with a stated
/// number of digits after the point. The one formatter of the project (gpsd JSON, the
/// GGA sent to casters, Traccar's queries, MQTT payloads, the HTTP API), total over
/// every `Double`: whatever it is given, it writes a number, and never traps.
///
/// - A finite value is rounded half away from zero to `decimals` places (0 to 9), as
///   `printf("%.*f")` prints it except at exact binary ties. Past 2⁶³ after scaling it
///   is written exactly, every digit of its integer part, then its decimals.
/// - NaN is written as 0 and ±∞ as ±`Double.greatestFiniteMagnitude` (309 digits): a
///   value that is not a number still gives valid JSON and a valid NMEA field. Fixes
///   never hold such values (``ValueRanges``), and encoders leave them out; this is the
///   last line, not a way to report them.
///
/// Writes straight into memory, with no `String` or Foundation on the common path: an
/// in-range value costs one multiplication, one rounding and its digits.
public enum FixedPoint {
    /// At least as many bytes as ``write(_:decimals:to:)`` writes for `value`: 22 plus the
    /// decimals below a billion (every value of a fix), 312 plus the decimals from there
    /// (and for NaN). One comparison, not the scaling and rounding `write` does.
    @inlinable @inline(always)
    public static func maximumCount(for value: Double, decimals: Int) -> Int {
        value.magnitude < 1e9 ? 22 + decimals : 312 + decimals
    }

    /// Writes `value` with `decimals` digits after the point (none and no point for 0) at
    /// `output`, which has room for ``maximumCount(for:decimals:)`` bytes; returns how
    /// many bytes it wrote.
    @inlinable @inline(always)
    public static func write(_ value: Double, decimals: Int, to output: UnsafeMutablePointer<UInt8>) -> Int {
        guard let digits = scaledMagnitude(value, decimals: decimals) else {
            return writeLarge(value, decimals: decimals, to: output)
        }
        var count = 0
        if value < 0, digits != 0 {
            output[0] = UInt8(ascii: "-")
            count = 1
        }
        // All the digits as one integer, then the last `decimals` of them moved one place
        // right to make room for the point: no division by a power of ten.
        count += writeDigits(digits, minimumDigits: decimals + 1, to: output + count)
        if decimals > 0 {
            for position in (count - decimals..<count).reversed() { output[position + 1] = output[position] }
            output[count - decimals] = UInt8(ascii: ".")
            count += 1
        }
        return count
    }

    /// `value` with `decimals` digits after the point, as a string.
    public static func string(_ value: Double, decimals: Int) -> String {
        String(unsafeUninitializedCapacity: maximumCount(for: value, decimals: decimals)) { buffer in
            write(value, decimals: decimals, to: buffer.baseAddress!)
        }
    }

    /// Writes `value` in decimal, zero-padded to `minimumDigits`, at `output`; returns how
    /// many bytes it wrote (at most 20, or `minimumDigits`).
    @inlinable @inline(always)
    public static func writeDigits(_ value: UInt, minimumDigits: Int, to output: UnsafeMutablePointer<UInt8>) -> Int {
        var digits = 1
        var threshold: UInt = 10
        while digits < 20, value >= threshold {
            digits += 1
            threshold &*= 10
        }
        let count = max(digits, minimumDigits)
        // Two digits per division, from the right; the padding's pairs are "00".
        let pairs: StaticString = """
            00010203040506070809101112131415161718192021222324252627282930313233343536373839\
            40414243444546474849505152535455565758596061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899
            """
        var remaining = value
        var position = count
        while position >= 2 {
            let pair = Int(truncatingIfNeeded: remaining % 100) &* 2
            remaining /= 100
            position -= 2
            output[position] = pairs.utf8Start[pair]
            output[position + 1] = pairs.utf8Start[pair + 1]
        }
        if position == 1 { output[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10) }
        return count
    }

    /// `|value| × 10^decimals`, rounded half away from zero, when it is a finite number
    /// below 9·10¹⁸.
    @inlinable @inline(always)
    static func scaledMagnitude(_ value: Double, decimals: Int) -> UInt? {
        precondition((0...9).contains(decimals), "at most nine decimals")
        let scaled = value.magnitude * powerOfTen(decimals)
        // `scaled < 9e18` is false for NaN and infinity too.
        guard scaled < 9e18 else { return nil }
        // Rounded as `rounded()` does, without its call into the C library: the whole part
        // of a double and the fraction left are both exact. Through `Int`, whose
        // conversions to and from `Double` are one instruction each.
        let whole = Int(scaled)
        return UInt(scaled - Double(whole) >= 0.5 ? whole + 1 : whole)
    }

    /// 10^`exponent`, for 0 to 9: a constant per case, no table to load once first.
    @inlinable @inline(always)
    static func powerOfTen(_ exponent: Int) -> Double {
        switch exponent {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        default: 1e9
        }
    }

    /// NaN, infinities and magnitudes too large to scale: the integer part digit by digit.
    @usableFromInline static func writeLarge(_ value: Double, decimals: Int, to output: UnsafeMutablePointer<UInt8>) -> Int {
        let magnitude = value.isNaN ? 0 : value.isInfinite ? Double.greatestFiniteMagnitude : value.magnitude
        var whole = magnitude.rounded(.towardZero)
        // Exact: the fraction of a double is a double. It is zero from 2⁵² up.
        var fraction = UInt(((magnitude - whole) * powerOfTen(decimals)).rounded())
        if Double(fraction) >= powerOfTen(decimals) {
            whole += 1
            fraction = 0
        }
        var count = 0
        if value < 0, whole != 0 || fraction != 0 {
            output[0] = UInt8(ascii: "-")
            count = 1
        }
        count += writeWhole(whole, to: output + count)
        if decimals > 0 {
            output[count] = UInt8(ascii: ".")
            count += 1
            count += writeDigits(fraction, minimumDigits: decimals, to: output + count)
        }
        return count
    }

    /// The digits of `whole`, a non-negative integer-valued finite double (at most 309).
    private static func writeWhole(_ whole: Double, to output: UnsafeMutablePointer<UInt8>) -> Int {
        if whole < 18_446_744_073_709_551_616.0 { return writeDigits(UInt(whole), minimumDigits: 1, to: output) }
        // whole = significand × 2^shift, exactly; the product in base 10⁹ limbs, least
        // significant first, doubled up to 29 bits at a time (a limb times 2²⁹ fits 64 bits).
        var shift = Int(whole.exponent) - Double.significandBitCount
        let significand = UInt64(whole.significandBitPattern) | (1 << UInt64(Double.significandBitCount))
        let base: UInt64 = 1_000_000_000
        var limbs: [UInt64] = [significand % base, significand / base % base, significand / base / base]
        while shift > 0 {
            let step = min(shift, 29)
            var carry: UInt64 = 0
            for index in limbs.indices {
                let product = limbs[index] << UInt64(step) + carry
                limbs[index] = product % base
                carry = product / base
            }
            while carry > 0 {
                limbs.append(carry % base)
                carry /= base
            }
            shift -= step
        }
        while limbs.count > 1, limbs.last == 0 { limbs.removeLast() }
        var count = writeDigits(UInt(limbs[limbs.count - 1]), minimumDigits: 1, to: output)
        for limb in limbs.dropLast().reversed() { count += writeDigits(UInt(limb), minimumDigits: 9, to: output + count) }
        return count
    }
}
