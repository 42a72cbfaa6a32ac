import GPSFix
import GPSFixDevices
import Logging
import NIOConcurrencyHelpers
import NIOCore
import UBXConfiguration

/// Keeps a u-blox receiver as its `[receiver]` table says: each time the device is opened,
/// or speaks again after a silence (a receiver that lost power comes back with what it
/// saved), the receiver is asked for its settings and, where they differ, given the
/// table's, in RAM and battery-backed RAM.
///
/// - Turns: the keeper asks the receiver's ``ReceiverConversations`` for a turn, as
///   `gpsfix ubx` does; events that come while a turn is under way or waiting fold into one
///   waiting turn, so a burst of openings is one conversation after the current one.
/// - Flash (`save`): written once per table and receiver. The ``FlashRecord`` in the state
///   directory remembers the last table saved to which receiver; a restart, a reopening or
///   a return from silence saves nothing more. A save is remembered before it is made, and
///   not made when the record cannot keep it; a conversation that fails before its first
///   write to flash is forgotten again, so the next one saves.
/// - A receiver that keeps a difference after being given the table (a setting it cannot
///   take, or reports otherwise), or that refuses the table, is reported, once, and after
///   a second try is not given the table again while it reports the same.
/// - A conversation that fails (the receiver silent, or not taking a speed) is begun again
///   at once (a receiver that blinked out while it ran), and if that fails too after
///   ``firstRetryDelay``, then after twice as long each time, up to
///   ``longestRetryDelay``, however often the device falls silent, speaks again or is
///   reopened meanwhile: a conversation can itself silence the device (a speed tried for
///   seconds) or lose its speed, and neither its return nor the reopening that finds the
///   speed again may begin the next at once, in a loop. Only a line at a speed no failed
///   conversation ran at (the speed found at last by a port that searches) begins one at
///   once.
///
/// The conversation blocks on the receiver's answers: it runs on a thread of its own, which
/// ends with it, one conversation at a time.
final class ReceiverKeeper: Sendable {
    let control: ReceiverControl
    let receiverPort: ReceiverPort
    let settings: ReceiverSettings
    let save: Bool
    private let flash: FlashRecord
    private let logger: Logger
    /// Held for a whole conversation: a turn taken away at its deadline may leave its
    /// conversation waiting for one last answer, which the next must not share.
    private let conversing = NIOLock()
    var port: SerialPort { control.port }
    private let state = NIOLockedValueBox(State())

    private struct State {
        var status = "not yet configured"
        /// The last failure logged, so an unchanged one is not logged again.
        var lastFailure: String?
        /// What the receiver kept against its table when it was last given it.
        var kept: Kept?
        var counters = ReceiverTableCounters()
        /// Why the last save due was not made (the record could not keep it), so that it is
        /// logged once.
        var flashRefusal: String?
        /// Conversations failed in a row; while they back off, when the next may begin,
        /// and whether a turn is asked for then.
        var failuresInARow = 0
        var retryAt: NIODeadline?
        var retryScheduled = false
        /// The speeds the port ran at when those conversations began.
        var failedSpeeds: Set<Int> = []

        /// Whether a conversation waits now: failures back off, and the port runs at a
        /// speed one of them ran at.
        func waits(now: NIODeadline, speed: Int) -> Bool {
            retryAt.map { $0 > now } == true && failedSpeeds.contains(speed)
        }
    }

    /// How long after the second failed conversation in a row the next begins; doubled
    /// at each failure after it.
    static let firstRetryDelay = TimeAmount.minutes(1)
    /// The longest wait between failed conversations.
    static let longestRetryDelay = TimeAmount.hours(1)

    /// A receiver that refused its table, or kept differences after being given it: who it
    /// was, what differs, and the status line. Once the same receiver has done so twice in
    /// a row (`confirmed`: a receiver that lost power during the first read-back looks the
    /// same once), it is not given the table again while it reads the same.
    private struct Kept {
        var receiver: String
        var differences: [String]
        var status: String
        var confirmed = false

        /// This outcome, confirmed if `previous` was the same.
        func following(_ previous: Kept?) -> Kept {
            var next = self
            next.confirmed = previous.map { $0.receiver == receiver && $0.differences == differences } ?? false
            return next
        }
    }

    init(control: ReceiverControl, receiverPort: ReceiverPort, settings: ReceiverSettings, save: Bool, flash: FlashRecord, logger: Logger) {
        self.control = control
        self.receiverPort = receiverPort
        self.settings = settings
        self.save = save
        self.flash = flash
        self.logger = logger
    }

    /// `receiver /dev/ttyACM0: as configured`, or what differs, or why it could not be;
    /// and how often flash was written.
    var status: String {
        let (status, flashWrites) = state.withLockedValue { ($0.status, $0.counters.flashWrites) }
        return "\(port.path): \(status)" + (save ? " (flash written \(flashWrites) times since start)" : "")
    }

    /// What it did, for `/metrics`.
    var counters: ReceiverTableCounters { state.withLockedValue { $0.counters } }

    /// The speed the port runs at now (0 when not known).
    private var speed: Int { port.line?.bps ?? 0 }

