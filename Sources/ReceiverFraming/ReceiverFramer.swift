import NMEA

/// A frame found in a receiver's byte stream, borrowed: valid only during the callback.
public enum ReceiverFrame {
    case nmea(NMEASentence)
    case ubx(UBXFrame)
    case rtcm3(RTCM3Frame)
    /// A frame of a rule that names no frame type of its own (a receiver driver's).
    case binary(BinaryFrame)
}

/// One checked frame of a framer's rule, borrowed from the framer's memory: valid only
/// during the callback.
public struct BinaryFrame {
    /// The rule's index in the framer's ``ReceiverFramer/rules``.
    public let rule: Int
    /// The whole frame as received, sync bytes through checksum.
    public let bytes: UnsafeRawBufferPointer

    /// A frame of rule `rule` (tests and replay build them; the framer hands them out).
    public init(rule: Int, bytes: UnsafeRawBufferPointer) {
        self.rule = rule
        self.bytes = bytes
    }
}

/// Splits what one receiver port sends, chunked any way at all, into NMEA 0183 sentences
/// and the frames of the binary protocols it has rules for (UBX and RTCM 3 by default),
/// each checked before it is handed out.
///
/// A u-blox receiver interleaves all three on one port (and a base station adds RTCM 3).
/// NMEA is printable ASCII and every rule's frames begin with a byte above it (`B5`,
/// `D3`) or with a control byte text never holds (TSIP's DLE, `10`), so the framer looks
/// for such bytes eight at a time and hands every run of text between binary frames to an
/// ``NMEAFramer``, in place: an NMEA-only stream costs one or two extra tests per eight
/// bytes. Stuffed frames (TSIP's) are gathered until their end (``FrameRule/stuffing``). A byte that begins a rule's frames opens a candidate,
/// gathered in a buffer sized once, at init, to the longest frame any rule accepts;
/// nothing is allocated per frame.
///
/// A candidate is refused early when its rule finds its header impossible or its length
/// is over the rule's limit, else when its rule's checksum fails. Either way the framer
/// goes back to the byte after the refused candidate's first and reads on from there, so
/// a good frame hidden behind a false start, or behind a frame cut short, is still found.
/// Every refusal is counted under its rule in ``binaryStatistics``; the NMEA framer counts
/// its own.
///
/// A framer is a stream's state; use one per byte stream, from one thread at a time. So
/// its properties touched per frame skip the runtime's exclusivity bookkeeping.
public final class ReceiverFramer {
    /// The framer the text between binary frames goes to, with its own statistics.
    public let nmea: NMEAFramer
    /// Counts of the binary frames accepted and refused, by rule.
    @exclusivity(unchecked) public private(set) var binaryStatistics: BinaryFramingStatistics
    /// The rules binary frames are found by, in the order their counts are kept.
    public let rules: [Rule]

    /// For each byte value, 1 + the index of the first rule whose frames begin with it; 0 for none.
    private let ruleStartingWith: UnsafeMutablePointer<UInt8>
    /// For each rule, the index of the next rule whose frames begin with the same byte, if any.
    private let nextSharingSync: [Int?]
    /// The one sync byte below 0x80 (TSIP's DLE), repeated in each byte of a word; 0 when
    /// no rule has one. Eight bytes of text are skipped at once only when none is it.
    private let lowSyncWord: UInt64
    /// In a stuffed frame being gathered: the last byte was an escape not yet paired.
    @exclusivity(unchecked) private var escapePending = false
    /// The index of the rule whose candidate is being gathered, if any.
    @exclusivity(unchecked) private var open: Int?
    /// Bytes of it gathered in `frame`.
    @exclusivity(unchecked) private var collected = 0
    /// Its whole size, once its header has been read; 0 before. For a stuffed frame, the
    /// most it may grow to, once its header has been read.
    @exclusivity(unchecked) private var expected = 0
    private let frame: UnsafeMutableRawBufferPointer
    /// The bytes of a refused frame begun in an earlier chunk, read again.
    private let replay: UnsafeMutableRawBufferPointer
    /// Whether the frames being handed out are read again from an earlier chunk, behind a
    /// frame start that was refused: they were received then, not with the chunk being fed.
    @exclusivity(unchecked) public private(set) var isReplaying = false

