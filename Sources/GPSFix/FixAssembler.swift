import NMEA

/// Merges the sentences of each receiver cycle into one fix and one sky view: the one
/// place in GPSFix that knows GPS semantics.
///
/// A receiver sends a burst of sentences per cycle (GGA, GSA, GSV, RMC, ...), most of
/// them stamped with the cycle's UTC time. The assembler keeps the cycle's values as
/// they arrive and, when the cycle ends, emits exactly one ``Fix``, then at most one
/// ``SkyView`` and one ``ErrorEstimate``; a receiver that sends its GSA after its GSV
/// groups has its satellites reported once more, earlier, when the GSA arrives (see
/// ``reportViewSoFar()``). A cycle ends when a sentence carries a new
/// time, or, once the assembler has seen the same sentence end two cycles in a row,
/// as soon as that sentence arrives, so a fix goes out without waiting for the next
/// cycle's first sentence.
///
/// Untimed sentences (GSA, GSV, VTG) belong to the cycle open when they arrive. A time
/// without a known date (GGA before any RMC or ZDA) gives a fix without time, as gpsd
/// does. A receiver without a fix often leaves its times empty: such a cycle ends at the
/// learned last sentence or, before one is learned, when a sentence with a time field
/// recurs, and gives a fix (no fix, no time) and the satellites being acquired.
/// Two-digit years follow ``CenturyRule``, lost weeks ``RolloverRule``.
///
/// Nothing here allocates per sentence.
public struct FixAssembler {
    /// What the assembler has seen.
    public struct Statistics: Hashable, Sendable {
        /// Cycles emitted (one fix each).
        public var cycles = 0
        /// Sentences of a known type refused for a malformed field, or for listing more
        /// satellites than a sky view holds (``SkyView/maximumSatellites``) or a group
        /// past the most held.
        public var decodingErrors = 0
        /// Sentences of types GPSFix does not read (passed on to raw watchers only).
        public var unknownSentences = 0
        /// Values left out of fixes, sky views, error estimates and headings for lying
        /// outside their ``ValueRanges`` (or not being finite numbers).
        public var valuesOutOfRange = 0

        public init() {}
    }

    public private(set) var statistics = Statistics()
    /// How many cycles have opened with a timed sentence: it changes with the sentence
    /// that opens a cycle, so a reader can note when that sentence arrived (the time
    /// service pairs the cycle's time with that moment).
    public private(set) var cyclesOpened = 0
    /// The rule for two-digit years; a ZDA sentence or a log header sets its reference year.
    public var centuryRule: CenturyRule
    /// The rule for receivers that lost 1024 weeks.
    public var rolloverRule: RolloverRule

    private var cycle = Cycle()
    private var cycleCount = 0
    /// The date the receiver last gave, and the time of day of the last cycle on it (see
    /// ``carryDate(to:)``).
    private var date: (year: Int, month: Int, day: Int)?
    private var dateLastTime: NMEATime?
    private var previousFix: Fix?
    /// The sky values the receiver sent last, held for the cycles in which it sends none.
    private var heldSky = HeldSky()
    /// The fixes motion the receiver did not report is derived from, as for every protocol.
    private var motion = MotionReference()
    private var satellites = SatelliteTracker()
    private var dilutionMemo = DilutionMemo()
    /// The last sentence, as a possible end of cycle; the one that ended the last cycle;
    /// and the one learned because it ended two cycles running.
    private var lastEnding: CycleEnding?
    private var endingCandidate: CycleEnding?
    private var cycleEnder: CycleEnding?
    /// The time and values of the cycle just closed by its ending sentence, in case more
    /// of it follows, while `holdsClosedCycle`: a value beside a flag, not an optional,
    /// so that closing a cycle copies its 600 bytes once, not twice through a temporary.
    private var closedTime: NMEATime?
    private var closedCycle = Cycle()
    private var holdsClosedCycle = false
    /// How often each address occurred in the open cycle: only a sentence that occurs
    /// once per cycle can be learned as the one that ends it.
    private var tally = Tally(placeholder: SentenceAddress(packed: 0, count: 0))
    private var sentenceCounts = Tally(placeholder: SentenceFormatter(rawValue: 0))
    /// The updates completed by the sentences handled since they were last delivered:
    /// at most two cycles' worth, as a sentence can end one cycle by its time and the
    /// next as its learned last sentence.
    private var completed: [LocationUpdate] = []
    /// A GSV group completed in the open cycle and has not been reported yet.
    private var viewAwaitingReport = false
    /// The open cycle's satellites went out before its end (see ``reportViewSoFar()``).
    private var viewReportedThisCycle = false

