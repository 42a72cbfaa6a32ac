/// One framed, checksum-verified sentence, borrowed from the framer's or the caller's memory.
///
/// A sentence is a view, not a copy: its pointers are valid only while the framer's
/// callback runs. Decode it, or copy ``line`` out, before returning. Nothing here
/// allocates.
///
/// Fields are numbered as on the wire: field 0 is the address (`GPGGA`), field 1 the
/// first data field. The checksum is not a field.
public struct NMEASentence {
    /// The whole sentence as received, from its `$` or `!` through the checksum digits,
    /// without the line ending. This is what a raw (`nmea`) watcher is sent.
    public let line: UnsafeRawBufferPointer
    /// The number of fields, the address included.
    public let fieldCount: Int
    /// The address field, packed for cheap comparison: read once, when the sentence is
    /// framed, since the decoder's table, the sentence types (their talker) and the
    /// assembler (its counts and cycle ends) all need it.
    public let address: SentenceAddress
    /// The offset in ``line`` just past each field (the comma, `*` or end that ends it).
    @usableFromInline let fieldEnds: UnsafePointer<UInt16>

    init(line: UnsafeRawBufferPointer, fieldEnds: UnsafePointer<UInt16>, fieldCount: Int) {
        self.line = line
        self.fieldEnds = fieldEnds
        self.fieldCount = fieldCount
        address = Self.address(in: line, endingAt: Int(fieldEnds[0]))
    }

    /// The bytes of field `index`, empty when the field is empty or past the last field.
    @inlinable
    public func field(_ index: Int) -> UnsafeRawBufferPointer {
        guard index >= 0, index < fieldCount else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let start = index == 0 ? 1 : Int(fieldEnds[index - 1]) + 1
        return UnsafeRawBufferPointer(start: line.baseAddress! + start, count: Int(fieldEnds[index]) - start)
    }

    /// Whether field `index` is exactly `text`: a proprietary sentence's subtype
    /// (`PUBX,00`, `PASHR,POS`).
    @inlinable
    public func field(_ index: Int, is text: StaticString) -> Bool {
        let bytes = field(index)
        return bytes.count == text.utf8CodeUnitCount && text.withUTF8Buffer { bytes.elementsEqual($0) }
    }

    /// `$` for ordinary sentences, `!` for encapsulated ones (AIS).
    public var startCharacter: UInt8 { line[0] }

    /// The address, the bytes from after the start character to `end`. Read as one
    /// eight-byte word when the line is long enough to hold it past the start character,
    /// which every decodable sentence is (`$GPGGA*hh` is nine bytes), and the bytes past
    /// the address masked off.
    private static func address(in line: UnsafeRawBufferPointer, endingAt end: Int) -> SentenceAddress {
        let count = min(end - 1, 8)
        guard line.count >= 9 else { return SentenceAddress(UnsafeRawBufferPointer(rebasing: line[1..<end])) }
        let word = UInt64(bigEndian: line.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
        let mask: UInt64 = count == 0 ? 0 : ~0 << (64 - 8 * UInt64(count))
        return SentenceAddress(packed: word & mask, count: count)
    }

    /// The sentence as text, for logs and tests. Allocates; never use it on the hot path.
    public var text: String { String(decoding: line, as: UTF8.self) }
}

/// Up to eight ASCII characters packed into one integer: a sentence address, a datum
/// code, a GNS mode string. Comparing two is one integer compare, and storing one
/// allocates nothing.
public struct PackedASCII: Hashable, Sendable, CustomStringConvertible {
    /// The characters, first in the most significant byte, zero-padded.
    public let packed: UInt64
    /// How many characters there are (0...8).
    public let count: Int

    /// Packs the first eight bytes of `bytes`.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) {
        var packed: UInt64 = 0
        let count = min(bytes.count, 8)
        for index in 0..<count { packed |= UInt64(bytes[index]) << (56 - 8 * index) }
        self.packed = packed
        self.count = count
    }

    /// Characters already packed, first in the most significant byte.
    @inlinable
    public init(packed: UInt64, count: Int) {
        self.packed = packed
        self.count = count
    }

    /// Packs the first eight characters of `text`, for tables and tests.
    public init(_ text: String) {
        var text = text
        self = text.withUTF8 { PackedASCII(UnsafeRawBufferPointer($0)) }
    }

    /// The character at `index` (0-based); 0 past the end.
    public subscript(index: Int) -> UInt8 {
        index < count ? UInt8(truncatingIfNeeded: packed >> (56 - 8 * index)) : 0
    }

