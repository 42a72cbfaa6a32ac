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
    /// Cycles emitted so far, one fix each.
    var cyclesEmitted: Int { get }
}

extension FixAssembler: ProtocolAssembler {
    public var cyclesEmitted: Int { statistics.cycles }
}

extension UBXAssembler: ProtocolAssembler {
    public var cyclesOpened: Int { epochsOpened }
    public var cyclesEmitted: Int { statistics.epochs }
}

/// Bytes in, location updates out: the framer and the protocols' assemblers joined, the
/// synchronous core that ``NMEALocationProvider`` runs over a byte source and
/// `gpsfix decode` runs over a file.
///
/// One ``ReceiverFramer`` splits the stream; NMEA sentences go to a ``FixAssembler``,
/// UBX frames to a ``UBXAssembler``, RTCM 3 frames (a base station's) are counted. A
/// receiver sending both NMEA and UBX has one fix per epoch, not two: once UBX carries
/// navigation solutions, its NMEA is passed on to raw watchers only, until no UBX
/// solution has come for ``nmeaTakeover`` sentences (the receiver was set back to NMEA).
///
/// A decoder is used from one task or thread at a time, so its properties touched per
/// frame skip the runtime's exclusivity bookkeeping (a check per frame otherwise).
public final class ReceiverStreamDecoder {
    public let framer: ReceiverFramer
    @exclusivity(unchecked) public private(set) var assembler: FixAssembler
    @exclusivity(unchecked) public private(set) var ubx: UBXAssembler
    /// Called with every accepted sentence, before it is decoded (for raw watchers and
    /// recording); the sentence is borrowed, valid during the call only.
    @exclusivity(unchecked) public var onSentence: ((NMEASentence) -> Void)?
    /// Called with every accepted binary frame (UBX or RTCM 3) as it was received,
    /// borrowed, valid during the call only.
    @exclusivity(unchecked) public var onBinaryFrame: ((UnsafeRawBufferPointer) -> Void)?
    /// When the bytes being fed were read (``ByteChunk/readAt``), set before each chunk.
    public var readAt: WallTime?
    /// When the open cycle's first frame was read: while a cycle's fix is emitted, the
    /// moment its receiver time was observed.
    public private(set) var cycleReadAt: WallTime?
    /// NMEA sentences without a UBX solution after which NMEA carries the fixes again.
    public static let nmeaTakeover = 100
    @exclusivity(unchecked) private var sentencesSinceSolution = Int.max
    private var solutionsSeen = 0

    public init(
        framing: NMEAFramer.Configuration = .lenient, centuryRule: CenturyRule = CenturyRule(),
        rolloverRule: RolloverRule = RolloverRule()
    ) {
        framer = ReceiverFramer(nmea: framing)
        assembler = FixAssembler(centuryRule: centuryRule, rolloverRule: rolloverRule)
        ubx = UBXAssembler(rolloverRule: rolloverRule)
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

    /// Whether UBX carries this receiver's fixes now (its NMEA, if any, goes to raw
    /// watchers only): a receiver that sends no NMEA of its own has its fixes written as
    /// NMEA for NMEA 0183 out.
    public var ubxCarriesFixes: Bool { sentencesSinceSolution < Self.nmeaTakeover }

    /// Frames accepted so far, of every protocol: a device sending any is alive.
    public var framesAccepted: Int {
        framer.nmea.statistics.sentences + framer.binaryStatistics.frames
    }

    /// Cycles emitted so far, by either assembler.
    public var cyclesEmitted: Int { assembler.cyclesEmitted + ubx.cyclesEmitted }

    /// Changes whenever ``receiver`` may have: with the first UBX frame and with each
    /// MON-VER, so that a reader need not build the identity per chunk to compare it.
    public var receiverChanges: Int { (sentUBX ? 1 : 0) + ubx.identityChanges }

    /// The receiver as gpsd's DEVICE report names it: driver `u-blox` once it has sent
    /// UBX (`NMEA0183` before), and its versions once it has answered MON-VER.
    public var receiver: ReceiverIdentity {
        guard sentUBX else { return ReceiverIdentity(driver: "NMEA0183") }
        return ReceiverIdentity(driver: "u-blox", subtype: ubx.version?.subtype, subtype1: ubx.version?.subtype1)
    }

    /// Whether the receiver has sent a UBX frame.
    private var sentUBX: Bool { framer.binaryStatistics[UBXFrameRule.self].frames > 0 }

    /// Feeds one chunk of a byte stream, calling `emit` for each update it completes.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void) {
        framer.feed(bytes) { route($0, emit) }
    }

    /// Ends the stream: frames what is left and emits the open cycles.
    public func finish(_ emit: (LocationUpdate) -> Void) {
        framer.finish { route($0, emit) }
        assembler.flush(emit)
        ubx.flush(emit)
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
        }
    }

    private func add<Assembler: ProtocolAssembler>(
        _ frame: Assembler.Frame, to assembler: inout Assembler, _ emit: (LocationUpdate) -> Void
    ) {
        let opened = assembler.cyclesOpened
        assembler.add(frame, emit)
        // After the add: the fix it emitted for the cycle before kept that cycle's moment.
        if assembler.cyclesOpened != opened { cycleReadAt = readAt }
    }
}
