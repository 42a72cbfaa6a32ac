/// Turns a byte stream, chunked any way at all, into complete, checksum-verified sentences.
///
/// Feed it whatever a device's `read()` returned, one byte or 64 KiB at a time. It finds
/// each `$` or `!`, checks length, characters and checksum, records where every field
/// ends, and hands the sentence to a callback as a borrowed ``NMEASentence``. A sentence
/// that lies wholly inside one chunk is handed out in place, without a copy; only a
/// sentence split across chunks is gathered in a buffer sized once, at init, to the
/// longest sentence allowed. Nothing is allocated per sentence.
///
/// Nothing is fatal: a refused line is counted under a ``FramerRejection`` reason in
/// ``statistics`` and the framer resynchronises at the next `$` or `!`.
///
/// A framer is a stream's state; use one per byte stream, from one thread at a time.
public final class NMEAFramer {
    /// How strict the framer is.
    public struct Configuration: Sendable, Hashable {
        /// The longest sentence accepted, counted as on the wire: start character, body,
        /// checksum and the two bytes of CR LF. NMEA 0183 says 82; real receivers send
        /// up to about 130 (high-precision GGA, long GSA), so tools raise it.
        public var maximumLength: Int
        /// What to do with a sentence that has no `*hh` checksum.
        public var checksumPolicy: ChecksumPolicy

        /// The standard's limits: 82 bytes, checksum required.
        public static let standard = Configuration(maximumLength: 82, checksumPolicy: .required)
        /// What real receivers need, as gpsd accepts them: 256 bytes, checksum optional.
        public static let lenient = Configuration(maximumLength: 256, checksumPolicy: .optional)

        public init(maximumLength: Int = 82, checksumPolicy: ChecksumPolicy = .required) {
            precondition((8...4096).contains(maximumLength), "maximumLength must be 8...4096")
            self.maximumLength = maximumLength
            self.checksumPolicy = checksumPolicy
        }
    }

    /// Whether a sentence without a checksum is accepted.
    public enum ChecksumPolicy: Sendable, Hashable {
        /// Refuse it, counting ``FramerRejection/missingChecksum`` (the default).
        case required
        /// Accept it; some old receivers and some proprietary sentences send none.
        case optional
    }

    private enum State {
        /// Outside a sentence, looking for `$` or `!`.
        case hunting
        /// Inside a sentence, before any `*`.
        case body
        /// After the `*`, reading the two checksum digits.
        case checksum
        /// Skipping the rest of a refused sentence, up to its line end or the next start.
        case discarding
    }

    /// The configuration this framer was made with.
    public let configuration: Configuration
    /// Counts of what the framer has accepted and refused so far.
    public private(set) var statistics = FramerStatistics()

    /// Most bytes of one sentence, start character through checksum (the limit less CR LF).
    private let maximumSentenceBytes: Int
    /// Holds the part of a sentence seen so far when it spans chunks.
    private let carry: UnsafeMutableRawBufferPointer
    /// Where each field of the current sentence ends, as an offset from its start.
    private let fieldEnds: UnsafeMutablePointer<UInt16>

    private var state = State.hunting
    /// Bytes of the current sentence before the current chunk (all of them in `carry`).
    private var length = 0
    private var fieldCount = 0
    private var runningChecksum: UInt8 = 0
    /// Offset of the `*`, the end of the checksummed body.
    private var bodyEnd = 0
    private var checksumDigits = 0
    private var declaredChecksum: UInt8 = 0
    /// Whether the current line, outside any sentence, held bytes other than line endings.
    private var lineHasGarbage = false

    public init(configuration: Configuration = .standard) {
        self.configuration = configuration
        maximumSentenceBytes = configuration.maximumLength - 2
        carry = .allocate(byteCount: maximumSentenceBytes, alignment: 1)
        fieldEnds = .allocate(capacity: maximumSentenceBytes + 1)
    }

    deinit {
        carry.deallocate()
        fieldEnds.deallocate()
    }

