import NMEA

/// A frame found in a receiver's byte stream, borrowed: valid only during the callback.
public enum ReceiverFrame {
    case nmea(NMEASentence)
    case ubx(UBXFrame)
    case rtcm3(RTCM3Frame)
}

/// Splits what one receiver port sends, chunked any way at all, into NMEA 0183 sentences,
/// UBX frames and RTCM 3 frames, each checked before it is handed out.
///
/// A u-blox receiver interleaves all three on one port (and a base station adds RTCM 3).
/// NMEA is printable ASCII and both binary protocols begin with a byte above it (`B5`,
/// `D3`), so the framer looks for those bytes eight at a time and hands every run of text
/// between binary frames to an ``NMEAFramer``, in place: an NMEA-only stream costs one
/// extra test per eight bytes. A binary frame is gathered in a buffer sized once, at init,
/// to the longest frame accepted; nothing is allocated per frame.
///
/// A candidate is refused early when its header is impossible (a class u-blox does not
/// define, a length the message cannot have or over the limit, RTCM's reserved bits set
/// or an unknown message number), else when its checksum fails. Either way the framer goes back to the byte
/// after the refused candidate's first and reads on from there, so a good frame hidden
/// behind a false start, or behind a frame cut short, is still found. Every refusal is
/// counted in ``binaryStatistics``; the NMEA framer counts its own.
///
/// A framer is a stream's state; use one per byte stream, from one thread at a time.
public final class ReceiverFramer {
    /// The framer the text between binary frames goes to, with its own statistics.
    public let nmea: NMEAFramer
    /// Counts of the binary frames accepted and refused.
    public private(set) var binaryStatistics = BinaryFramingStatistics()
    /// The largest UBX payload accepted, in bytes.
    public let maximumUBXPayload: Int

    private enum Kind {
        case ubx, rtcm3

        /// Bytes needed before the header can be judged: UBX through its length, RTCM 3
        /// through its message number.
        var headerLength: Int {
            switch self {
            case .ubx: 6
            case .rtcm3: 5
            }
        }
    }

    /// The binary frame being gathered, if any.
    private var kind: Kind?
    /// Bytes of it gathered in `frame`.
    private var collected = 0
    /// Its whole size, once its header has been read; 0 before.
    private var expected = 0
    private let frame: UnsafeMutableRawBufferPointer
    /// The bytes of a refused frame begun in an earlier chunk, read again.
    private let replay: UnsafeMutableRawBufferPointer

    /// A framer for NMEA sentences as `nmea` allows them, UBX payloads up to
    /// `maximumUBXPayload` bytes (the largest message the decoders read, NAV-SAT with 255
    /// satellites, is 3,068; raw measurements reach 8,176), and RTCM 3.
    public init(nmea configuration: NMEAFramer.Configuration = .lenient, maximumUBXPayload: Int = 8192) {
        precondition((64...65535).contains(maximumUBXPayload), "maximumUBXPayload must be 64...65535")
        nmea = NMEAFramer(configuration: configuration)
        self.maximumUBXPayload = maximumUBXPayload
        let capacity = max(maximumUBXPayload + UBXFrame.overhead, RTCM3Frame.maximumMessageLength + RTCM3Frame.overhead)
        frame = .allocate(byteCount: capacity, alignment: 8)
        replay = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
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
        while let kind {
            binaryStatistics.count(.truncated, kind == .ubx)
            self.kind = nil
            rescan(from: 1, onFrame)
        }
        nmea.finish { onFrame(.nmea($0)) }
    }