    /// A framer for NMEA sentences as `nmea` allows them and the binary frames of `rules`;
    /// rules whose frames begin with the same byte must have headers of one length.
    public init(nmea configuration: NMEAFramer.Configuration = .lenient, rules: [Rule]) {
        precondition(rules.count < 255, "a framer holds fewer than 255 rules")
        nmea = NMEAFramer(configuration: configuration)
        self.rules = rules
        binaryStatistics = BinaryFramingStatistics(rules: rules)
        ruleStartingWith = .allocate(capacity: 256)
        ruleStartingWith.initialize(repeating: 0, count: 256)
        var next = [Int?](repeating: nil, count: rules.count)
        for (index, rule) in rules.enumerated().reversed() {
            let sync = Int(rule.frames.sync)
            if ruleStartingWith[sync] != 0 {
                let sharing = Int(ruleStartingWith[sync]) - 1
                precondition(rules[sharing].headerLength == rule.headerLength,
                             "\(rule.frames.name) and \(rules[sharing].frames.name) begin alike but their headers differ in length")
                next[index] = sharing
            }
            ruleStartingWith[sync] = UInt8(index + 1)
        }
        nextSharingSync = next
        var low: UInt8?
        for (index, rule) in rules.enumerated() {
            precondition(rule.stuffing == nil || (next[index] == nil && !next.contains(index)),
                         "\(rule.frames.name)'s stuffed frames cannot share their first byte with another rule's")
        }
        for rule in rules where rule.frames.sync < 0x80 {
            precondition(rule.frames.sync != 0, "\(rule.frames.name)'s sync byte cannot be 0")
            precondition(low == nil || low == rule.frames.sync, "a framer holds one sync byte at most below 0x80")
            low = rule.frames.sync
        }
        lowSyncWord = low.map { UInt64($0) &* 0x0101_0101_0101_0101 } ?? 0
        let capacity = rules.reduce(0) { max($0, $1.maximumLength, $1.headerLength) }
        frame = .allocate(byteCount: capacity, alignment: 8)
        replay = .allocate(byteCount: capacity, alignment: 8)
    }

    /// A framer for NMEA sentences as `nmea` allows them, UBX payloads up to
    /// `maximumUBXPayload` bytes (the largest message the decoders read, NAV-SAT with 255
    /// satellites, is 3,068; raw measurements reach 8,176), and RTCM 3.
    public convenience init(nmea configuration: NMEAFramer.Configuration = .lenient, maximumUBXPayload: Int = 8192) {
        self.init(nmea: configuration, rules: Self.standardRules(maximumUBXPayload: maximumUBXPayload))
    }

    /// The rules of UBX (payloads up to `maximumUBXPayload` bytes) and RTCM 3, in that order.
    public static func standardRules(maximumUBXPayload: Int = 8192) -> [Rule] {
        precondition((64...65535).contains(maximumUBXPayload), "maximumUBXPayload must be 64...65535")
        return [Rule(UBXFrameRule.self, maximumLength: maximumUBXPayload + UBXFrame.overhead), Rule(RTCM3FrameRule.self)]
    }

    deinit {
        ruleStartingWith.deallocate()
        frame.deallocate()
        replay.deallocate()
    }

