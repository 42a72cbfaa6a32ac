/// Reads a sentence's fields in order, each as the type it holds.
///
/// A sentence type is decoded by reading its fields one after another, which makes
/// its definition a few declarative lines (`time = try fields.time()`). An empty field,
/// or one past the end of a short sentence, reads as `nil`: receivers leave fields empty
/// when they have no value and old ones omit trailing fields. A field that is present
/// but malformed throws an ``NMEADecodingError`` naming the sentence and the field.
/// Errors are typed, so reading allocates nothing even when it fails.
public struct FieldCursor {
    /// The sentence being read.
    public let sentence: NMEASentence
    /// The index of the next field to read (1 is the first field after the address).
    public private(set) var index: Int
    /// Where the next field begins in the line: each field starts one byte past the end
    /// of the one before, so reading in order needs one field end per field, not two.
    private var nextStart: Int

    @inline(__always)
    public init(_ sentence: NMEASentence, from index: Int = 1) {
        self.sentence = sentence
        self.index = index
        nextStart = Self.start(of: index, in: sentence)
    }

    /// Whether fields remain to be read.
    public var hasMore: Bool { index < sentence.fieldCount }

    /// How many fields remain to be read.
    public var remaining: Int { max(0, sentence.fieldCount - index) }

    /// The next field's raw bytes (empty when the field is empty or absent).
    @inline(__always)
    public mutating func raw() -> UnsafeRawBufferPointer {
        guard index < sentence.fieldCount else {
            index += 1
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        let start = nextStart
        let end = Int(sentence.fieldEnds[index])
        index += 1
        nextStart = end + 1
        return UnsafeRawBufferPointer(start: sentence.line.baseAddress! + start, count: end - start)
    }

    /// Skips `count` fields.
    @inline(__always)
    public mutating func skip(_ count: Int = 1) {
        index += count
        nextStart = Self.start(of: index, in: sentence)
    }

    @inline(__always)
    static func start(of index: Int, in sentence: NMEASentence) -> Int {
        guard index > 0, index <= sentence.fieldCount else { return 1 }
        return Int(sentence.fieldEnds[index - 1]) + 1
    }

    @inline(__always)
    func failure(_ problem: NMEADecodingError.Problem, at field: Int) -> NMEADecodingError {
        NMEADecodingError(address: sentence.address, field: field, problem: problem)
    }

    /// An exact decimal number (`-12.340`).
    @inline(__always)
    public mutating func decimal() throws(NMEADecodingError) -> NMEADecimal? {
        let field = index
        let bytes = raw()
        guard !bytes.isEmpty else { return nil }
        guard let value = NMEADecimal(parsing: bytes) else { throw failure(.notANumber, at: field) }
        return value
    }

    /// A whole number (`12`, `-3`) of up to nine digits. A number with a fraction is refused, not truncated.
    ///
    /// One to three plain digits (satellite ids, counts: most integer fields) are read
    /// here, inline and without a loop; anything else goes to ``integer(_:field:)``.
    @inline(__always)
    public mutating func integer() throws(NMEADecodingError) -> Int? {
        let field = index
        let bytes = raw()
        guard let digits = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return nil }
        if bytes.count <= 3 {
            let first = Int(digits[0] &- UInt8(ascii: "0"))
            let second = bytes.count >= 2 ? Int(digits[1] &- UInt8(ascii: "0")) : 0
            let third = bytes.count == 3 ? Int(digits[2] &- UInt8(ascii: "0")) : 0
            if first | second | third < 10 {
                switch bytes.count {
                case 1: return first
                case 2: return first &* 10 &+ second
                default: return first &* 100 &+ second &* 10 &+ third
                }
            }
        }
        return try integer(bytes, field: field)
    }

    /// ``integer()`` digit by digit: a sign, more digits, or a number to refuse.
    @inline(never)
    func integer(_ bytes: UnsafeRawBufferPointer, field: Int) throws(NMEADecodingError) -> Int {
        var cursor = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let end = cursor + bytes.count
        let negative = cursor.pointee == UInt8(ascii: "-")
        if negative { cursor += 1 }
        guard cursor < end, end - cursor <= 9 else { throw failure(.notANumber, at: field) }
        var value = 0
        while cursor < end {
            let digit = cursor.pointee &- UInt8(ascii: "0")
            guard digit < 10 else { throw failure(.notANumber, at: field) }
            value = value &* 10 &+ Int(digit)
            cursor += 1
        }
        return negative ? -value : value
    }

    /// A whole number in `range`.
    @inline(__always)
    public mutating func integer(in range: ClosedRange<Int>) throws(NMEADecodingError) -> Int? {
        let field = index
        guard let value = try integer() else { return nil }
        guard range.contains(value) else { throw failure(.outOfRange, at: field) }
        return value
    }

