/// NMEA a test writes into a pseudo-terminal: one RMC a cycle, each a second after the
/// last from midnight, so a TPV's time says which cycle it is.
public enum SyntheticReceiver {
    /// Cycle `index`'s sentence, checksummed, CR LF.
    public static func cycle(_ index: Int) -> [UInt8] {
        let time = "\(twoDigits(index / 3600 % 24))\(twoDigits(index / 60 % 60))\(twoDigits(index % 60)).00"
        let body = "GPRMC,\(time),A,5128.6757,N,00000.0927,W,0.25,271.2,221126,,,A"
        let checksum = body.utf8.reduce(UInt8(0), ^)
        let hex = String(checksum, radix: 16, uppercase: true)
        return Array("$\(body)*\(hex.count == 1 ? "0" + hex : hex)\r\n".utf8)
    }

    /// Cycles `range`, one after the other.
    public static func cycles(_ range: Range<Int>) -> [UInt8] {
        range.flatMap(cycle)
    }

    /// The cycle a TPV line reports, from its time; `nil` for other lines.
    public static func index(ofTPV line: String) -> Int? {
        guard line.contains(#""class":"TPV""#), let start = line.range(of: #""time":"2026-11-22T"#)?.upperBound else {
            return nil
        }
        let clock = line[start...].prefix(8).split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3 else { return nil }
        return clock[0] * 3600 + clock[1] * 60 + clock[2]
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