    /// Frames `bytes`, calling `onSentence` for each complete sentence, in order.
    ///
    /// A sentence begun here but not ended is kept and completed by the next call.
    /// The sentence passed to `onSentence` is valid only during that call.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ onSentence: (NMEASentence) -> Void) {
        statistics.bytes += bytes.count
        scan(bytes, onSentence)
    }

    /// Ends the stream: a last sentence without a line ending is completed as if it had one,
    /// and a last line of garbage is counted.
    public func finish(_ onSentence: (NMEASentence) -> Void) {
        var lineEnd = ASCII.lineFeed
        withUnsafeBytes(of: &lineEnd) { scan($0, onSentence) }
    }

    /// Forgets any partial sentence, as after a device was closed and reopened.
    public func reset() {
        state = .hunting
        length = 0
        lineHasGarbage = false
    }

    private func scan(_ bytes: UnsafeRawBufferPointer, _ onSentence: (NMEASentence) -> Void) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return }
        let end = bytes.count
        var index = 0
        // Where the current sentence starts in this chunk, or -1 when it began in an earlier
        // chunk and its first `length` bytes are in `carry`.
        var sentenceStart = state == .body || state == .checksum ? -1 : 0
        // The first byte of this chunk not yet accounted for in `length`.
        var segmentStart = 0

        while index < end {
            switch state {
            case .hunting, .discarding:
                while index < end {
                    let byte = base[index]
                    if byte == ASCII.dollar || byte == ASCII.bang { break }
                    if byte == ASCII.lineFeed || byte == ASCII.carriageReturn {
                        if lineHasGarbage { reject(.garbage) }
                        state = .hunting
                    } else if state == .hunting {
                        lineHasGarbage = true
                        statistics.discardedBytes += 1
                    }
                    index += 1
                }
                guard index < end else { break }
                lineHasGarbage = false
                beginSentence()
                sentenceStart = index
                segmentStart = index + 1
                index += 1

            case .body:
                // A byte at `index` is at `index + lineOffset` in the sentence.
                let lineOffset = length - segmentStart
                // The hot loop: everything above ',' and below DEL is ordinary body text.
                // It may run one byte past the longest sentence, to see that it is too long.
                let limit = min(end, maximumSentenceBytes - lineOffset + 1)
                var outcome = BodyOutcome.needMore
                // The loops keep their count in a local: a store through `fieldEnds` could
                // alias the framer's own properties, which would be reloaded at each comma.
                var fields = fieldCount
                // Eight bytes at a time while none is special: XOR them into a wide checksum
                // and record the commas among them from a bit mask.
                var wideChecksum: UInt64 = 0
                while index + 8 <= limit {
                    let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                    guard SWAR.specialBytes(word) == 0 else { break }
                    wideChecksum ^= word
                    var commas = SWAR.commas(word)
                    while commas != 0 {
                        fieldEnds[fields] = UInt16(truncatingIfNeeded: index + lineOffset + commas.trailingZeroBitCount >> 3)
                        fields += 1
                        commas &= commas &- 1
                    }
                    index += 8
                }
                var checksum = runningChecksum ^ SWAR.fold(wideChecksum)
                while index < limit {
                    let byte = base[index]
                    if byte > ASCII.comma, byte < ASCII.delete {
                        checksum ^= byte
                        index += 1
                        continue
                    }
                    if byte == ASCII.comma {
                        checksum ^= byte
                        fieldEnds[fields] = UInt16(truncatingIfNeeded: index + lineOffset)
                        fields += 1
                        index += 1
                    } else if byte == ASCII.star {
                        outcome = .star
                        break
                    } else if byte == ASCII.carriageReturn || byte == ASCII.lineFeed {
                        outcome = .lineEnd
                        break
                    } else if byte == ASCII.dollar || byte == ASCII.bang {
                        outcome = .newSentence
                        break
                    } else if byte >= ASCII.space, byte < ASCII.delete {
                        checksum ^= byte
                        index += 1
                    } else {
                        outcome = .invalid
                        break
                    }
                }
                runningChecksum = checksum
                fieldCount = fields
                switch outcome {
                case .needMore:
                    if index + lineOffset > maximumSentenceBytes {
                        reject(.tooLong)
                        state = .discarding
                    }  // else the chunk ends inside this sentence: it is gathered below
                case .star:
                    bodyEnd = index + lineOffset
                    guard bodyEnd + 3 <= maximumSentenceBytes else {
                        reject(.tooLong)
                        state = .discarding
                        break
                    }
                    fieldEnds[fieldCount] = UInt16(bodyEnd)
                    fieldCount += 1
                    checksumDigits = 0
                    declaredChecksum = 0
                    state = .checksum
                    index += 1
                case .lineEnd:
                    bodyEnd = index + lineOffset
                    fieldEnds[fieldCount] = UInt16(bodyEnd)
                    fieldCount += 1
                    if configuration.checksumPolicy == .optional {
                        complete(base, sentenceStart, segmentStart, index, onSentence)
                    } else {
                        reject(.missingChecksum)
                    }
                    state = .hunting
                    index += 1
                case .newSentence:
                    if index + lineOffset > 1 {
                        reject(.truncated)
                    } else {
                        statistics.discardedBytes += 1  // `$$GPGGA`: a lone start character
                    }
                    state = .hunting
                case .invalid:
                    reject(.invalidCharacter)
                    state = .discarding
                    index += 1
                }

            case .checksum:
                let byte = base[index]
                if byte == ASCII.carriageReturn || byte == ASCII.lineFeed {
                    if checksumDigits == 2 {
                        if declaredChecksum == runningChecksum {
                            complete(base, sentenceStart, segmentStart, index, onSentence)
                        } else {
                            reject(.badChecksum)
                        }
                    } else {
                        reject(.malformedChecksum)
                    }
                    state = .hunting
                    index += 1
                } else if byte == ASCII.dollar || byte == ASCII.bang {
                    reject(.truncated)
                    state = .hunting
                } else if checksumDigits < 2, let digit = ASCII.hexValue(byte) {
                    declaredChecksum = declaredChecksum << 4 | digit
                    checksumDigits += 1
                    index += 1
                } else {
                    reject(.malformedChecksum)
                    state = .discarding
                    index += 1
                }
            }
        }

        // Keep a sentence the chunk ended inside of, to be completed by the next chunk.
        if state == .body || state == .checksum {
            let from = sentenceStart >= 0 ? sentenceStart : segmentStart
            let kept = end - from
            if sentenceStart >= 0 { length = 0 }
            guard length + kept <= maximumSentenceBytes else {
                reject(.tooLong)
                state = .discarding
                return
            }
            UnsafeMutableRawBufferPointer(rebasing: carry[length..<(length + kept)])
                .copyMemory(from: UnsafeRawBufferPointer(start: base + from, count: kept))
            length += kept
        }
    }

    private enum BodyOutcome {
        case needMore, star, lineEnd, newSentence, invalid
    }

    private func beginSentence() {
        state = .body
        length = 1
        fieldCount = 0
        runningChecksum = 0
    }

    /// Hands out the sentence ending at `lineEnd`, in place when it began in this chunk.
    private func complete(
        _ base: UnsafePointer<UInt8>, _ sentenceStart: Int, _ segmentStart: Int, _ lineEnd: Int,
        _ onSentence: (NMEASentence) -> Void
    ) {
        let addressLength = Int(fieldEnds[0]) - 1
        guard addressLength >= 2 else {
            reject(.badAddress)
            return
        }
        let line: UnsafeRawBufferPointer
        if sentenceStart >= 0 {
            line = UnsafeRawBufferPointer(start: base + sentenceStart, count: lineEnd - sentenceStart)
        } else {
            let tail = lineEnd - segmentStart
            UnsafeMutableRawBufferPointer(rebasing: carry[length..<(length + tail)])
                .copyMemory(from: UnsafeRawBufferPointer(start: base + segmentStart, count: tail))
            line = UnsafeRawBufferPointer(rebasing: carry[0..<(length + tail)])
        }
        statistics.sentences += 1
        onSentence(NMEASentence(line: line, fieldEnds: fieldEnds, fieldCount: fieldCount))
    }

    private func reject(_ reason: FramerRejection) {
        statistics[reason] += 1
        lineHasGarbage = false
    }
}