    /// Forgets any partial sentence or frame, as after a device was closed and reopened.
    public func reset() {
        nmea.reset()
        kind = nil
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
            if kind == nil {
                guard let start = Self.nextCandidate(in: base, from: index, to: end) else {
                    index = end
                    break
                }
                if start > textStart { feedText(base, textStart..<start, onFrame) }
                kind = base.load(fromByteOffset: start, as: UInt8.self) == UBXFrame.sync1 ? .ubx : .rtcm3
                collected = 0
                expected = 0
                frameStart = start
                index = start
            }
            guard let kind else { continue }
            let target = expected == 0 ? kind.headerLength : expected
            let take = min(target - collected, end - index)
            (frame.baseAddress! + collected).copyMemory(from: base + index, byteCount: take)
            collected += take
            index += take
            guard collected == target else { break }
            if expected == 0 {
                switch frameSize(kind) {
                case nil:
                    refuse(kind, .impossibleHeader, &index, &textStart, &frameStart, onFrame)
                    continue
                case let size? where size > frame.count:
                    refuse(kind, .tooLong, &index, &textStart, &frameStart, onFrame)
                    continue
                case let size?:
                    expected = size
                    if collected < expected { continue }
                }
            }
            let whole = UnsafeRawBufferPointer(rebasing: frame[0..<expected])
            if checksumHolds(kind, whole) {
                self.kind = nil
                textStart = index
                switch kind {
                case .ubx:
                    binaryStatistics.ubxFrames += 1
                    onFrame(.ubx(UBXFrame(bytes: whole)))
                case .rtcm3:
                    binaryStatistics.rtcm3Frames += 1
                    onFrame(.rtcm3(RTCM3Frame(bytes: whole)))
                }
            } else {
                refuse(kind, .badChecksum, &index, &textStart, &frameStart, onFrame)
            }
        }
        if kind == nil, textStart < end { feedText(base, textStart..<end, onFrame) }
    }

    /// Counts a refused candidate and goes back to the byte after its first: in place when
    /// it began in this chunk, else by reading its gathered bytes again before the rest.
    private func refuse(
        _ kind: Kind, _ refusal: BinaryFramingStatistics.Refusal, _ index: inout Int, _ textStart: inout Int,
        _ frameStart: inout Int, _ onFrame: (ReceiverFrame) -> Void
    ) {
        binaryStatistics.count(refusal, kind == .ubx)
        self.kind = nil
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
        scan(UnsafeRawBufferPointer(rebasing: replay[0..<count]), onFrame)
    }

    private func feedText(_ base: UnsafeRawPointer, _ range: Range<Int>, _ onFrame: (ReceiverFrame) -> Void) {
        nmea.feed(UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)) { onFrame(.nmea($0)) }
    }

    /// The whole size of the frame whose header is gathered, or `nil` when no frame has
    /// such a header.
    private func frameSize(_ kind: Kind) -> Int? {
        switch kind {
        case .ubx:
            guard frame[1] == UBXFrame.sync2, frame[2] < 0x40, Self.ubxClasses & (1 << UInt64(frame[2])) != 0 else {
                return nil
            }
            let length = Int(frame[4]) | Int(frame[5]) << 8
            guard UBXFrame.lengthIsPlausible(length, for: UInt16(frame[2]) << 8 | UInt16(frame[3])) else { return nil }
            return length <= maximumUBXPayload ? length + UBXFrame.overhead : Int.max
        case .rtcm3:
            guard frame[1] & 0xFC == 0 else { return nil }
            let length = Int(frame[1] & 0x03) << 8 | Int(frame[2])
            let message = Int(frame[3]) << 4 | Int(frame[4]) >> 4
            guard length >= 2, (1001...1300).contains(message) || (4001...4095).contains(message) else { return nil }
            return length + RTCM3Frame.overhead
        }
    }

    private func checksumHolds(_ kind: Kind, _ whole: UnsafeRawBufferPointer) -> Bool {
        switch kind {
        case .ubx:
            let (a, b) = UBXFrame.checksum(of: UnsafeRawBufferPointer(rebasing: whole[2..<(whole.count - 2)]))
            return a == whole[whole.count - 2] && b == whole[whole.count - 1]
        case .rtcm3:
            let body = UnsafeRawBufferPointer(rebasing: whole[0..<(whole.count - 3)])
            let sent = Int(whole[whole.count - 3]) << 16 | Int(whole[whole.count - 2]) << 8 | Int(whole[whole.count - 1])
            return CRC24Q.checksum(body) == sent
        }
    }

    /// The UBX classes u-blox defines, as a bit set over class numbers below 0x40: NAV,
    /// RXM, TRK, INF, ACK, CFG, UPD, MON, AID, TIM, ESF, MGA, LOG, SEC, HNR, NAV2.
    private static let ubxClasses: UInt64 = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x09, 0x0A, 0x0B, 0x0D, 0x10, 0x13, 0x21, 0x27, 0x28, 0x29,
    ].reduce(0) { $0 | 1 << UInt64($1) }

    /// The offset of the next byte that may begin a binary frame (`B5` or `D3`), looking
    /// at eight bytes at once while none is above ASCII.
    private static func nextCandidate(in base: UnsafeRawPointer, from start: Int, to end: Int) -> Int? {
        var index = start
        while index < end {
            if index + 8 <= end, base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index += 8
                continue
            }
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte == UBXFrame.sync1 || byte == RTCM3Frame.preamble { return index }
            index += 1
        }
        return nil
    }
}