    /// Frames `bytes`, calling `onFrame` for each complete frame, in order. A frame begun
    /// here but not ended is kept and completed by the next call.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ onFrame: (ReceiverFrame) -> Void) {
        binaryStatistics.bytes += bytes.count
        scan(bytes, onFrame)
    }

    /// Ends the stream: a binary frame left unfinished is counted as truncated and its
    /// bytes after the first are read again as text, and a last sentence without a line
    /// ending is completed.
    public func finish(_ onFrame: (ReceiverFrame) -> Void) {
        // Each reading again opens at most a shorter frame, so this ends.
        while let open {
            binaryStatistics.count(.truncated, ofRule: open)
            self.open = nil
            rescan(from: 1, onFrame)
        }
        nmea.finish { onFrame(.nmea($0)) }
    }

    /// Forgets any partial sentence or frame, as after a device was closed and reopened.
    public func reset() {
        nmea.reset()
        open = nil
    }

    private func scan(_ bytes: UnsafeRawBufferPointer, _ onFrame: (ReceiverFrame) -> Void) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let end = bytes.count
        var index = 0
        // The first byte not yet handed to the NMEA framer or gathered into a frame.
        var textStart = 0
        // Where the open binary frame began in `bytes`; -1 when it began in an earlier chunk.
        var frameStart = -1
        while index < end {
            if open == nil {
                guard let candidate = nextCandidate(in: base, from: index, to: end) else {
                    index = end
                    break
                }
                if candidate.offset > textStart { feedText(base, textStart..<candidate.offset, onFrame) }
                open = candidate.rule
                collected = 0
                expected = 0
                escapePending = false
                frameStart = candidate.offset
                index = candidate.offset
            }
            guard var open else { continue }
            var rule = rules[open]
            if let stuffing = rule.stuffing {
                switch gatherStuffed(from: base, &index, to: end, stuffing, rule: rule) {
                case .more: break
                case .refused(let refusal):
                    refuse(refusal, &index, &textStart, &frameStart, onFrame)
                    continue
                case .ended:
                    expected = collected
                    deliver(open, &index, &textStart, &frameStart, onFrame)
                    continue
                }
                break
            }
            let target = expected == 0 ? rule.headerLength : expected
            let take = min(target - collected, end - index)
            (frame.baseAddress! + collected).copyMemory(from: base + index, byteCount: take)
            collected += take
            index += take
            guard collected == target else { break }
            if expected == 0 {
                let header = UnsafeRawBufferPointer(rebasing: frame[0..<collected])
                var length = rule.frames.frameLength(header: header)
                // Another rule's frames may begin with the same byte, and this header be its.
                let first = open
                while length == nil, let other = nextSharingSync[open] {
                    open = other
                    self.open = other
                    rule = rules[other]
                    length = rule.frames.frameLength(header: header)
                }
                switch length {
                case nil:
                    // No rule's header: counted under the first rule of the byte, not the last tried.
                    self.open = first
                    refuse(.impossibleHeader, &index, &textStart, &frameStart, onFrame)
                    continue
                case let size? where size > rule.maximumLength:
                    refuse(.tooLong, &index, &textStart, &frameStart, onFrame)
                    continue
                case let size?:
                    expected = size
                    if collected < expected { continue }
                }
            }
            deliver(open, &index, &textStart, &frameStart, onFrame)
        }
        if open == nil, textStart < end { feedText(base, textStart..<end, onFrame) }
    }

    /// Hands out the gathered candidate of rule `open` when its rule says it holds, else
    /// refuses it for its checksum.
    private func deliver(
        _ open: Int, _ index: inout Int, _ textStart: inout Int, _ frameStart: inout Int, _ onFrame: (ReceiverFrame) -> Void
    ) {
        let rule = rules[open].frames
        let whole = UnsafeRawBufferPointer(rebasing: frame[0..<expected])
        if rule.holds(whole) {
            self.open = nil
            textStart = index
            binaryStatistics.countFrame(ofRule: open)
            onFrame(rule.received(whole) ?? .binary(BinaryFrame(rule: open, bytes: whole)))
        } else {
            refuse(.badChecksum, &index, &textStart, &frameStart, onFrame)
        }
    }

    /// How gathering a stuffed frame went.
    private enum Gathering {
        case more, ended
        case refused(BinaryFramingStatistics.Refusal)
    }

    /// Gathers the bytes of a stuffed frame, as received, up to and including its end:
    /// an escape byte not paired with another, then the end byte. The byte after the
    /// opening escape is the frame's id, which can be neither escape nor end. Once the
    /// header is in, the rule says how long such a frame may grow, or that none has that
    /// header: a stray escape byte in text holds back only the text a frame of its header
    /// could be, not the rule's longest.
    private func gatherStuffed(
        from base: UnsafeRawPointer, _ index: inout Int, to end: Int, _ stuffing: (escape: UInt8, end: UInt8),
        rule: Rule
    ) -> Gathering {
        while index < end {
            guard collected < (expected == 0 ? rule.maximumLength : expected) else { return .refused(.tooLong) }
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            frame[collected] = byte
            collected += 1
            index += 1
            if collected == 1 { continue }
            if collected == 2 {
                if byte == stuffing.escape || byte == stuffing.end { return .refused(.impossibleHeader) }
            } else if escapePending {
                escapePending = false
                if byte == stuffing.end { return .ended }
                if byte != stuffing.escape { return .refused(.impossibleHeader) }
            } else if byte == stuffing.escape {
                escapePending = true
            }
            if collected == rule.headerLength {
                let header = UnsafeRawBufferPointer(rebasing: frame[0..<collected])
                guard let longest = rule.frames.frameLength(header: header) else { return .refused(.impossibleHeader) }
                expected = min(longest, rule.maximumLength)
            }
        }
        return .more
    }

    /// Counts the open candidate's refusal and goes back to the byte after its first: in
    /// place when it began in this chunk, else by reading its gathered bytes again before
    /// the rest.
    private func refuse(
        _ refusal: BinaryFramingStatistics.Refusal, _ index: inout Int, _ textStart: inout Int,
        _ frameStart: inout Int, _ onFrame: (ReceiverFrame) -> Void
    ) {
        if let open { binaryStatistics.count(refusal, ofRule: open) }
        open = nil
        if frameStart >= 0 {
            index = frameStart + 1
        } else {
            rescan(from: 1, onFrame)
        }
        textStart = index
        frameStart = -1
    }

    /// Reads the gathered bytes from `offset` on again, as if they came next. Whatever
    /// frame opens among them opens in that reading, so a refusal in it rewinds in place
    /// and this never nests.
    private func rescan(from offset: Int, _ onFrame: (ReceiverFrame) -> Void) {
        let count = collected - offset
        guard count > 0 else { return }
        replay.baseAddress!.copyMemory(from: frame.baseAddress! + offset, byteCount: count)
        isReplaying = true
        defer { isReplaying = false }
        scan(UnsafeRawBufferPointer(rebasing: replay[0..<count]), onFrame)
    }

    private func feedText(_ base: UnsafeRawPointer, _ range: Range<Int>, _ onFrame: (ReceiverFrame) -> Void) {
        nmea.feed(UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)) { onFrame(.nmea($0)) }
    }

    /// Whether any byte of `word` is zero (a word of text with no byte at or above 0x80).
    @inline(__always) private static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0
    }

    /// The offset of the next byte that begins a rule's frames, and that rule's index,
    /// looking at eight bytes at once while none is above ASCII or the low sync byte.
    private func nextCandidate(in base: UnsafeRawPointer, from start: Int, to end: Int) -> (offset: Int, rule: Int)? {
        var index = start
        while index < end {
            if index + 8 <= end {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0, lowSyncWord == 0 || !Self.hasZeroByte(word ^ lowSyncWord) {
                    index += 8
                    continue
                }
            }
            let rule = ruleStartingWith[Int(base.load(fromByteOffset: index, as: UInt8.self))]
            if rule != 0 { return (index, Int(rule) - 1) }
            index += 1
        }
        return nil
    }
}

