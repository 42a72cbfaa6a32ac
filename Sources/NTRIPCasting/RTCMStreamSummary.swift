#if canImport(Glibc)
import Glibc
#endif

/// What a base's RTCM 3 stream carries, learned from its frames as they pass: the messages
/// and how often each comes, the constellations observed, the station's position from
/// 1005 or 1006, and the bit rate. A caster's source table says this of a mountpoint.
///
/// It describes the stream as it is now: a message not seen for ``forgetAfter`` is left
/// out (a base reconfigured, noise whose CRC happened to hold), at most ``maximumMessages``
/// are kept, and the bit rate is the last minute's.
public struct RTCMStreamSummary: Sendable {
    /// One message number's frames so far.
    public struct MessageRate: Sendable, Hashable {
        /// Frames of it seen.
        public var count = 0
        /// Seconds between its last two frames, whole (at least 1); `nil` after one frame.
        public var interval: Int?
        var lastSeen: UInt64 = 0
    }

    /// Each message number's frames (0 for an empty message).
    public private(set) var messages: [Int: MessageRate] = [:]
    /// The antenna reference point from the last 1005 or 1006, ECEF metres.
    public private(set) var stationECEF: (x: Double, y: Double, z: Double)?
    /// Bytes of every frame seen.
    public private(set) var bytes = 0
    /// The bytes of the minute so far and of the last whole one, for the bit rate.
    private var minute: (start: UInt64, bytes: Int)?
    private var lastMinuteBytes: Int?
    private var last: UInt64 = 0

    /// Nanoseconds after which a message not seen again is left out.
    public static let forgetAfter: UInt64 = 60_000_000_000
    /// Message numbers kept at most (a base sends about ten).
    public static let maximumMessages = 64

    public init() {}

    /// Takes one whole frame (preamble through CRC) seen at `time` (a monotonic clock's
    /// nanoseconds).
    public mutating func note(_ frame: [UInt8], atNanoseconds time: UInt64) {
        bytes += frame.count
        last = time
        countRate(of: frame.count, at: time)
        let number = frame.count >= 8 ? Int(frame[3]) << 4 | Int(frame[4]) >> 4 : 0
        var rate = messages[number] ?? MessageRate()
        if rate.count > 0, time > rate.lastSeen, time - rate.lastSeen < Self.forgetAfter {
            rate.interval = max(1, Int(((time - rate.lastSeen) + 500_000_000) / 1_000_000_000))
        }
        rate.count += 1
        rate.lastSeen = time
        messages[number] = rate
        if messages.count > Self.maximumMessages { forgetOldMessages() }
        if number == 1005 || number == 1006, let position = Self.stationPosition(in: frame) { stationECEF = position }
    }

    /// The message numbers the stream carries now (seen within ``forgetAfter`` of the last
    /// frame), in order.
    public var currentMessages: [Int] {
        messages.filter { $0.key != 0 && age(of: $0.value) <= Self.forgetAfter }.keys.sorted()
    }

    /// The message numbers with their intervals, as a source table's format details give
    /// them: `1005(10),1077(1),1230(10)`.
    public var formatDetails: String {
        currentMessages.map { number in messages[number]?.interval.map { "\(number)(\($0))" } ?? "\(number)" }
            .joined(separator: ",")
    }

    /// The constellations the observation messages (MSM and the legacy ones) carry, in a
    /// source table's names: `GPS+GLO+GAL+BDS`.
    public var navigationSystems: String {
        let observed = Set(currentMessages.compactMap(Self.constellation(of:)))
        return Self.constellationOrder.filter(observed.contains).joined(separator: "+")
    }

    /// The carrier a source table names: 2 (L1 and L2) when the stream carries MSM or the
    /// dual-frequency legacy observations, 1 for L1 only, 0 when it carries none.
    public var carrier: Int {
        let numbers = currentMessages
        if numbers.contains(where: { (1071...1137).contains($0) || [1003, 1004, 1011, 1012].contains($0) }) { return 2 }
        return numbers.contains(where: { [1001, 1002, 1009, 1010].contains($0) }) ? 1 : 0
    }

    /// Bits a second over the last whole minute, or over the first minute so far; 0 before
    /// a second has passed.
    public var bitRate: Int {
        if let lastMinuteBytes { return lastMinuteBytes * 8 / 60 }
        guard let minute, last > minute.start + 1_000_000_000 else { return 0 }
        return Int(Double(minute.bytes * 8) / (Double(last - minute.start) / 1e9))
    }

    private mutating func countRate(of count: Int, at time: UInt64) {
        guard var current = minute, time >= current.start else {
            minute = (time, count)
            return
        }
        if time - current.start >= 60_000_000_000 {
            // A gap of more than a minute leaves no whole minute to tell.
            lastMinuteBytes = time - current.start < 120_000_000_000 ? current.bytes : nil
            current = (time, 0)
        }
        current.bytes += count
        minute = current
    }

