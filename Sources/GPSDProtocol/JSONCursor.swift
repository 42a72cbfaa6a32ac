import GPSFix

/// Writes a run of JSON (literals, whole numbers, fixed-point numbers) one after
/// another into room already made for all of it, with no capacity check per value: a
/// report's part of fixed shape (a SKY's satellite) costs one check, made by
/// ``JSONWriter/beginRun(maximumCount:)`` with the run's largest size.
struct JSONCursor {
    /// Where the next byte goes.
    private(set) var position: UnsafeMutablePointer<UInt8>

    init(_ position: UnsafeMutablePointer<UInt8>) {
        self.position = position
    }

    /// The most a ``write(_:)-(Int)`` writes: a sign and 20 digits.
    static let integerCount = 21

    /// Writes `text` as it is: a key with its punctuation (`,"el":`).
    @inline(always)
    mutating func write(_ text: StaticString) {
        // A raw copy of a length known here: a few moves, not a call.
        UnsafeMutableRawPointer(position).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        position += text.utf8CodeUnitCount
    }

    /// Writes `value` in decimal.
    @inline(always)
    mutating func write(_ value: Int) {
        if value < 0 {
            position.pointee = UInt8(ascii: "-")
            position += 1
        }
        position += FixedPoint.writeDigits(value.magnitude, minimumDigits: 1, to: position)
    }

    /// Writes `value` with `decimals` places, in at most ``FixedPoint/maximumCount(for:decimals:)`` bytes.
    @inline(always)
    mutating func write(_ value: Double, decimals: Int) {
        position += FixedPoint.write(value, decimals: decimals, to: position)
    }

    /// Writes `key` and `value`, when there is a value and it is finite.
    @inline(always)
    mutating func write(_ key: StaticString, _ value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        write(key)
        write(value, decimals: decimals)
    }

    /// Writes `key` and `value` with one decimal, when there is a value and it is finite.
    /// A whole number from 0 to 999 (an elevation, an azimuth, a signal, as receivers
    /// give them) is written as its digits and `.0`, the bytes ``FixedPoint`` writes for
    /// it, without scaling and rounding.
    @inline(always)
    mutating func write(_ key: StaticString, tenths value: Double?) {
        guard let value, value >= 0, value < 1000, Double(Int(value)) == value else {
            write(key, value, decimals: 1)
            return
        }
        write(key)
        position += FixedPoint.writeDigits(UInt(value), minimumDigits: 1, to: position)
        write(".0")
    }

    /// Writes `key` and `value`, when there is a value.
    @inline(always)
    mutating func write(_ key: StaticString, _ value: Int?) {
        guard let value else { return }
        write(key)
        write(value)
    }

    /// Writes `true` or `false`.
    @inline(always)
    mutating func write(_ value: Bool) {
        // Each literal written on its own: its length is then a constant, copied with moves.
        if value { write("true") } else { write("false") }
    }
}
