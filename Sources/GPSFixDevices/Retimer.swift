import GPSFix
import NMEA
import ReceiverFraming
import UBX

/// Rewrites the time and date fields of recorded sentences, so a capture replayed now
/// looks like a receiver running now: times that keep increasing across a loop, dates of
/// today. The checksum is recomputed; every other byte stays as recorded.
///
/// The fields rewritten, by sentence (any talker): GGA, GLL, GNS, GST, GBS and RMC time
/// (and RMC's date), ZDA time and date, u-blox PUBX,00 time. A time keeps the number of
/// decimals it had. Lines that are not checksummed sentences are left as they are. UBX
/// frames are rewritten too (``retime(ubxFrame:to:)``).
public enum Retimer {
    /// `line` (one sentence with its line ending) stamped with `time`.
    public static func retime(_ line: ArraySlice<UInt8>, to time: GPSTime) -> [UInt8] {
        guard line.first == UInt8(ascii: "$"), let star = line.lastIndex(of: UInt8(ascii: "*")),
            line.index(star, offsetBy: 3, limitedBy: line.endIndex) != nil
        else { return Array(line) }
        var fields = line[line.index(after: line.startIndex)..<star]
            .split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map(Array.init)
        guard let address = fields.first, address.count >= 4 else { return Array(line) }
        let formatter = String(decoding: address.suffix(3), as: UTF8.self)
        let isPUBXPosition = String(decoding: address, as: UTF8.self) == "PUBX" && fields.count > 2
            && fields[1] == Array("00".utf8)
        func setTime(at index: Int) {
            guard index < fields.count, !fields[index].isEmpty else { return }
            fields[index] = timeField(time, like: fields[index])
        }
        switch formatter {
        case _ where isPUBXPosition: setTime(at: 2)
        case "GGA", "GNS", "GST", "GBS": setTime(at: 1)
        case "GLL": setTime(at: 5)
        case "RMC":
            setTime(at: 1)
            if fields.count > 9, !fields[9].isEmpty {
                fields[9] = digits(time.day, 2) + digits(time.month, 2) + digits(time.year % 100, 2)
            }
        case "ZDA":
            setTime(at: 1)
            if fields.count > 4 {
                (fields[2], fields[3], fields[4]) = (digits(time.day, 2), digits(time.month, 2), digits(time.year, 4))
            }
        default:
            return Array(line)
        }
        var body = fields.joined(separator: [UInt8(ascii: ",")]).map { $0 }
        let checksum = body.reduce(0, ^)
        body.insert(UInt8(ascii: "$"), at: 0)
        body.append(UInt8(ascii: "*"))
        body += hex(checksum)
        body += line[line.index(star, offsetBy: 3)...]  // the line ending as recorded
        return body
    }

    /// Each line and each UBX frame of a cycle's `bytes` stamped with `time`.
    public static func retime(cycle bytes: [UInt8], to time: GPSTime) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        for unit in CaptureUnits.units(of: bytes) {
            // A frame only when it passes its checks: a broken one runs on to the next line
            // end, and is no frame to rewrite.
            let isFrame = CaptureUnits.ubxFrameSize(bytes, at: unit.lowerBound) == unit.count
            result += isFrame ? retime(ubxFrame: bytes[unit], to: time) : retime(bytes[unit], to: time)
        }
        return result
    }

    /// GPS minus UTC assumed for a retimed UBX frame's GPS times: right since 2017.
    static let leapSeconds = 18

    /// A UBX frame stamped with `time`: the time of week of a NAV message, the UTC fields
    /// of NAV-PVT, NAV-TIMEUTC and HNR-PVT, the week of NAV-SOL, NAV-TIMEGPS and TIM-TP
    /// (whose pulse is the second after), its checksum recomputed. NAV-TIMELS loses the
    /// leap second it scheduled: that was the capture's day's, and a replay stamped with
    /// today's time must not tell the clock of one today. Other frames are left as they are.
    public static func retime(ubxFrame bytes: ArraySlice<UInt8>, to time: GPSTime) -> [UInt8] {
        var frame = Array(bytes)
        guard frame.count >= UBXFrame.overhead else { return frame }
        let message = UInt16(frame[2]) << 8 | UInt16(frame[3])
        let payloadCount = frame.count - UBXFrame.overhead
        let gpsMilliseconds = Int(WallTime(time).seconds - GPSTime.gpsEpochSince1970 + leapSeconds) * 1000
            + Int(time.time.nanosecond / 1_000_000)
        let week = gpsMilliseconds / 604_800_000, timeOfWeek = gpsMilliseconds % 604_800_000
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            guard offset + MemoryLayout<T>.size <= payloadCount else { return }
            withUnsafeBytes(of: value.littleEndian) { frame.replaceSubrange((6 + offset)..<(6 + offset + $0.count), with: $0) }
        }
        if message == TimTP.message {
            put(UInt32((timeOfWeek / 1000 + 1) * 1000 % 604_800_000), at: 0)
            put(UInt32(0), at: 4)
        } else if let offset = UBXTimeFields.timeOfWeekOffset(of: message) {
            put(UInt32(timeOfWeek), at: offset)
        }
        if let offset = UBXTimeFields.weekOffset(of: message) {
            put(UInt16(week), at: offset)
            if message != TimTP.message { put(Int32(0), at: 4) }  // fTOW: on the millisecond
        }
        if message == NavTIMELS.message {
            put(Int8(0), at: 11)  // lsChange: none scheduled
            if payloadCount >= 24 { frame[6 + 23] &= ~0x02 }  // validTimeToLsEvent cleared
        }
        if let (calendar, nanosecond) = UBXTimeFields.calendarOffsets(of: message) {
            put(UInt16(time.year), at: calendar)
            for (index, value) in [time.month, time.day, Int(time.time.hour), Int(time.time.minute), Int(time.time.second)].enumerated() {
                put(UInt8(value), at: calendar + 2 + index)
            }
            put(Int32(time.time.nanosecond), at: nanosecond)
        }
        let (a, b) = frame.withUnsafeBytes { UBXFrame.checksum(of: UnsafeRawBufferPointer(rebasing: $0[2..<(frame.count - 2)])) }
        frame[frame.count - 2] = a
        frame[frame.count - 1] = b
        return frame
    }

    /// `hhmmss` and the fraction to as many decimals as `original` had.
    private static func timeField(_ time: GPSTime, like original: [UInt8]) -> [UInt8] {
        var field = digits(Int(time.time.hour), 2) + digits(Int(time.time.minute), 2) + digits(Int(time.time.second), 2)
        if let point = original.firstIndex(of: UInt8(ascii: ".")) {
            let decimals = min(original.count - point - 1, 9)
            var fraction = Int(time.time.nanosecond)
            for _ in decimals..<9 { fraction /= 10 }
            field += [UInt8(ascii: ".")] + digits(fraction, decimals)
        }
        return field
    }

    private static func digits(_ value: Int, _ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: UInt8(ascii: "0"), count: count)
        var rest = value
        for index in stride(from: count - 1, through: 0, by: -1) {
            result[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return result
    }

    private static func hex(_ byte: UInt8) -> [UInt8] {
        let symbols = Array("0123456789ABCDEF".utf8)
        return [symbols[Int(byte >> 4)], symbols[Int(byte & 0x0F)]]
    }
}