/// The bytes the framer and the field readers look for.
enum ASCII {
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let bang = UInt8(ascii: "!")
    static let dollar = UInt8(ascii: "$")
    static let star = UInt8(ascii: "*")
    static let comma = UInt8(ascii: ",")
    static let delete: UInt8 = 0x7F

    /// The value of a hexadecimal digit in either case, or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

/// Byte-parallel tests on eight bytes in a `UInt64` ("SIMD within a register"). Each
/// mask has the high bit of a byte's lane set exactly when that byte matches; no carry
/// crosses lanes, so the masks are exact, not approximations.
enum SWAR {
    static let lowBits: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Lanes holding a byte the body loop must look at: below `,` or at or above DEL.
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let low = word & lowBits
        let belowComma = ~((low &+ 0x5454_5454_5454_5454) | word) & highBits  // byte < 0x2C
        let deleteOrAbove = ((low &+ 0x0101_0101_0101_0101) | word) & highBits  // byte >= 0x7F
        return belowComma | deleteOrAbove
    }

    /// Lanes holding a comma.
    static func commas(_ word: UInt64) -> UInt64 {
        let difference = word ^ 0x2C2C_2C2C_2C2C_2C2C
        return ~(((difference & lowBits) &+ lowBits) | difference) & highBits
    }

    /// The XOR of the eight bytes.
    static func fold(_ word: UInt64) -> UInt8 {
        var word = word
        word ^= word >> 32
        word ^= word >> 16
        word ^= word >> 8
        return UInt8(truncatingIfNeeded: word)
    }
}
