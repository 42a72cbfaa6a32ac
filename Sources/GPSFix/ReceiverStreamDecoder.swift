import NMEA
import ReceiverFraming
import UBX

/// One protocol's frames in, location updates out: the seam between a receiver's framed
/// stream and the rest of the daemon, which never learns which protocol a fix came from.
/// ``FixAssembler`` reads NMEA 0183, ``UBXAssembler`` u-blox's UBX.
public protocol ProtocolAssembler {
    /// The borrowed frame the assembler reads (``NMEASentence``, ``UBXFrame``).
    associatedtype Frame
    /// Adds one frame, calling `emit` for each update it completes.
    mutating func add(_ frame: Frame, _ emit: (LocationUpdate) -> Void)
    /// Ends the open cycle, as at the end of a log.
    mutating func flush(_ emit: (LocationUpdate) -> Void)
    /// Changes whenever a frame opens a new cycle (see ``ReceiverStreamDecoder/cycleReadAt``).
    var cyclesOpened: Int { get }
}

extension FixAssembler: ProtocolAssembler {}

extension UBXAssembler: ProtocolAssembler {
    public var cyclesOpened: Int { epochsOpened }
}

/// Bytes in, location updates out: the framer and the protocols' assemblers joined, the
/// synchronous core that ``NMEALocationProvider`` runs over a byte source and
/// `gpsfix decode` runs over a file.
///
/// One ``ReceiverFramer`` splits the stream; NMEA sentences go to a ``FixAssembler``,
/// UBX frames to a ``UBXAssembler``, each ``ReceiverDriver``'s frames to an assembler of
/// its own, RTCM 3 frames (a base station's) are counted. A receiver sending NMEA beside
/// a binary protocol has one fix per epoch, not two: once the binary protocol carries
/// navigation solutions, the NMEA is passed on to raw watchers only, until no binary
/// solution has come for ``nmeaTakeover`` sentences (the receiver was set back to NMEA).
///
/// A decoder is used from one task or thread at a time, so its properties touched per
/// frame skip the runtime's exclusivity bookkeeping (a check per frame otherwise).
public final class ReceiverStreamDecoder {
    public let framer: ReceiverFramer
    @exclusivity(unchecked) public private(set) var assembler: FixAssembler
    @exclusivity(unchecked) public private(set) var ubx: UBXAssembler
    /// The drivers read besides NMEA and UBX, by the index of their rules in ``framer``'s
    /// rules (`nil` for the decoder's own rules), each with its assembler once the stream
    /// has sent a frame of its protocol: a receiver speaks one or two protocols, so the
    /// others' assemblers (and the room each keeps for a sky) are made at most for a stray
    /// frame that passes a weak check (TSIP's), and mostly never.
    @exclusivity(unchecked) private var drivers: [(driver: any ReceiverDriver.Type, assembler: (any DriverAssembler)?)?]
    /// What a driver's assembler is made with.
    private let assemblyContext: AssemblyContext
    /// Each driver's solutions as last seen, by the same index.
    @exclusivity(unchecked) private var driverSolutions: [Int]
    /// Called with every accepted sentence, before it is decoded (for raw watchers and
    /// recording); the sentence is borrowed, valid during the call only.
    @exclusivity(unchecked) public var onSentence: ((NMEASentence) -> Void)?
    /// Called with every accepted binary frame (UBX, RTCM 3 or a driver's) as it was received,
    /// borrowed, valid during the call only.
    @exclusivity(unchecked) public var onBinaryFrame: ((UnsafeRawBufferPointer) -> Void)?
    /// Called with every RTCM 3 frame (after ``onBinaryFrame``), whole, borrowed, valid
    /// during the call only: a base station's corrections, for the caster.
    @exclusivity(unchecked) public var onRTCM3Frame: ((UnsafeRawBufferPointer) -> Void)?
    /// When the bytes being fed were read (``ByteChunk/readAt``), set before each chunk.
    public var readAt: WallTime?
    /// When the frame being routed was read: the chunk's time, or `nil` for a frame read
    /// again from an earlier chunk (``ReceiverFramer/isReplaying``), whose read is not known
    /// closely enough to time a receiver's clock by.
    private var frameReadAt: WallTime? { framer.isReplaying ? nil : readAt }
    /// When the open cycle's first frame was read; `nil` for a cycle a frame read again
    /// opened (``ReceiverFramer/isReplaying``).
    public private(set) var cycleReadAt: WallTime?
    /// While a fix is emitted, when the first frame of the cycle it reports was read: the
    /// moment its receiver time was observed, for the time service. That is the open
    /// cycle's (``cycleReadAt``), or this chunk's for a fix of a cycle its frame opened
    /// (an old u-blox's NAV-SOL opens its epoch and reports it at once) or of a frame of its
    /// own (HNR-PVT); `nil` when that read is not known (a frame read again).
    public private(set) var emittedFixReadAt: WallTime?
    /// NMEA sentences without a binary protocol's solution after which NMEA carries the fixes again.
    public static let nmeaTakeover = 100
    @exclusivity(unchecked) private var sentencesSinceSolution = Int.max
    private var solutionsSeen = 0

