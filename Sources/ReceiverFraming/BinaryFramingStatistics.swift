/// What a ``ReceiverFramer`` accepted and refused under each of its frame rules, and the
/// bytes it was fed.
public struct BinaryFramingStatistics: Hashable, Sendable {
    /// Why a binary candidate was refused.
    public enum Refusal: CaseIterable, Sendable {
        /// A header no frame has: a wrong second sync byte, an unknown message class or
        /// number, reserved bits set, a length the message cannot have (a stray sync
        /// byte, usually).
        case impossibleHeader
        /// A length over the framer's limit.
        case tooLong
        /// A checksum (UBX's Fletcher-8, RTCM 3's CRC-24Q) that does not hold.
        case badChecksum
        /// The stream ended inside the frame.
        case truncated
    }

    /// One rule's frames, accepted and refused.
    public struct Counts: Hashable, Sendable {
        public var frames = 0
        public var impossibleHeaders = 0, tooLong = 0, badChecksums = 0, truncated = 0

        public init() {}

        /// Candidates refused, for any reason.
        public var refused: Int { impossibleHeaders + tooLong + badChecksums + truncated }

        mutating func count(_ refusal: Refusal) {
            switch refusal {
            case .impossibleHeader: impossibleHeaders += 1
            case .tooLong: tooLong += 1
            case .badChecksum: badChecksums += 1
            case .truncated: truncated += 1
            }
        }

        mutating func add(_ other: Counts) {
            frames += other.frames
            impossibleHeaders += other.impossibleHeaders
            tooLong += other.tooLong
            badChecksums += other.badChecksums
            truncated += other.truncated
        }
    }

    /// A rule's counts, under the rule's identity.
    struct Entry: Hashable, Sendable {
        let rule: ObjectIdentifier
        /// The rule's ``FrameRule/name``.
        let name: String
        var counts: Counts
    }

    /// Bytes fed to the framer, of every protocol.
    public var bytes = 0
    /// The rules' counts, in the order the framer registered them: the framer counts by
    /// index, without a look-up.
    private(set) var entries: [Entry] = []

    public init() {}

    /// Statistics with a zero count for each of `rules`, indexed as they are.
    init(rules: [ReceiverFramer.Rule]) {
        entries = rules.map { Entry(rule: ObjectIdentifier($0.frames), name: $0.frames.name, counts: Counts()) }
    }

    /// The counts of the frames of `rule`: zero for a rule not counted here.
    public subscript(rule: any FrameRule.Type) -> Counts {
        get { entries.first { $0.rule == ObjectIdentifier(rule) }?.counts ?? Counts() }
        set { set(newValue, rule: ObjectIdentifier(rule), name: rule.name) }
    }

    /// Each protocol's counts under its rule's name, in the order the framer registered them.
    public var protocols: [(name: String, counts: Counts)] { entries.map { ($0.name, $0.counts) } }

    private mutating func set(_ counts: Counts, rule: ObjectIdentifier, name: String) {
        if let index = entries.firstIndex(where: { $0.rule == rule }) {
            entries[index].counts = counts
        } else {
            entries.append(Entry(rule: rule, name: name, counts: counts))
        }
    }

    /// The counts of the framer's rule at `index`, without a look-up.
    public func counts(ofRuleAt index: Int) -> Counts { entries[index].counts }

    /// Frames accepted, under every rule.
    public var frames: Int { entries.reduce(0) { $0 + $1.counts.frames } }

    mutating func countFrame(ofRule index: Int) {
        entries[index].counts.frames += 1
    }

    mutating func count(_ refusal: Refusal, ofRule index: Int) {
        entries[index].counts.count(refusal)
    }

    /// Adds another framer's counts to these, rule by rule, for totals across devices or
    /// files.
    public mutating func add(_ other: BinaryFramingStatistics) {
        bytes += other.bytes
        for entry in other.entries {
            var counts = entries.first { $0.rule == entry.rule }?.counts ?? Counts()
            counts.add(entry.counts)
            set(counts, rule: entry.rule, name: entry.name)
        }
    }
}