    /// Takes the device's events: an opening or a return from silence asks for a turn, at
    /// once, or, while failed conversations back off, at the backoff's end.
    func take(_ event: DeviceEvent) {
        switch event.kind {
        case .activated, .recovered, .resumed: requestTurnAfterBackoff()
        default: break
        }
    }

    /// Asks for a turn now, or, while failures back off, has one asked for at the
    /// backoff's end (one at most), if the last conversation failed then still.
    private func requestTurnAfterBackoff() {
        let now = NIODeadline.now(), speed = self.speed
        let (waits, retryAt) = state.withLockedValue { state -> (Bool, NIODeadline?) in
            guard state.waits(now: now, speed: speed) else { return (false, nil) }
            defer { state.retryScheduled = true }
            return (true, state.retryScheduled ? nil : state.retryAt)
        }
        guard waits else { return requestTurn() }
        guard let retryAt else { return }
        control.writer.eventLoop.scheduleTask(deadline: retryAt) { [weak self] in
            guard let self else { return }
            let failing = state.withLockedValue { state in
                state.retryScheduled = false
                return state.failuresInARow > 0
            }
            if failing { requestTurnAfterBackoff() }
        }
    }

    private func requestTurn() {
        let conversations = control.conversations
        let answer = conversations.request(.keeper) { [weak self] turn in
            guard let self else { return conversations.end(turn) }
            startConversation(in: turn)
        }
        if case .begun(let turn) = answer { startConversation(in: turn) }
    }

    private func startConversation(in turn: ConversationTurn) {
        let started = DeviceThread.start(named: "gpsfix-keeper") { self.conversing.withLock { self.converse(in: turn) } }
        guard !started else { return }
        control.conversations.end(turn)
        logger.warning("receiver not configured as its table says: the system started no thread for the conversation", metadata: ["device": "\(port.path)"])
    }

    /// One conversation, then the turn ends. A turn that was taken away while this waited
    /// for the one before is over before it began.
    private func converse(in turn: ConversationTurn) {
        guard control.conversations.holds(turn) else { return }
        // A turn asked for while the last conversation ran, which then failed, waits for
        // the backoff's end like any other.
        let speed = self.speed
        if state.withLockedValue({ $0.waits(now: .now(), speed: speed) }) {
            control.conversations.end(turn)
            return requestTurnAfterBackoff()
        }
        defer {
            state.withLockedValue { $0.counters.conversations += 1 }
            control.conversations.end(turn)
        }
        do {
            let status = try control.replies.listening(during: turn) { try configure(in: turn) }
            state.withLockedValue { state in
                state.status = status
                state.lastFailure = nil
                state.failuresInARow = 0
                state.retryAt = nil
                state.retryScheduled = false
                state.failedSpeeds = []
            }
        } catch {
            let failure = "\(error)"
            // A refusal is the receiver's answer to the table, bounded by ``Kept``; any
            // other failure backs off.
            let backsOff = !Self.isAnswerToTheTable(error)
            let (isNew, retry) = state.withLockedValue { state -> (Bool, String) in
                state.counters.failed += 1
                state.status = "not configured as its table says: \(failure)"
                defer { state.lastFailure = failure }
                guard backsOff else { return (state.lastFailure != failure, "") }
                state.failuresInARow += 1
                state.failedSpeeds.insert(speed)
                guard let delay = Self.retryDelay(afterFailuresInARow: state.failuresInARow) else {
                    return (state.lastFailure != failure, "; tried again now")
                }
                state.retryAt = .now() + delay
                let retry = "; tried again in \(delay.nanoseconds / 60_000_000_000) min, and less often while it fails"
                return (state.lastFailure != failure || state.failuresInARow == 2, retry)
            }
            if isNew {
                logger.warning("receiver not configured as its table says: \(failure)\(retry)", metadata: ["device": "\(port.path)"])
            }
            // Tried again whether or not the device has news: a failure that passes (a
            // receiver still starting) is not left until the next reopening.
            if backsOff { requestTurnAfterBackoff() }
        }
    }

    /// Whether `error` is the receiver's answer to the table (a refusal, a feature it lacks),
    /// which it gives again, rather than a failure that may pass.
    private static func isAnswerToTheTable(_ error: any Error) -> Bool {
        switch error as? UBXConfiguration.ConfigurationError {
        case .refused, .unsupported: true
        default: false
        }
    }