    /// A decoder of NMEA, UBX and RTCM 3, and of the protocols of `drivers`.
    public init(
        framing: NMEAFramer.Configuration = .lenient, centuryRule: CenturyRule = CenturyRule(),
        rolloverRule: RolloverRule = RolloverRule(), drivers: [any ReceiverDriver.Type] = []
    ) {
        let own = ReceiverFramer.standardRules()
        framer = ReceiverFramer(nmea: framing, rules: own + drivers.map { ReceiverFramer.Rule($0.frames) })
        assembler = FixAssembler(centuryRule: centuryRule, rolloverRule: rolloverRule)
        ubx = UBXAssembler(rolloverRule: rolloverRule)
        assemblyContext = AssemblyContext(centuryRule: centuryRule, rolloverRule: rolloverRule)
        self.drivers = Array(repeating: nil, count: own.count) + drivers.map { ($0, nil) }
        driverSolutions = Array(repeating: 0, count: self.drivers.count)
    }

    /// A decoder set up by a capture's header: its `# Date:` gives the century and the
    /// reference date for the rollover rule.
    public convenience init(
        for log: CaptureLog, framing: NMEAFramer.Configuration = .lenient, drivers: [any ReceiverDriver.Type] = []
    ) {
        self.init(referenceDate: log.referenceDate, framing: framing, drivers: drivers)
    }

    /// A decoder set up by a reference date (a capture's `# Date:`), as ``init(for:framing:drivers:)``.
    public convenience init(
        referenceDate: GPSTime?, framing: NMEAFramer.Configuration = .lenient, drivers: [any ReceiverDriver.Type] = []
    ) {
        self.init(
            framing: framing, centuryRule: CenturyRule(referenceYear: referenceDate?.year),
            rolloverRule: RolloverRule(referenceDay: referenceDate?.daysSince1970), drivers: drivers)
    }

    /// Whether a binary protocol (UBX or a driver's) carries this receiver's fixes now
    /// (its NMEA, if any, goes to raw watchers only): a receiver that sends no NMEA of its
    /// own has its fixes written as NMEA for NMEA 0183 out.
    public var binaryCarriesFixes: Bool { sentencesSinceSolution < Self.nmeaTakeover }

    /// Frames accepted so far, of every protocol: a device sending any is alive.
    public var framesAccepted: Int {
        framer.nmea.statistics.sentences + framer.binaryStatistics.frames
    }

    /// Calls `body` with each driver's assembly counts, under its frame rule's name (as
    /// the framer counts its frames), in the drivers' order, without building a list.
    public func driverStatistics(_ body: (_ name: String, _ statistics: EpochReports.Statistics) -> Void) {
        for slot in drivers {
            if let slot { body(slot.driver.frames.name, slot.assembler?.statistics ?? EpochReports.Statistics()) }
        }
    }

    /// Changes whenever ``receiver`` may have: with the first frame of a binary protocol
    /// and with each identity message, so that a reader need not build the identity per
    /// chunk to compare it.
    public var receiverChanges: Int {
        var changes = (sent(ruleAt: 0) ? 1 : 0) + ubx.identityChanges
        for slot in drivers {
            guard let assembler = slot?.assembler else { continue }
            changes += (Self.speaks(assembler) ? 1 : 0) + assembler.identityChanges
        }
        return changes
    }

    /// The receiver as gpsd's DEVICE report names it: the driver of the binary protocol
    /// it speaks (`u-blox` once it has sent a UBX frame, then the drivers in their order,
    /// each once it has sent a second epoch or named itself: a stray frame of a protocol
    /// with a weak check, TSIP's, names nothing, though it opens an epoch), `NMEA0183`
    /// before, with its versions once it has named them.
    public var receiver: ReceiverIdentity {
        if sent(ruleAt: 0) {
            return ReceiverIdentity(driver: "u-blox", subtype: ubx.version?.subtype, subtype1: ubx.version?.subtype1, readsBinary: true)
        }
        for slot in drivers {
            guard let slot, let assembler = slot.assembler, Self.speaks(assembler) else { continue }
            let subtypes = assembler.subtypes
            return ReceiverIdentity(driver: slot.driver.name, subtype: subtypes.subtype, subtype1: subtypes.subtype1, readsBinary: true)
        }
        return ReceiverIdentity(driver: "NMEA0183")
    }