    public var description: String {
        String(decoding: (0..<count).map { self[$0] }, as: UTF8.self)
    }
}

/// A sentence's address field (`GPGGA`, `GNRMC`, `PGRME`, `PUBX`): a talker and a
/// formatter, or a proprietary maker's code, packed so that telling sentences apart is
/// an integer compare.
public struct SentenceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address's characters.
    public let characters: PackedASCII

    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) { characters = PackedASCII(bytes) }

    /// An address already packed (see ``PackedASCII/packed``).
    @inlinable
    public init(packed: UInt64, count: Int) { characters = PackedASCII(packed: packed, count: count) }

    /// An address from text, for tables and tests.
    public init(_ text: String) { characters = PackedASCII(text) }

    /// How many characters the address has.
    public var count: Int { characters.count }

    /// Whether this is a proprietary address (`P` followed by a maker's code), which has no
    /// talker. Quectel's `PQGSA` and `PQGSV` are not: they are standard GSA and GSV whose
    /// talker is `PQ` (the EC21/EC25 modems report QZSS and BeiDou satellites in them),
    /// and gpsd reads them so.
    @inlinable
    public var isProprietary: Bool {
        guard characters[0] == UInt8(ascii: "P") else { return false }
        guard count == 5, characters[1] == UInt8(ascii: "Q"), characters[2] == UInt8(ascii: "G"),
            characters[3] == UInt8(ascii: "S")
        else { return true }
        return characters[4] != UInt8(ascii: "A") && characters[4] != UInt8(ascii: "V")
    }

    /// The two-letter talker of a standard sentence (`GP` in `GPGGA`); `nil` for proprietary ones.
    public var talker: Talker? {
        guard !isProprietary, count >= 2 else { return nil }
        return Talker(UInt16(characters[0]) << 8 | UInt16(characters[1]))
    }

    /// The three-letter sentence formatter of a standard sentence (`GGA` in `GPGGA`);
    /// `nil` for proprietary or short addresses.
    @inlinable
    public var formatter: SentenceFormatter? {
        guard !isProprietary, count == 5 else { return nil }
        return SentenceFormatter(rawValue: UInt32(truncatingIfNeeded: characters.packed >> 24) & 0xFF_FFFF)
    }

    public var description: String { characters.description }
}

/// The three-letter type of a standard sentence (`GGA`, `RMC`, ...), packed into an integer.
public struct SentenceFormatter: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(stringLiteral text: String) {
        let bytes = Array(text.utf8)
        precondition(bytes.count == 3, "a sentence formatter has three letters")
        rawValue = UInt32(bytes[0]) << 16 | UInt32(bytes[1]) << 8 | UInt32(bytes[2])
    }

    public var description: String {
        String(decoding: [16, 8, 0].map { UInt8(truncatingIfNeeded: rawValue >> $0) }, as: UTF8.self)
    }
}

extension SentenceFormatter {
    // The formatters GPSFix decodes, as constants (computed, so no lazy global is touched).
    public static var gga: SentenceFormatter { SentenceFormatter(rawValue: 0x474741) }  // GGA
    public static var rmc: SentenceFormatter { SentenceFormatter(rawValue: 0x524D43) }  // RMC
    public static var gsa: SentenceFormatter { SentenceFormatter(rawValue: 0x475341) }  // GSA
    public static var gsv: SentenceFormatter { SentenceFormatter(rawValue: 0x475356) }  // GSV
    public static var vtg: SentenceFormatter { SentenceFormatter(rawValue: 0x565447) }  // VTG
    public static var gll: SentenceFormatter { SentenceFormatter(rawValue: 0x474C4C) }  // GLL
    public static var zda: SentenceFormatter { SentenceFormatter(rawValue: 0x5A4441) }  // ZDA
    public static var gst: SentenceFormatter { SentenceFormatter(rawValue: 0x475354) }  // GST
    public static var gns: SentenceFormatter { SentenceFormatter(rawValue: 0x474E53) }  // GNS
    public static var gbs: SentenceFormatter { SentenceFormatter(rawValue: 0x474253) }  // GBS
    public static var dtm: SentenceFormatter { SentenceFormatter(rawValue: 0x44544D) }  // DTM
    public static var txt: SentenceFormatter { SentenceFormatter(rawValue: 0x545854) }  // TXT
    public static var hdt: SentenceFormatter { SentenceFormatter(rawValue: 0x484454) }  // HDT
    public static var ths: SentenceFormatter { SentenceFormatter(rawValue: 0x544853) }  // THS
}