    /// Reads the receiver, gives it what differs (and flash what it never had), reads it
    /// again; the status line. A receiver told to send NMEA only answers no UBX afterwards:
    /// it is given the table, not read back.
    private func configure(in turn: ConversationTurn) throws -> String {
        let conversation = ReceiverConversation(link: DaemonReceiverLink(control: control, turn: turn), clock: ContinuousClock())
        let configurator = ReceiverConfigurator(conversation: conversation, port: receiverPort)
        let silencing = settings.output == .nmea
        let report: ReceiverReport
        do {
            report = try configurator.report()
        } catch UBXConfiguration.ConfigurationError.silent where silencing {
            return "sends no UBX (output = nmea), so it cannot be read back"
        }
        let receiver = Self.identity(report)
        let table = settings.canonicalText + ";port=\(receiverPort.rawValue)"
        var flashDue = save && !flash.holds(device: port.path, receiver: receiver, table: table)
        let differences = report.differences(from: settings)
        if differences.isEmpty && !flashDue { return "as configured" }
        let previous = state.withLockedValue { $0.kept }
        if let previous, previous.confirmed, previous.receiver == receiver, previous.differences == differences {
            state.withLockedValue { $0.counters.differencesKept += 1 }
            return previous.status
        }
        // Remembered before it is made, and made only if remembered: an application that
        // fails after its flash write (an acknowledgement lost, a later step refused) must
        // not write flash again at every reopening, nor a save the record cannot keep at
        // every start. Flash then holds the table, or part of it: said if it failed.
        var unsaved = ""
        if flashDue {
            let refusal = flash.remember(device: port.path, receiver: receiver, table: table)
            noteFlashRefusal(refusal)
            flashDue = refusal == nil
            unsaved = refusal.map { " (not saved to flash: \($0))" } ?? ""
            if differences.isEmpty && !flashDue { return "as configured" + unsaved }
        }
        let layers: ConfigurationLayers = flashDue ? [.ram, .batteryBacked, .flash] : [.ram, .batteryBacked]
        var flashWritten = false
        do {
            // Only what differs is written where the receiver runs (a base's survey-in
            // written again would begin anew); a save writes the whole table to flash.
            let plan = try configurator.plan(report.unmet(settings), layers: layers, saving: flashDue ? settings : nil)
            try configurator.apply(plan) {
                flashWritten = true
                state.withLockedValue { $0.counters.flashWrites += 1 }
            }
        } catch {
            if flashWritten {
                let advice = "change the table, or save with gpsfix ubx set --save"
                logger.warning(
                    "saving the table to flash failed (\(error)); it is not tried again for this table and receiver: \(advice)",
                    metadata: ["device": "\(port.path)"])
            } else if flashDue, let failure = flash.forget(device: port.path, receiver: receiver) {
                // Nothing reached flash: the next conversation saves, unless the record of
                // this one cannot be undone.
                logger.warning(
                    "the table was not saved to flash, though the record says it was, which cannot be undone (\(failure)): save it with gpsfix ubx set --save",
                    metadata: ["device": "\(port.path)"])
            }
            // A refusal, or a feature the receiver lacks, is its answer to this table: the
            // same receiver gives it again. A silence may pass, and is tried again later.
            if Self.isAnswerToTheTable(error) {
                let kept = Kept(receiver: receiver, differences: differences, status: "not configured as its table says: \(error)")
                state.withLockedValue { $0.kept = kept.following(previous) }
            }
            throw error
        }
        state.withLockedValue { $0.counters.applied += 1 }
        let left = silencing ? [] : try configurator.report().differences(from: settings)
        state.withLockedValue { state in
            state.kept = left.isEmpty ? nil : Kept(receiver: receiver, differences: left, status: Self.kept(left)).following(previous)
        }
        // Logged once the receiver was read back: the conversation is over but for its end.
        let changed = differences.isEmpty ? "nothing differed" : differences.joined(separator: "; ")
        logger.info(
            "receiver configured as its table says\(flashDue ? ", and saved to flash" : ""): \(changed)",
            metadata: ["device": "\(port.path)"])
        guard left.isEmpty else {
            logger.warning("\(Self.kept(left)); after a second try it is not given the table again while it says so", metadata: ["device": "\(port.path)"])
            return Self.kept(left)
        }
        return "as configured" + unsaved
    }

    /// A save the record could not keep (`refusal`, nil when it kept it) is not made: said
    /// once for each reason in a row.
    private func noteFlashRefusal(_ refusal: String?) {
        let isNew = state.withLockedValue { state in
            defer { state.flashRefusal = refusal }
            return state.flashRefusal != refusal
        }
        guard isNew, let refusal else { return }
        logger.warning(
            "the table is not saved to the receiver's flash, since which table was saved cannot be remembered (\(refusal)): a save not remembered would be made again at every start; save with gpsfix ubx set --save",
            metadata: ["device": "\(port.path)"])
    }

    /// None after a first failure (the next conversation begins at once), then
    /// ``firstRetryDelay``, doubled for each failure in a row after the second, at most
    /// ``longestRetryDelay``.
    static func retryDelay(afterFailuresInARow failures: Int) -> TimeAmount? {
        guard failures > 1 else { return nil }
        let doubled = Self.firstRetryDelay.nanoseconds << min(failures - 2, 16)
        return .nanoseconds(min(doubled, Self.longestRetryDelay.nanoseconds))
    }

    private static func kept(_ differences: [String]) -> String {
        "differs from its table after being given it: \(differences.joined(separator: "; "))"
    }

    /// Who the receiver is: MON-VER's software, hardware and extensions, and the chip's ID
    /// where it says one (two receivers of one model and firmware differ only there).
    static func identity(_ report: ReceiverReport) -> String {
        let version = [report.version.software, report.version.hardware] + report.version.extensions
        return (version + (report.chipID.map { ["chip=\($0)"] } ?? [])).joined(separator: "|")
    }
}