/// What a ``ReceiverFramer`` accepted and refused of the binary protocols.
public struct BinaryFramingStatistics: Hashable, Sendable {
    /// Why a binary candidate was refused.
    public enum Refusal: CaseIterable, Sendable {
        /// A header no frame has: UBX's second sync byte or class wrong, RTCM 3's reserved
        /// bits set or an unknown message number (a stray `B5` or `D3`, usually).
        case impossibleHeader
        /// A length over the framer's limit.
        case tooLong
        /// A checksum (UBX's Fletcher-8, RTCM 3's CRC-24Q) that does not hold.
        case badChecksum
        /// The stream ended inside the frame.
        case truncated
    }

    /// Bytes fed to the framer, of every protocol.
    public var bytes = 0
    public var ubxFrames = 0
    public var rtcm3Frames = 0
    public var ubxImpossibleHeaders = 0, ubxTooLong = 0, ubxBadChecksums = 0, ubxTruncated = 0
    public var rtcm3ImpossibleHeaders = 0, rtcm3BadChecksums = 0, rtcm3Truncated = 0

    public init() {}

    /// UBX candidates refused, for any reason.
    public var ubxRefused: Int { ubxImpossibleHeaders + ubxTooLong + ubxBadChecksums + ubxTruncated }
    /// RTCM 3 candidates refused, for any reason.
    public var rtcm3Refused: Int { rtcm3ImpossibleHeaders + rtcm3BadChecksums + rtcm3Truncated }

    mutating func count(_ refusal: Refusal, _ ubx: Bool) {
        switch (refusal, ubx) {
        case (.impossibleHeader, true): ubxImpossibleHeaders += 1
        case (.tooLong, true): ubxTooLong += 1
        case (.badChecksum, true): ubxBadChecksums += 1
        case (.truncated, true): ubxTruncated += 1
        case (.impossibleHeader, false), (.tooLong, false): rtcm3ImpossibleHeaders += 1
        case (.badChecksum, false): rtcm3BadChecksums += 1
        case (.truncated, false): rtcm3Truncated += 1
        }
    }

    /// Adds another framer's counts to these, for totals across devices or files.
    public mutating func add(_ other: BinaryFramingStatistics) {
        bytes += other.bytes
        ubxFrames += other.ubxFrames
        rtcm3Frames += other.rtcm3Frames
        ubxImpossibleHeaders += other.ubxImpossibleHeaders
        ubxTooLong += other.ubxTooLong
        ubxBadChecksums += other.ubxBadChecksums
        ubxTruncated += other.ubxTruncated
        rtcm3ImpossibleHeaders += other.rtcm3ImpossibleHeaders
        rtcm3BadChecksums += other.rtcm3BadChecksums
        rtcm3Truncated += other.rtcm3Truncated
    }
}
