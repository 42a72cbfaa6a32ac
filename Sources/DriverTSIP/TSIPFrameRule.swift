import ReceiverFraming

/// How Trimble TSIP packets are found: `10 id data… 10 03`, every `10` within id and data
/// sent twice. TSIP has no length and no checksum, so a packet holds when its id is one
/// the driver reads and its data (unstuffed) is as long as that id's packets are. TSIPv1
/// (RES 720) sends `id sub lenHi lenLo mode data… ck` in the same envelope: the length
/// counts mode, data and checksum, and the checksum is the XOR of id through the last data
/// byte; both are checked.
public enum TSIPFrameRule: FrameRule {
    public static let name = "TSIP"
    /// DLE.
    public static let sync: UInt8 = 0x10
    public static let headerLength = 2
    /// The longest packet read (0x8F-AC, 0x93 and 0x1C reports are shorter than 128 bytes
    /// unstuffed), every byte stuffed, with the envelope.
    public static let maximumLength = 2 * 256 + 4
    public static var stuffing: (escape: UInt8, end: UInt8)? { (0x10, 0x03) }

    /// The most a packet of the header's id can be on the wire: its id and longest data,
    /// every data byte stuffed, in the envelope; `nil` for an id the driver does not read
    /// (a stray DLE in NMEA text, usually, which holds back no more text than that).
    public static func frameLength(header: UnsafeRawBufferPointer) -> Int? {
        let id = header[1]
        if isVersion1(id) { return maximumLength }
        return longestData(id: id).map { 2 + 2 * $0 + 2 }
    }

    public static func holds(_ frame: UnsafeRawBufferPointer) -> Bool {
        guard frame.count >= 4 else { return false }
        var body = Body(frame)
        guard let id = body.next() else { return false }
        if isVersion1(id) { return holdsVersion1(id: id, body) }
        var count = 0
        var first: UInt8 = 0
        var seventeenth: UInt8 = 0
        while let byte = body.next() {
            if count == 0 { first = byte }
            if count == 17 { seventeenth = byte }
            count += 1
        }
        return expectedLength(id: id, data: count, first: first, seventeenth: seventeenth)
    }

    /// Whether `id` is a TSIPv1 packet's (RES 720 and later).
    public static func isVersion1(_ id: UInt8) -> Bool { (0x90...0x93).contains(id) || (0xA0...0xA3).contains(id) }

    /// Whether a classic packet of `id` with `data` bytes after the id is one the driver
    /// reads: `first` is the data's first byte (the sub-code of 0x8F and 0x1C packets, the
    /// count in 0x6D's high nibble) and `seventeenth` its byte 17 (0x6C's count).
    static func expectedLength(id: UInt8, data count: Int, first: UInt8, seventeenth: UInt8) -> Bool {
        switch id {
        case 0x1C: return (first == 0x81 || first == 0x83) && count >= 10
        case 0x47: return count >= 1 && (count - 1) % 5 == 0
        case 0x6C: return count >= 18 && count == 18 + Int(seventeenth)
        case 0x6D: return count == 17 + Int(first >> 4)
        case 0x8F:
            switch first {
            case 0x20: return count == 56 || count == 64
            case 0xAB: return count == 17
            case 0xAC: return count == 68
            case 0x42: return count == 19
            case 0xA5: return count == 5
            case 0xA9: return count == 15
            default: return false
            }
        // Every other id read has one length, its longest.
        default: return count == longestData(id: id)
        }
    }

    /// The most data bytes (unstuffed, after the id) a classic packet of `id` that the
    /// driver reads carries, the one length of most; `nil` for an id it does not read.
    static func longestData(id: UInt8) -> Int? {
        switch id {
        case 0x1C, 0x47, 0x6C: 255  // lists and texts: bounded by the rule's longest
        case 0x41, 0x45: 10
        case 0x46: 2
        case 0x4A, 0x56: 20
        case 0x4B: 3
        case 0x54: 12
        case 0x55: 4
        case 0x5C: 24
        case 0x5D: 26
        case 0x6D: 17 + 15
        case 0x82: 1
        case 0x84: 36
        case 0x8F: 68  // 0x8F-AC, the longest sub-packet read
        default: nil
        }
    }

    /// The length field counts mode, data and checksum; the checksum is the XOR of every
    /// byte before it, so the XOR of the whole body, checksum included, is zero.
    private static func holdsVersion1(id: UInt8, _ body: Body) -> Bool {
        var body = body
        var count = 1
        var xor = id
        var length = 0
        while let byte = body.next() {
            count += 1
            if count == 3 || count == 4 { length = length << 8 | Int(byte) }
            xor ^= byte
        }
        return count >= 6 && count == 4 + length && xor == 0
    }

    /// The unstuffed bytes of a frame as received (DLE, id, data with each DLE doubled,
    /// DLE ETX), one at a time: id first.
    struct Body {
        let frame: UnsafeRawBufferPointer
        private var index = 1

        init(_ frame: UnsafeRawBufferPointer) { self.frame = frame }

        mutating func next() -> UInt8? {
            let end = frame.count - 2
            guard index < end else { return nil }
            let byte = frame[index]
            index += byte == 0x10 && index + 1 < end && frame[index + 1] == 0x10 ? 2 : 1
            return byte
        }
    }

    /// A whole classic packet of `id` with `data`, stuffed: for tests and what is sent to a
    /// receiver.
    public static func frame(id: UInt8, data: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [0x10]
        for byte in [id] + data {
            bytes.append(byte)
            if byte == 0x10 { bytes.append(0x10) }
        }
        return bytes + [0x10, 0x03]
    }

    /// A whole TSIPv1 packet of `id`/`sub` in mode `mode` with `data`, its length and
    /// checksum computed, stuffed.
    public static func version1Frame(id: UInt8, sub: UInt8, mode: UInt8 = 2, data: [UInt8]) -> [UInt8] {
        let length = data.count + 2
        var body: [UInt8] = [sub, UInt8(length >> 8), UInt8(length & 0xFF), mode] + data
        body.append(body.reduce(id, ^))
        return frame(id: id, data: body)
    }
}
