/// What every binary driver's assembler does once it has read an epoch's values: the fix
/// reported with its motion derived as gpsd derives it, the sky with the DOPs the
/// receiver did not give computed from the geometry, values out of range left out and
/// counted, and GPS time turned into UTC. A driver's assembler reads its messages into
/// ``fix`` and ``sky`` and calls these; ``UBXAssembler`` does the same for UBX.
///
/// Nothing here allocates per epoch once ``completed`` has grown to the updates of one
/// frame.
public struct EpochReports {
    /// What an assembler of a binary protocol has seen.
    public struct Statistics: Hashable, Sendable {
        /// Epochs emitted, one fix each.
        public var epochs = 0
        /// Frames of a message the assembler reads that were too short for it.
        public var decodingErrors = 0
        /// Frames of messages the assembler does not read (passed on to raw watchers only).
        public var unknownMessages = 0
        /// Values left out of fixes and sky views for lying outside their ``ValueRanges``.
        public var valuesOutOfRange = 0

        public init() {}

        /// Adds another stream's counts to these, for totals across files.
        public mutating func add(_ other: Statistics) {
            epochs += other.epochs
            decodingErrors += other.decodingErrors
            unknownMessages += other.unknownMessages
            valuesOutOfRange += other.valuesOutOfRange
        }
    }

    /// The open epoch's fix and sky, filled by the driver's messages.
    public var fix = Fix()
    public var sky = SkyView()
    public var statistics = Statistics()
    /// GPS-UTC leap seconds as the receiver last gave them; `nil` until it has.
    public private(set) var leapSeconds: Int?
    /// The rule for receivers that lost 1024 weeks.
    public let rolloverRule: RolloverRule
    /// The day a fix last warned of a second inserted at its end, for times from GPS time.
    private var insertedSecond = InsertedSecond()
    /// The fixes climb and, where missing, speed are derived from.
    private var motion = MotionReference()
    /// Updates completed by the frame being read, handed out by ``emit(_:)``.
    private var completed: [LocationUpdate] = []

    public init(rolloverRule: RolloverRule) {
        self.rolloverRule = rolloverRule
        completed.reserveCapacity(4)
    }

    /// Reports the open epoch's fix as it stands, with the leap seconds in use when it
    /// has a time, and its motion derived from the fixes before it; `cycle` is the
    /// assembler's count of cycles opened when this epoch opened (``Fix/cycle``).
    public mutating func reportFix(cycle: Int) {
        var report = fix
        report.cycle = cycle
        report.leapSeconds = report.time == nil ? nil : leapSeconds
        insertedSecond.note(report.time, warning: report.leapSecondWarning, leapSeconds: leapSeconds)
        statistics.valuesOutOfRange += report.dropValuesOutOfRange()
        motion.derive(&report)
        statistics.epochs += 1
        complete(.fix(report))
    }

    /// Reports a view of `satellites` with the epoch's DOPs so far, those missing computed
    /// from the geometry and kept for the rest of the epoch, as gpsd does.
    public mutating func reportSatellites(_ satellites: [Satellite], time: GPSTime?) {
        guard !satellites.isEmpty else { return }
        let view = sky.view(of: satellites, time: time)
        sky.satellites = satellites
        complete(.sky(view))
    }

    /// Reports the epoch's DOPs, if it has any, after its fix, as gpsd reports them:
    /// without its satellites again (they went out in the epoch's view, and are kept here
    /// for the daemon's state, `?POLL`).
    public mutating func reportDilutions(time: GPSTime?) {
        guard sky.gdop != nil || sky.hdop != nil || sky.pdop != nil || sky.vdop != nil || sky.tdop != nil else { return }
        var dilutions = sky
        dilutions.time = time
        dilutions.satellitesReportedEarlier = true
        complete(.sky(dilutions))
    }

    /// Starts a new epoch with nothing known of it.
    public mutating func clear() {
        fix = Fix()
        sky = SkyView()
    }

    /// Hands out what the frames read so far completed.
    public mutating func emit(_ emit: (LocationUpdate) -> Void) {
        guard !completed.isEmpty else { return }
        for update in completed { emit(update) }
        completed.removeAll(keepingCapacity: true)
    }

    /// Takes the receiver's GPS-UTC leap seconds when they are in
    /// ``ValueRanges/receiverLeapSeconds``; others are counted out of range, and the last
    /// ones taken stay.
    public mutating func takeLeapSeconds(_ offset: Int) {
        ValueRanges.take(leapSeconds: offset, into: &leapSeconds, &statistics.valuesOutOfRange)
    }

    /// UTC from a GPS week and time of week in milliseconds, by the receiver's leap
    /// seconds (the default before it gives them), with a lost 1024 weeks restored;
    /// 23:59:60 for the second inserted after a day a fix warned of (``InsertedSecond``).
    public func utc(week: Int, milliseconds: Int) -> GPSTime {
        insertedSecond.utc(week: week, milliseconds: milliseconds, leapSeconds: leapSeconds, rolloverRule: rolloverRule)
    }

    /// Sets the fix's time from a GPS week and time of week (``utc(week:milliseconds:)``).
    /// A time converted by the default leap seconds, before the receiver gave its own, is
    /// right until the next leap second and then a whole second off: shown, as gpsd shows
    /// it, but marked unconfirmed, so it sets no clock.
    public mutating func setFixTime(gpsWeek week: Int, milliseconds: Int) {
        fix.time = utc(week: week, milliseconds: milliseconds)
        if leapSeconds == nil { fix.timeIsUnconfirmed = true }
    }

    /// Queues `update` with every value outside its range left out and counted.
    private mutating func complete(_ update: LocationUpdate) {
        var update = update
        statistics.valuesOutOfRange += update.dropValuesOutOfRange()
        completed.append(update)
    }
}