    public init(centuryRule: CenturyRule = CenturyRule(), rolloverRule: RolloverRule = RolloverRule()) {
        self.centuryRule = centuryRule
        self.rolloverRule = rolloverRule
        completed.reserveCapacity(8)
    }

    /// Adds one framed sentence, calling `emit` for each update it completes.
    public mutating func add(_ sentence: NMEASentence, _ emit: (LocationUpdate) -> Void) {
        sentence.decode(into: &self)
        deliverUpdates(emit)
    }

    /// Passes on, in order, the updates completed since the last call, for a caller that
    /// hands sentences over one by one (``NMEASentence/decode(into:)``).
    public mutating func deliverUpdates(_ emit: (LocationUpdate) -> Void) {
        // Most sentences complete nothing: no loop and no emptying then.
        guard !completed.isEmpty else { return }
        // Each lent where it lies: an update is hundreds of bytes, not copied to be passed on.
        completed.withUnsafeBufferPointer { updates in
            for index in updates.indices { emit(updates[index]) }
        }
        completed.removeAll(keepingCapacity: true)
    }

    /// Ends the open cycle, as at the end of a log.
    public mutating func flush(_ emit: (LocationUpdate) -> Void) {
        if cycleHasContent { endCycle() }
        deliverUpdates(emit)
    }

    /// Whether the open cycle has anything to report (a cycle of nothing is not emitted).
    private var cycleHasContent: Bool { cycle.sawData || satellites.hasNews }

