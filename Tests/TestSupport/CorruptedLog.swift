/// A capture with a share of its sentences damaged the ways serial lines damage them,
/// and the same capture without those sentences: decoding the two must give the same
/// fixes, and the framer's refusals must account for every damaged sentence.
///
/// Each damaged sentence gets one of three injuries, chosen so that what the framer must
/// refuse is known exactly:
/// - a flipped bit in the body (one line refused: the checksum no longer matches, or the
///   byte is no longer printable);
/// - truncation: the sentence is cut short and runs into the next one, which is itself a
///   sentence (one line refused, as truncated);
/// - a `$` doubled inside the body, the way a receiver's restart interleaves output: the
///   part before it is truncated, the part after it fails its checksum (two refused).
public struct CorruptedLog {
    public enum Injury: CaseIterable, Sendable {
        case bitFlip, truncation, doubledStart
    }

    /// The capture with damaged sentences.
    public private(set) var bytes: [UInt8] = []
    /// The capture without the damaged sentences.
    public private(set) var intact: [UInt8] = []
    /// How many sentences were damaged, by injury.
    public private(set) var injuries: [Injury: Int] = [:]

    /// The lines the framer must refuse in `bytes` beyond those it refuses in `intact`.
    public var expectedRefusals: Int {
        injuries[.bitFlip, default: 0] + injuries[.truncation, default: 0] + 2 * injuries[.doubledStart, default: 0]
    }

    /// Damages about `fraction` of the checksummed sentences of `log`, reproducibly for a `seed`.
    public init(log: [UInt8], fraction: Double, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let lines = Self.lines(of: log)
        for (index, line) in lines.enumerated() {
            let nextIsSentence = index + 1 < lines.count && lines[index + 1].first == UInt8(ascii: "$")
            guard let star = Self.checksumStar(of: line), Double.random(in: 0..<1, using: &random) < fraction,
                let (injury, damaged) = Self.injure(line, star: star, nextIsSentence: nextIsSentence, using: &random)
            else {
                bytes += line
                intact += line
                continue
            }
            bytes += damaged
            injuries[injury, default: 0] += 1
        }
    }

    /// The log split after each line ending (CR LF, LF or a lone CR), endings kept.
    private static func lines(of log: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = 0
        var index = 0
        while index < log.count {
            if log[index] == 10 || (log[index] == 13 && (index + 1 == log.count || log[index + 1] != 10)) {
                lines.append(Array(log[start...index]))
                start = index + 1
            }
            index += 1
        }
        if start < log.count { lines.append(Array(log[start...])) }
        return lines
    }

    /// Where the `*` of a valid `$...*hh` sentence is; `nil` for any other line.
    private static func checksumStar(of line: [UInt8]) -> Int? {
        guard line.first == UInt8(ascii: "$"), let star = line.lastIndex(of: UInt8(ascii: "*")), star + 2 < line.count,
            line[1..<star].allSatisfy({ (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "$") && $0 != UInt8(ascii: "!") }),
            let declared = UInt8(String(decoding: line[(star + 1)...(star + 2)], as: UTF8.self), radix: 16),
            declared == line[1..<star].reduce(0, ^)
        else { return nil }
        return star
    }

    private static func injure(
        _ line: [UInt8], star: Int, nextIsSentence: Bool, using random: inout SeededGenerator
    ) -> (Injury, [UInt8])? {
        guard star > 3 else { return nil }
        switch Injury.allCases.randomElement(using: &random)! {
        case .bitFlip:
            for _ in 0..<16 {
                var damaged = line
                let position = Int.random(in: 1..<star, using: &random)
                damaged[position] ^= 1 << UInt8.random(in: 0..<7, using: &random)
                // A new start, checksum or line ending would split the line: not one refusal.
                if ![13, 10, UInt8(ascii: "$"), UInt8(ascii: "!"), UInt8(ascii: "*")].contains(damaged[position]) {
                    return (.bitFlip, damaged)
                }
            }
            return nil
        case .truncation:
            guard nextIsSentence else { return nil }
            return (.truncation, Array(line[..<Int.random(in: 2..<star, using: &random)]))
        case .doubledStart:
            // The part after the new `$` keeps the old checksum, which fails unless the
            // bytes cut from it happen to XOR to zero: pick a place where they do not.
            let places = (3..<star).filter { line[1..<$0].reduce(0, ^) != 0 }
            guard let place = places.randomElement(using: &random) else { return nil }
            return (.doubledStart, Array(line[..<place]) + [UInt8(ascii: "$")] + Array(line[place...]))
        }
    }
}
