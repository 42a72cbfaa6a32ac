import GPSFix
import NMEA

/// Rewrites the time and date fields of recorded sentences, so a capture replayed now
/// looks like a receiver running now: times that keep increasing across a loop, dates of
/// today. The checksum is recomputed; every other byte stays as recorded.
///
/// The fields rewritten, by sentence (any talker): GGA, GLL, GNS, GST, GBS and RMC time
/// (and RMC's date), ZDA time and date, u-blox PUBX,00 time. A time keeps the number of
/// decimals it had. Lines that are not checksummed sentences are left as they are.
public enum Retimer {
    /// `line` (one sentence with its line ending) stamped with `time`.
    public static func retime(_ line: ArraySlice<UInt8>, to time: GPSTime) -> [UInt8] {
        guard line.first == UInt8(ascii: "$"), let star = line.lastIndex(of: UInt8(ascii: "*")),
            line.index(star, offsetBy: 3, limitedBy: line.endIndex) != nil
        else { return Array(line) }
        var fields = line[line.index(after: line.startIndex)..<star]
            .split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map(Array.init)
        guard let address = fields.first, address.count >= 5 else { return Array(line) }
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

    /// Each line of `bytes` stamped with `time`.
    public static func retime(lines bytes: [UInt8], to time: GPSTime) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
            result += retime(bytes[start..<end], to: time)
            start = end
        }
        return result
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