    /// Standard sentences seen, by type (`GGA`); built on demand, not per sentence. The
    /// types past the ``Tally``'s bound are counted together, as `other`.
    public var sentenceCountsByType: [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: sentenceCounts.counts.map { ($0.key.description, $0.count) })
        if sentenceCounts.uncounted > 0 { counts["other", default: 0] += sentenceCounts.uncounted }
        return counts
    }

    /// Takes a date with a two-digit year (RMC's, Garmin PGRMF's), placed in its century.
    private mutating func note(twoDigitYearDate date: NMEADate?) {
        guard let date else { return }
        self.date = (centuryRule.fullYear(date.year), Int(date.month), Int(date.day))
        dateLastTime = cycle.time
    }

    /// A receiver that gives its date less often than its time (an RMC lost to noise, a
    /// ZDA once a minute) crosses midnight without it: a cycle whose time of day is half a
    /// day or more before the last one on the held date is on the next day, as gpsd moves
    /// its day on when the hour goes back. Without this, the fix, and the time service's
    /// sample of it, would be a day behind. A cycle a little earlier than the last (out of
    /// order) moves nothing, nor does one half a day or more later: a late cycle from
    /// before the midnight just passed, which ``cycleTime`` dates on the day before.
    private mutating func carryDate(to time: NMEATime) {
        guard let held = date, let last = dateLastTime else {
            dateLastTime = time
            return
        }
        let back = last.nanosecondsSinceMidnight - time.nanosecondsSinceMidnight
        if back >= Self.halfADay {
            let next = GPSTime(daysSince1970: Self.days(held, time) + 1, time: time)
            date = (next.year, next.month, next.day)
            dateLastTime = time
        } else if back <= 0, -back < Self.halfADay {
            dateLastTime = time
        }
    }

    private static func days(_ date: (year: Int, month: Int, day: Int), _ time: NMEATime) -> Int {
        GPSTime(year: date.year, month: date.month, day: date.day, time: time).daysSince1970
    }

    private static var halfADay: Int64 { 43_200 * 1_000_000_000 }

    /// A sentence with a time field: a new time ends the open cycle and teaches which
    /// sentence ends cycles; a cycle it opens keeps the receiver's last DOPs only when it
    /// is `carryingDilutions` itself (see ``HeldSky/forgetDilutions()``). Without its time
    /// (a receiver without a fix often leaves it empty), the sentence begins a new cycle
    /// when it already occurred in the open one, which has no time either.
    private mutating func beginTimed(_ time: NMEATime?, _ address: SentenceAddress, carryingDilutions: Bool = false) {
        guard let time else {
            if cycle.time == nil, tally.occurrences(of: address) > 0 { endCycleBeforeNewOne() }
            return
        }
        if let current = cycle.time {
            guard current != time else { return }
            endCycleBeforeNewOne()
        } else if time == closedTime, holdsClosedCycle {
            // More of a cycle already closed: the learned ending sentence was wrong (a
            // multiplexer's other talkers between the epoch's sentences). The epoch is
            // reopened with what it had, so its next fix carries all of its own values.
            cycleEnder = nil
            endingCandidate = nil
            var reopened = closedCycle
            reopened.absorb(cycle)
            cycle = reopened
        }
        if time != closedTime { holdsClosedCycle = false }
        if cycle.time != time {
            cyclesOpened &+= 1
            if !carryingDilutions { heldSky.forgetDilutions() }
            carryDate(to: time)
        }
        cycle.time = time
    }

    /// A new cycle began with this sentence, so the open one ended with the previous
    /// sentence: that one is learned as the end of cycles once it ends two running.
    /// Only a sentence sent once per cycle, or the last part of a GSV group, can.
    private mutating func endCycleBeforeNewOne() {
        var candidate: CycleEnding?
        if let last = lastEnding, last.isGroupEnd || tally.occurrences(of: last.address) == 1 { candidate = last }
        cycleEnder = candidate != nil && candidate == endingCandidate ? candidate : nil
        endingCandidate = candidate
        endCycle()
    }

    /// The open cycle's time as a date and time, once a date is known. Inlined, as the
    /// assembler's other reads of itself from its mutating methods: a call would lend
    /// the assembler's 4 KB by copying them.
    @inline(__always)
    private var cycleTime: GPSTime? {
        guard let time = cycle.time, let date else { return nil }
        // A late cycle from before the midnight the held date was carried past.
        if let last = dateLastTime, time.nanosecondsSinceMidnight - last.nanosecondsSinceMidnight >= Self.halfADay {
            return rolloverRule.corrected(GPSTime(daysSince1970: Self.days(date, time) - 1, time: time))
        }
        return rolloverRule.corrected(GPSTime(year: date.year, month: date.month, day: date.day, time: time))
    }

    /// The open cycle's DOPs; what it did not say, the receiver's last word says when
    /// `holding` (held values still fresh).
    @inline(__always)
    private func takeDilutions(into sky: inout SkyView, holding: Bool) {
        sky.hdop = cycle.hdop ?? (holding ? heldSky.hdop : nil)
        sky.vdop = cycle.vdop ?? (holding ? heldSky.vdop : nil)
        sky.pdop = cycle.pdop ?? (holding ? heldSky.pdop : nil)
        sky.tdop = cycle.tdop ?? (holding ? heldSky.tdop : nil)
    }

    /// Reports the satellites in view before the cycle ends, when a GSA follows the
    /// cycle's GSV groups (Quectel LC79D, Broadcom's PGLOR-speaking chips and others
    /// send GSV, then GSA). gpsd reports the view as its groups complete, with the
    /// used flags and DOPs it holds then (the last GSA's, computed from the geometry
    /// where it has none), and the GSA's DOPs and used count in a SKY of their own,
    /// without the satellites again; GPSFix does the same, so a gpsd client ends the
    /// cycle with the same state from either daemon.
    private mutating func reportViewSoFar() {
        guard viewAwaitingReport else { return }
        var sky = SkyView()
        sky.time = cycleTime
        takeDilutions(into: &sky, holding: heldSky.isFresh(at: sky.time, cycle: cycleCount))
        sky.satellites = satellites.takeView()
        sky.fillMissingDilutions(memo: &dilutionMemo)
        complete(.sky(sky))
        viewAwaitingReport = false
        viewReportedThisCycle = true
    }

    /// Queues `update` for delivery, every value outside its range left out and counted:
    /// the one place through which the assembler's numbers leave it.
    private mutating func complete(_ update: consuming LocationUpdate) {
        statistics.valuesOutOfRange += update.dropValuesOutOfRange()
        completed.append(update)
    }

    private mutating func endCycle() {
        let time = cycleTime
        var fix = cycle.fix(previous: previousFix, time: time)
        fix.time = time
        // Before motion is derived from it and before it is held for the next cycle;
        // ``complete(_:)`` checks what is derived.
        statistics.valuesOutOfRange += fix.dropValuesOutOfRange()
        motion.derive(&fix)
        fix.cycle = cyclesOpened
        statistics.cycles += 1
        complete(.fix(fix))
        // A GSA or GSV (or PUBX,03) this cycle renews the held sky; past its age limit
        // the receiver's last satellites and DOPs are forgotten.
        let satelliteNews = satellites.hasNews
        if satelliteNews { heldSky.update(from: cycle, time: fix.time, cycle: cycleCount) }
        let held = heldSky.isFresh(at: fix.time, cycle: cycleCount)
        if !held { satellites.forget() }
        if cycle.hasSkyData || held {
            var sky = SkyView()
            sky.time = fix.time
            // DOPs describe a solution, so they are held only while there is a fix.
            takeDilutions(into: &sky, holding: held && fix.mode >= .twoDimensional)
            sky.satellites = satellites.takeView()
            sky.satellitesReportedEarlier = viewReportedThisCycle && !viewAwaitingReport
            // The held view's used flags are older than this cycle's GGA count: the
            // count stands unless a GSA of this cycle said which satellites are used. A
            // GSA of this cycle beside a held view, or after a view already reported, is
            // the count (the view's flags may not show a satellite the receiver uses now).
            if !cycle.listedUsedSatellites || sky.satellites.isEmpty {
                sky.reportedUsedCount = cycle.satellitesUsed
            } else if !satellites.viewRenewedThisCycle || sky.satellitesReportedEarlier {
                sky.reportedUsedCount = satellites.listedUsedCount
            }
            sky.fillMissingDilutions(memo: &dilutionMemo)
            complete(.sky(sky))
        }
        if var estimate = cycle.errorEstimate {
            estimate.time = fix.time
            complete(.errorEstimate(estimate))
        }
        if let heading = cycle.heading { complete(.attitude(Attitude(time: fix.time, heading: heading))) }
        if fix.mode >= .twoDimensional { previousFix = fix }
        satellites.beginCycle()
        viewAwaitingReport = false
        viewReportedThisCycle = false
        tally.reset()
        cycle = Cycle()
        cycleCount += 1
    }
}

