/// Why the framer refused a line. Every refused line is counted under exactly one reason.
public enum FramerRejection: Int, CaseIterable, Sendable, CustomStringConvertible {
    /// A line with no `$` or `!` in it: text dumps, binary noise, a receiver's boot banner.
    case garbage
    /// A sentence longer than ``NMEAFramer/Configuration/maximumLength``; it is skipped to its end.
    case tooLong
    /// A sentence cut off by the start of another one (`$GPGGA,12$GPRMC,...`).
    case truncated
    /// A byte outside printable ASCII inside a sentence (NUL, escape codes, line noise).
    case invalidCharacter
    /// No `*hh` checksum while the policy is ``NMEAFramer/ChecksumPolicy/required``.
    case missingChecksum
    /// A `*` not followed by exactly two hexadecimal digits and the end of the line.
    case malformedChecksum
    /// A well-formed checksum that does not match the sentence.
    case badChecksum
    /// An address field (`GPGGA`, `PUBX`) shorter than two characters.
    case badAddress

    public var description: String {
        switch self {
        case .garbage: "garbage"
        case .tooLong: "too-long"
        case .truncated: "truncated"
        case .invalidCharacter: "invalid-character"
        case .missingChecksum: "missing-checksum"
        case .malformedChecksum: "malformed-checksum"
        case .badChecksum: "bad-checksum"
        case .badAddress: "bad-address"
        }
    }
}

/// What a framer has seen: the sentences it accepted, the lines it refused by reason,
/// and the stray bytes it skipped while looking for the next sentence.
///
/// Every line is either accepted or refused, so `sentences + rejected` is the number of
/// lines seen. Bytes skipped before a `$` on the same line (a stray leading space) are
/// counted in ``discardedBytes`` only, since the sentence after them is still accepted.
public struct FramerStatistics: Hashable, Sendable {
    /// Bytes fed to the framer.
    public var bytes = 0
    /// Sentences accepted and handed out.
    public var sentences = 0
    /// Bytes outside any sentence that were skipped.
    public var discardedBytes = 0
    // One stored counter per reason (not an array), so that copying the statistics out
    // never makes the next count copy-on-write and allocate.
    private var garbage = 0, tooLong = 0, truncated = 0, invalidCharacter = 0
    private var missingChecksum = 0, malformedChecksum = 0, badChecksum = 0, badAddress = 0

    public init() {}

    /// How many lines were refused for `reason`.
    public subscript(reason: FramerRejection) -> Int {
        get {
            switch reason {
            case .garbage: garbage
            case .tooLong: tooLong
            case .truncated: truncated
            case .invalidCharacter: invalidCharacter
            case .missingChecksum: missingChecksum
            case .malformedChecksum: malformedChecksum
            case .badChecksum: badChecksum
            case .badAddress: badAddress
            }
        }
        set {
            switch reason {
            case .garbage: garbage = newValue
            case .tooLong: tooLong = newValue
            case .truncated: truncated = newValue
            case .invalidCharacter: invalidCharacter = newValue
            case .missingChecksum: missingChecksum = newValue
            case .malformedChecksum: malformedChecksum = newValue
            case .badChecksum: badChecksum = newValue
            case .badAddress: badAddress = newValue
            }
        }
    }

    /// How many lines were refused, for any reason.
    public var rejected: Int { FramerRejection.allCases.reduce(0) { $0 + self[$1] } }

    /// Adds another framer's counts to these, for totals across devices or files.
    public mutating func add(_ other: FramerStatistics) {
        bytes += other.bytes
        sentences += other.sentences
        discardedBytes += other.discardedBytes
        for reason in FramerRejection.allCases { self[reason] += other[reason] }
    }
}
