import NMEA

/// Bytes in, location updates out: the framer and the assembler joined, the synchronous
/// core that ``NMEALocationProvider`` runs over a byte source and `gpsfix decode` runs
/// over a file.
///
/// A decoder is used from one task or thread at a time, so its two properties touched per
/// sentence skip the runtime's exclusivity bookkeeping (a check per sentence otherwise).
public final class NMEAStreamDecoder {
    public let framer: NMEAFramer
    @exclusivity(unchecked) public private(set) var assembler: FixAssembler
    /// Called with every accepted sentence, before it is decoded (for raw watchers and
    /// recording); the sentence is borrowed, valid during the call only.
    @exclusivity(unchecked) public var onSentence: ((NMEASentence) -> Void)?
    /// When the bytes being fed were read (``ByteChunk/readAt``), set before each chunk.
    public var readAt: WallTime?
    /// When the open cycle's first timed sentence was read: while a cycle's fix is
    /// emitted, the moment its receiver time was observed.
    public private(set) var cycleReadAt: WallTime?

    public init(
        framing: NMEAFramer.Configuration = .lenient, centuryRule: CenturyRule = CenturyRule(),
        rolloverRule: RolloverRule = RolloverRule()
    ) {
        framer = NMEAFramer(configuration: framing)
        assembler = FixAssembler(centuryRule: centuryRule, rolloverRule: rolloverRule)
    }

    /// A decoder set up by a capture's header: its `# Date:` gives the century and the
    /// reference date for the rollover rule.
    public convenience init(for log: CaptureLog, framing: NMEAFramer.Configuration = .lenient) {
        self.init(referenceDate: log.referenceDate, framing: framing)
    }

    /// A decoder set up by a reference date (a capture's `# Date:`), as ``init(for:framing:)``.
    public convenience init(referenceDate: GPSTime?, framing: NMEAFramer.Configuration = .lenient) {
        self.init(
            framing: framing, centuryRule: CenturyRule(referenceYear: referenceDate?.year),
            rolloverRule: RolloverRule(referenceDay: referenceDate?.daysSince1970))
    }

    /// Feeds one chunk of a byte stream, calling `emit` for each update it completes.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void) {
        framer.feed(bytes) { sentence in
            onSentence?(sentence)
            let opened = assembler.cyclesOpened
            assembler.add(sentence, emit)
            // After the add: the fix it emitted for the cycle before kept that cycle's moment.
            if assembler.cyclesOpened != opened { cycleReadAt = readAt }
        }
    }

    /// Ends the stream: frames a last unterminated sentence and emits the open cycle.
    public func finish(_ emit: (LocationUpdate) -> Void) {
        framer.finish { sentence in
            onSentence?(sentence)
            assembler.add(sentence, emit)
        }
        assembler.flush(emit)
    }

    /// Forgets a partial sentence, as after the device was reopened.
    public func resetFraming() {
        framer.reset()
    }
}
