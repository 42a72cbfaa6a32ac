/// An NMEA 0183 sentence as it goes out on a line (NMEA out, the GGA sent to casters):
/// `$...*hh` then CR LF, its checksum added when it has none.
public enum NMEALine {
    /// Whether `sentence` ends in `*hh`.
    public static func hasChecksum(_ sentence: [UInt8]) -> Bool {
        sentence.count >= 3 && sentence[sentence.count - 3] == UInt8(ascii: "*")
    }

    /// `sentence` (start character first) with its checksum added when it has none (the
    /// XOR of every byte after the start character, two upper-case hex digits), and CR LF.
    public static func terminated(_ sentence: [UInt8]) -> [UInt8] {
        var line = checksummed(sentence, reservingExtra: 2)
        line += [13, 10]
        return line
    }

    /// `sentence` with its checksum added when it has none, without a line ending: as a
    /// receiver's sentence is handed around inside the daemon.
    public static func checksummed(_ sentence: [UInt8], reservingExtra extra: Int = 0) -> [UInt8] {
        var line = sentence
        line.reserveCapacity(sentence.count + 3 + extra)
        if !hasChecksum(sentence) {
            let checksum = sentence.dropFirst().reduce(UInt8(0), ^)
            line += [UInt8(ascii: "*"), hexDigits[Int(checksum >> 4)], hexDigits[Int(checksum & 0x0F)]]
        }
        return line
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
