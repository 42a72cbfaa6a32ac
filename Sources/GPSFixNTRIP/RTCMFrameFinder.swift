import ReceiverFraming

/// One RTCM 3 frame, whole: the preamble `0xD3`, six reserved bits and a 10-bit length,
/// the message, and its CRC-24Q.
public struct RTCMFrame: Hashable, Sendable {
    public let bytes: [UInt8]

    /// The message number (1004, 1077, ...): the message's first 12 bits; 0 for an empty message.
    public var messageType: Int {
        guard bytes.count >= 3 + 2 + 3 else { return 0 }
        return Int(bytes[3]) << 4 | Int(bytes[4]) >> 4
    }
}

/// Finds RTCM 3 frames in a byte stream, however it is cut into reads.
///
/// A frame is kept only when its CRC-24Q holds. Bytes outside any frame (a caster's
/// banner, noise) and candidate frames whose CRC fails are dropped and counted: a
/// receiver is given whole, intact frames or nothing. After a failed candidate the
/// search resumes one byte after its preamble, so a real frame hidden behind a false
/// `0xD3` is still found.
public struct RTCMFrameFinder: Sendable {
    /// What the finder kept and dropped.
    public struct Statistics: Hashable, Sendable {
        /// Intact frames found.
        public var frames = 0
        /// Candidate frames dropped because their CRC failed.
        public var badCRC = 0
        /// Bytes dropped outside any frame.
        public var bytesSkipped = 0
    }

    public private(set) var statistics = Statistics()
    /// Bytes not yet resolved into frames or skipped; at most one frame's worth is kept
    /// past `start` once a preamble is seen.
    private var pending: [UInt8] = []
    private var start = 0

    /// A frame's largest size: header, 1023 message bytes, CRC.
    public static let maximumFrameSize = 3 + 1023 + 3

    public init() {}

    /// Adds `bytes` and hands each frame they complete to `emit`, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>, _ emit: (RTCMFrame) -> Void) {
        pending.append(contentsOf: bytes)
        while let frame = nextFrame() { emit(frame) }
        // Compacted once the consumed prefix is large: appends stay amortised O(1).
        if start > 4096 || start == pending.count {
            pending.removeFirst(start)
            start = 0
        }
    }

    private mutating func nextFrame() -> RTCMFrame? {
        while start < pending.count {
            guard pending[start] == 0xD3 else {
                start += 1
                statistics.bytesSkipped += 1
                continue
            }
            guard pending.count - start >= 3 else { return nil }
            // The six bits after the preamble are reserved, always zero.
            guard pending[start + 1] & 0xFC == 0 else {
                start += 1
                statistics.bytesSkipped += 1
                continue
            }
            let length = Int(pending[start + 1] & 0x03) << 8 | Int(pending[start + 2])
            let size = 3 + length + 3
            guard pending.count - start >= size else { return nil }
            let body = start..<(start + 3 + length)
            let sent = Int(pending[body.upperBound]) << 16 | Int(pending[body.upperBound + 1]) << 8 | Int(pending[body.upperBound + 2])
            if CRC24Q.checksum(pending[body]) == sent {
                let frame = RTCMFrame(bytes: Array(pending[start..<(start + size)]))
                start += size
                statistics.frames += 1
                return frame
            }
            statistics.badCRC += 1
            start += 1
            statistics.bytesSkipped += 1
        }
        return nil
    }
}