/// Typed sentences in, straight from the decoder: each merges into the open cycle as it
/// arrives. The updates a sentence completes wait for ``FixAssembler/deliverUpdates(_:)``
/// (``FixAssembler/add(_:_:)`` does both).
extension FixAssembler: NMEASentenceHandler {
    public mutating func handle(_ gga: GGA, in sentence: NMEASentence) {
        beginTimed(gga.time, sentence.address, carryingDilutions: Cycle.carriesDilution(gga.hdop))
        cycle.merge(gga)
        conclude(sentence.address)
    }

    public mutating func handle(_ rmc: RMC, in sentence: NMEASentence) {
        beginTimed(rmc.time, sentence.address)
        note(twoDigitYearDate: rmc.date)
        cycle.merge(rmc)
        conclude(sentence.address)
    }

    public mutating func handle(_ gll: GLL, in sentence: NMEASentence) {
        beginTimed(gll.time, sentence.address)
        cycle.merge(gll)
        conclude(sentence.address)
    }

    public mutating func handle(_ gns: GNS, in sentence: NMEASentence) {
        beginTimed(gns.time, sentence.address, carryingDilutions: Cycle.carriesDilution(gns.hdop))
        cycle.merge(gns)
        conclude(sentence.address)
    }

    public mutating func handle(_ zda: ZDA, in sentence: NMEASentence) {
        beginTimed(zda.time, sentence.address)
        if let date = zda.date {
            self.date = (date.year, Int(date.month), Int(date.day))
            dateLastTime = cycle.time
            centuryRule.referenceYear = date.year
        }
        cycle.sawData = true
        conclude(sentence.address)
    }

    public mutating func handle(_ gst: GST, in sentence: NMEASentence) {
        beginTimed(gst.time, sentence.address)
        cycle.merge(gst)
        conclude(sentence.address)
    }

    public mutating func handle(_ pubx: PUBXPosition, in sentence: NMEASentence) {
        beginTimed(pubx.time, sentence.address, carryingDilutions: Cycle.carriesDilution(pubx.hdop, pubx.vdop, pubx.tdop))
        cycle.merge(pubx)
        conclude(sentence.address)
    }

    public mutating func handle(_ gsa: GSA, in sentence: NMEASentence) {
        reportViewSoFar()
        cycle.merge(gsa)
        satellites.add(gsa)
        conclude(sentence.address)
    }

    public mutating func handle(_ gsv: GSV, in sentence: NMEASentence) {
        if !satellites.add(gsv) { statistics.decodingErrors += 1 }
        let ending = CycleEnding(lastPartOf: gsv, address: sentence.address)
        if ending != nil { viewAwaitingReport = true }
        conclude(sentence.address, ending: ending)
    }

    public mutating func handle(_ vtg: VTG, in sentence: NMEASentence) {
        cycle.merge(vtg)
        conclude(sentence.address)
    }

    public mutating func handle(_ pgrme: PGRME, in sentence: NMEASentence) {
        cycle.merge(pgrme)
        conclude(sentence.address)
    }