    /// Nanoseconds from `rate`'s last frame to the stream's (0 for a clock that went back).
    private func age(of rate: MessageRate) -> UInt64 {
        last > rate.lastSeen ? last - rate.lastSeen : 0
    }

    /// Leaves out the messages not seen for ``forgetAfter``, then the longest unseen ones
    /// past ``maximumMessages``.
    private mutating func forgetOldMessages() {
        messages = messages.filter { age(of: $0.value) <= Self.forgetAfter }
        while messages.count > Self.maximumMessages, let oldest = messages.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            messages[oldest.key] = nil
        }
    }

    /// The station's latitude and longitude (degrees, WGS 84) from its ECEF position.
    public var stationPosition: (latitude: Double, longitude: Double)? {
        stationECEF.map { Geodetic.latitudeLongitude(x: $0.x, y: $0.y, z: $0.z) }
    }

    private static let constellationOrder = ["GPS", "GLO", "GAL", "BDS", "QZS", "SBAS", "IRN"]

    /// The constellation an observation message belongs to (MSM 1071-1137 by tens; the
    /// legacy GPS and GLONASS observations); `nil` for the others.
    static func constellation(of number: Int) -> String? {
        switch number {
        case 1001...1004: "GPS"
        case 1009...1012: "GLO"
        case 1071...1077: "GPS"
        case 1081...1087: "GLO"
        case 1091...1097: "GAL"
        case 1101...1107: "SBAS"
        case 1111...1117: "QZS"
        case 1121...1127: "BDS"
        case 1131...1137: "IRN"
        default: nil
        }
    }

    /// The ECEF position of a 1005 or 1006 frame, metres: three signed 38-bit fields in
    /// 0.1 mm, after the message number, station ID, ITRF year and four flags (RTCM 10403.3,
    /// 3.5.3). `nil` when the frame is too short.
    static func stationPosition(in frame: [UInt8]) -> (x: Double, y: Double, z: Double)? {
        // 1005's message is 19 bytes: 3 of header before it.
        guard frame.count >= 3 + 19 + 3 else { return nil }
        var bits = BitReader(frame, startingAtByte: 3)
        bits.skip(12 + 12 + 6 + 4)
        let x = bits.signed(38)
        bits.skip(2)
        let y = bits.signed(38)
        bits.skip(2)
        let z = bits.signed(38)
        return (Double(x) * 1e-4, Double(y) * 1e-4, Double(z) * 1e-4)
    }
}

/// Reads big-endian bit fields, as RTCM 3 packs them.
struct BitReader {
    private let bytes: [UInt8]
    private var position: Int

    init(_ bytes: [UInt8], startingAtByte start: Int) {
        self.bytes = bytes
        position = start * 8
    }

    mutating func skip(_ count: Int) { position += count }

    /// The next `count` (at most 63) bits as an unsigned number; bits past the end read 0.
    mutating func unsigned(_ count: Int) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<count {
            let byte = position / 8
            let bit = byte < bytes.count ? (bytes[byte] >> (7 - UInt8(position % 8))) & 1 : 0
            value = value << 1 | UInt64(bit)
            position += 1
        }
        return value
    }

    /// The next `count` bits as a two's-complement number.
    mutating func signed(_ count: Int) -> Int64 {
        let value = unsigned(count)
        let sign: UInt64 = 1 << (count - 1)
        return value & sign == 0 ? Int64(value) : Int64(value) - Int64(sign << 1)
    }
}

/// WGS 84's ellipsoid, for a station's latitude and longitude.
enum Geodetic {
    static let semiMajorAxis = 6_378_137.0
    static let flattening = 1 / 298.257_223_563

    /// Latitude and longitude (degrees) of an ECEF point, by Bowring's method (better than
    /// a millimetre on the Earth's surface after two rounds).
    static func latitudeLongitude(x: Double, y: Double, z: Double) -> (latitude: Double, longitude: Double) {
        let a = semiMajorAxis, f = flattening
        let b = a * (1 - f), e2 = f * (2 - f), ep2 = e2 / (1 - e2)
        let p = (x * x + y * y).squareRoot()
        var theta = atan2Degrees(z * a, p * b) * .pi / 180
        var latitude = 0.0
        for _ in 0..<2 {
            let sinT = sin(theta), cosT = cos(theta)
            latitude = atan2Degrees(z + ep2 * b * sinT * sinT * sinT, p - e2 * a * cosT * cosT * cosT)
            theta = atan2Degrees((1 - f) * sin(latitude * .pi / 180), cos(latitude * .pi / 180)) * .pi / 180
        }
        return (latitude, atan2Degrees(y, x))
    }

    private static func atan2Degrees(_ y: Double, _ x: Double) -> Double { atan2(y, x) * 180 / .pi }
}