    /// Whether the receiver has sent a frame of the framer's rule at `index` (0 is UBX).
    private func sent(ruleAt index: Int) -> Bool { framer.binaryStatistics.counts(ofRuleAt: index).frames > 0 }

    /// Whether a driver's receiver has shown it speaks the protocol: a second epoch (one
    /// frame that passed a weak check opens one), or its name.
    private static func speaks(_ assembler: any DriverAssembler) -> Bool {
        assembler.cyclesOpened > 1 || assembler.identityChanges > 0
    }

    /// Feeds one chunk of a byte stream, calling `emit` for each update it completes.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void) {
        framer.feed(bytes) { route($0, emit) }
    }

    /// Ends the stream: frames what is left and emits the open cycles.
    public func finish(_ emit: (LocationUpdate) -> Void) {
        framer.finish { route($0, emit) }
        // What is flushed is of the cycles open before.
        emittedFixReadAt = cycleReadAt
        assembler.flush(emit)
        ubx.flush(emit)
        for slot in drivers { slot?.assembler?.flush(emit) }
    }

    /// Forgets a partial sentence or frame, as after the device was reopened.
    public func resetFraming() {
        framer.reset()
    }

    private func route(_ frame: ReceiverFrame, _ emit: (LocationUpdate) -> Void) {
        switch frame {
        case .nmea(let sentence):
            onSentence?(sentence)
            if sentencesSinceSolution < Self.nmeaTakeover {
                sentencesSinceSolution += 1
            } else {
                add(sentence, to: &assembler, emit)
            }
        case .ubx(let message):
            onBinaryFrame?(message.bytes)
            add(message, to: &ubx, emit)
            if ubx.solutions != solutionsSeen {
                solutionsSeen = ubx.solutions
                sentencesSinceSolution = 0
            }
        case .rtcm3(let message):
            onBinaryFrame?(message.bytes)
            onRTCM3Frame?(message.bytes)
        case .binary(let frame):
            onBinaryFrame?(frame.bytes)
            guard let driverAssembler = driverAssembler(ofRuleAt: frame.rule) else { return }
            let opened = driverAssembler.cyclesOpened
            driverAssembler.add(frame.bytes) { update in emitPairing(update, cyclesOpenedBefore: opened, emit) }
            if driverAssembler.cyclesOpened != opened { cycleReadAt = frameReadAt }
            if driverAssembler.solutions != driverSolutions[frame.rule] {
                driverSolutions[frame.rule] = driverAssembler.solutions
                sentencesSinceSolution = 0
            }
        }
    }

    /// The assembler of the driver whose rule is at `index`, made with its first frame.
    private func driverAssembler(ofRuleAt index: Int) -> (any DriverAssembler)? {
        guard let slot = drivers[index] else { return nil }
        if let assembler = slot.assembler { return assembler }
        let made = slot.driver.makeAssembler(assemblyContext)
        drivers[index] = (slot.driver, made)
        return made
    }

    private func add<Assembler: ProtocolAssembler>(
        _ frame: Assembler.Frame, to assembler: inout Assembler, _ emit: (LocationUpdate) -> Void
    ) {
        let opened = assembler.cyclesOpened
        assembler.add(frame) { update in emitPairing(update, cyclesOpenedBefore: opened, emit) }
        // After the add: the fix it emitted for the cycle before kept that cycle's moment.
        if assembler.cyclesOpened != opened { cycleReadAt = frameReadAt }
    }

    /// Emits `update`, a fix with the moment its cycle's first frame was read
    /// (``emittedFixReadAt``): the open cycle's when the fix is of the cycle open before
    /// the frame (`cyclesOpenedBefore`), this chunk's when the frame opened it, or the fix
    /// is a frame of its own.
    @inline(__always)
    private func emitPairing(_ update: LocationUpdate, cyclesOpenedBefore opened: Int, _ emit: (LocationUpdate) -> Void) {
        if case .fix(let fix) = update { emittedFixReadAt = fix.cycle == opened ? cycleReadAt : frameReadAt }
        emit(update)
    }
}