    public mutating func handle(_ pgrmz: PGRMZ, in sentence: NMEASentence) {
        cycle.merge(pgrmz)
        conclude(sentence.address)
    }

    public mutating func handle(_ pgrmf: PGRMF, in sentence: NMEASentence) {
        beginTimed(pgrmf.time, sentence.address, carryingDilutions: Cycle.carriesDilution(pgrmf.pdop, pgrmf.tdop))
        note(twoDigitYearDate: pgrmf.date)
        cycle.merge(pgrmf)
        conclude(sentence.address)
    }

    public mutating func handle(_ pmgnst: PMGNST, in sentence: NMEASentence) {
        cycle.merge(pmgnst)
        conclude(sentence.address)
    }

    public mutating func handle(_ epe: PSRFEPE, in sentence: NMEASentence) {
        beginTimed(epe.time, sentence.address, carryingDilutions: Cycle.carriesDilution(epe.hdop))
        cycle.merge(epe)
        conclude(sentence.address)
    }

    public mutating func handle(_ gbs: GBS, in sentence: NMEASentence) {
        cycle.merge(gbs)
        conclude(sentence.address)
    }

    public mutating func handle(_ hdt: HDT, in sentence: NMEASentence) {
        cycle.merge(hdt)
        conclude(sentence.address)
    }

    public mutating func handle(_ ths: THS, in sentence: NMEASentence) {
        cycle.merge(ths)
        conclude(sentence.address)
    }

    public mutating func handle(_ pubx: PUBXSatellites, in sentence: NMEASentence) {
        if !satellites.add(pubx) { statistics.decodingErrors += 1 }
        cycle.hasSkyData = true
        conclude(sentence.address)
    }

    public mutating func handle(_ pashr: PASHRPosition, in sentence: NMEASentence) {
        beginTimed(pashr.time, sentence.address, carryingDilutions: Cycle.carriesDilution(pashr.hdop, pashr.pdop))
        cycle.merge(pashr)
        conclude(sentence.address)
    }

    public mutating func handle(_ pashr: PASHRSatellites, in sentence: NMEASentence) {
        if !satellites.add(pashr) { statistics.decodingErrors += 1 }
        cycle.hasSkyData = true
        conclude(sentence.address)
    }

    public mutating func handle(_ psti: PSTIPosition, in sentence: NMEASentence) {
        beginTimed(psti.time, sentence.address)
        note(twoDigitYearDate: psti.date)
        cycle.merge(psti)
        conclude(sentence.address)
    }

    public mutating func handle(_ dtm: DTM, in sentence: NMEASentence) { conclude(sentence.address) }

    public mutating func handle(_ txt: TXT, in sentence: NMEASentence) { conclude(sentence.address) }

    public mutating func handleUnknown(_ sentence: NMEASentence) {
        statistics.unknownSentences += 1
        conclude(sentence.address)
    }

    public mutating func handleFailure(_ error: NMEADecodingError, in sentence: NMEASentence) {
        statistics.decodingErrors += 1
    }

    /// What follows every sentence read: it is counted, and when it is the sentence
    /// learned to end cycles, the cycle ends now rather than at the next cycle's first.
    private mutating func conclude(_ address: SentenceAddress) {
        conclude(address, ending: CycleEnding(address: address))
    }

    private mutating func conclude(_ address: SentenceAddress, ending: CycleEnding?) {
        if let formatter = address.formatter { sentenceCounts.count(formatter) }
        // An untimed cycle ends there too: a receiver without a fix still reports
        // its mode and the satellites it is acquiring every cycle.
        if let ending, ending == cycleEnder, cycle.time != nil || cycleHasContent {
            closedTime = cycle.time
            closedCycle = cycle
            holdsClosedCycle = true
            endCycle()
        }
        lastEnding = ending
        tally.count(address)
    }
}

/// A sentence that may end a receiver's cycle: any sentence, except that of a GSV group
/// only the last part counts, and the group's signal id tells a 4.11 receiver's groups
/// for different bands apart (`$GPGSV` for L1, then `$GPGSV` for L5).
struct CycleEnding: Equatable {
    var address: SentenceAddress
    var signal: Int?
    var isGroupEnd: Bool

    /// Any sentence but a GSV.
    init(address: SentenceAddress) {
        self.address = address
        isGroupEnd = false
    }

    /// A GSV, when it is the last part of its group.
    init?(lastPartOf gsv: GSV, address: SentenceAddress) {
        guard let count = gsv.messageCount, gsv.messageNumber == count else { return nil }
        self.address = address
        signal = gsv.signalID
        isGroupEnd = true
    }
}