    /// A hexadecimal number (NMEA 4.10 system and signal ids are written in hex).
    @inline(__always)
    public mutating func hexadecimal() throws(NMEADecodingError) -> Int? {
        let field = index
        let bytes = raw()
        guard !bytes.isEmpty else { return nil }
        guard bytes.count <= 4 else { throw failure(.notANumber, at: field) }
        var value = 0
        for byte in bytes {
            guard let digit = ASCII.hexValue(byte) else { throw failure(.notANumber, at: field) }
            value = value << 4 | Int(digit)
        }
        return value
    }

    /// A single character (a status `A`, a mode `D`). A longer field is refused.
    @inline(__always)
    public mutating func character() throws(NMEADecodingError) -> UInt8? {
        let field = index
        let bytes = raw()
        guard !bytes.isEmpty else { return nil }
        guard bytes.count == 1 else { throw failure(.unexpectedCharacter, at: field) }
        return bytes[0]
    }

    /// A latitude: `ddmm.mmmm` then `N` or `S`, two fields. `nil` if either is empty.
    public mutating func latitude() throws(NMEADecodingError) -> NMEACoordinate? {
        try coordinate(maximumDegrees: 90, positive: UInt8(ascii: "N"), negative: UInt8(ascii: "S"))
    }

    /// A longitude: `dddmm.mmmm` then `E` or `W`, two fields. `nil` if either is empty.
    public mutating func longitude() throws(NMEADecodingError) -> NMEACoordinate? {
        try coordinate(maximumDegrees: 180, positive: UInt8(ascii: "E"), negative: UInt8(ascii: "W"))
    }

    mutating func coordinate(maximumDegrees: UInt64, positive: UInt8, negative: UInt8)
        throws(NMEADecodingError) -> NMEACoordinate?
    {
        let field = index
        let bytes = raw()
        var number: (value: NMEADecimal, integerPart: UInt64)?
        if !bytes.isEmpty {
            guard let parsed = NMEADecimal.parse(bytes) else { throw failure(.notANumber, at: field) }
            number = parsed
        }
        let hemisphere = try character()
        guard let number, let hemisphere else { return nil }
        guard hemisphere == positive || hemisphere == negative else {
            throw failure(.unexpectedCharacter, at: field + 1)
        }
        guard !number.value.isNegative else { throw failure(.outOfRange, at: field) }
        // `ddmm.mmmm`: the integer part's last two digits are whole minutes, the rest degrees.
        let (degrees, minutes) = number.integerPart.quotientAndRemainder(dividingBy: 100)
        guard minutes < 60,
            degrees < maximumDegrees
                || (degrees == maximumDegrees && minutes == 0
                    && number.value.magnitude == number.integerPart * NMEADecimal.powerOfTen(Int(number.value.scale)))
        else { throw failure(.outOfRange, at: field) }
        return NMEACoordinate(degreesAndMinutes: number.value, hemisphere: hemisphere)
    }

    /// A UTC time of day, `hhmmss` with an optional fraction of up to nine digits.
    public mutating func time() throws(NMEADecodingError) -> NMEATime? {
        let field = index
        let bytes = raw()
        guard !bytes.isEmpty else { return nil }
        guard bytes.count >= 6, let hour = Self.twoDigits(bytes, 0), let minute = Self.twoDigits(bytes, 2),
            let second = Self.twoDigits(bytes, 4)
        else { throw failure(.notANumber, at: field) }
        guard NMEATime.isTimeOfDay(hour: Int(hour), minute: Int(minute), second: Int(second)) else {
            throw failure(.outOfRange, at: field)
        }
        var nanosecond: UInt32 = 0
        if bytes.count > 6 {
            guard bytes[6] == UInt8(ascii: "."), bytes.count <= 16 else { throw failure(.notANumber, at: field) }
            var unit: UInt32 = 100_000_000
            for offset in 7..<bytes.count {
                let digit = bytes[offset] &- UInt8(ascii: "0")
                guard digit < 10 else { throw failure(.notANumber, at: field) }
                nanosecond += UInt32(digit) * unit
                unit /= 10
            }
        }
        return NMEATime(hour: hour, minute: minute, second: second, nanosecond: nanosecond)
    }

    /// A date as `ddmmyy` (RMC): the year is two digits, without a century.
    public mutating func date() throws(NMEADecodingError) -> NMEADate? {
        let field = index
        let bytes = raw()
        guard !bytes.isEmpty else { return nil }
        guard bytes.count == 6, let day = Self.twoDigits(bytes, 0), let month = Self.twoDigits(bytes, 2),
            let year = Self.twoDigits(bytes, 4)
        else { throw failure(.notANumber, at: field) }
        // The century is not known here: in 2000 to 2099 a year divisible by four is a leap year.
        guard NMEADate.isDay(Int(day), ofMonth: Int(month), year: 2000 + Int(year)) else { throw failure(.outOfRange, at: field) }
        return NMEADate(year: Int(year), month: month, day: day, hasCentury: false)
    }

    static func twoDigits(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt8? {
        let tens = bytes[offset] &- UInt8(ascii: "0")
        let ones = bytes[offset + 1] &- UInt8(ascii: "0")
        guard tens < 10, ones < 10 else { return nil }
        return tens * 10 + ones
    }
}
