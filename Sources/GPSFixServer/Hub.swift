#if canImport(Glibc)
import Glibc
#endif
import GPSDProtocol
import GPSFix
import GPSFixDevices
import Logging
import NIOCore
import NMEA

/// The fan-out: every report is encoded once and the same buffer is handed to every
/// session that wants it.
///
/// The hub and all sessions live on one event loop, so nothing here locks. A session
/// whose outbound buffer is past its high-water mark lags: while a watcher does, the
/// devices whose sources can wait are paused (their channels' `autoRead` off,
/// ``readingHold`` on), until the watchers catch up, for at most ``holdBackLimit`` in a
/// row whichever watchers lag; a hold that runs out is followed by ``holdBackRestRatio``
/// times as long read before the next. The reports of the others are left out for the
/// lagging session alone (counted). A session that lags for ``stallTimeout`` is cut off
/// (see ``ClientSession``).
final class Hub: @unchecked Sendable {
    /// What the hub knows of one device, changed in place by each of its reports.
    ///
    /// A class, not a struct: a struct kept in the hub's dictionary was copied out of it
    /// and back, whole (its fix, its sky and its counters), at every change through the
    /// dictionary's subscript, a fifth of the event loop's instructions at 1 Hz.
    final class DeviceState {
        var info: DeviceInfo
        var fix: Fix?
        var sky: SkyView?
        var estimate: ErrorEstimate?
        var counters = DeviceCounters()
        var cycle = CycleMeter()
        /// When the last fix of mode 2D or better arrived, for its age in the metrics.
        var lastFixAt: NIODeadline?
        /// Whether the source can wait for lagging watchers (see ``ByteSource/canWait``).
        var canWait = false

        init(info: DeviceInfo) {
            self.info = info
        }
    }

    /// Counters, for logs and the service status line.
    struct Statistics {
        var clientsAccepted = 0
        var reportsSent = 0
        var reportsDropped = 0
        var requestsRefused = 0
    }

    let eventLoop: any EventLoop
    /// The VERSION report, sent to each gpsd client as it connects and answering `?VERSION`.
    let versionReport: ByteBuffer
    let logger: Logger
    /// Every connection of every listener, within the caps of its limits.
    let sessionTable: SessionTable
    /// How long, in a row, sources that can wait are held back for lagging watchers.
    let holdBackLimit: TimeAmount
    /// How long sources that can wait read after a hold that ran out, for each unit of
    /// time they were held, before they can be held again: watchers that lag again and
    /// again without catching up in time, one or many, hold them back a fifth of the time
    /// at most.
    static let holdBackRestRatio: Int64 = 4
    /// On while sources that can wait are held back: their providers' silence watches
    /// do not count that time.
    let readingHold = ReadingHold()
    /// Lagging sessions for which the sources that can wait are held back.
    private var holdingSessions: Set<ObjectIdentifier> = []
    /// The hold in progress: when it began, and the timer that ends it.
    private var hold: (began: NIODeadline, timer: Scheduled<Void>)?
    /// No hold begins before this: the sources read on after the last one that ran out.
    private var nextHoldAllowed = NIODeadline.uptimeNanoseconds(0)
    private var holdsRanOutLog = LogLimit()
    /// Devices read on this loop whose sources can wait: paused while any session holds them.
    private var pausableReaders: [ObjectIdentifier: any Channel] = [:]
    /// On while any session watches raw sentences, so providers copy them out only then.
    let sentenceDemand = SentenceDemand()
    /// The base receiver's RTCM 3 frames, for the caster and the NTRIP servers.
    let corrections: CorrectionFeed
    private(set) var statistics = Statistics()
    private(set) var sessions: [ObjectIdentifier: ClientSession] = [:]
    private(set) var deviceOrder: [String] = []
    private(set) var devices: [String: DeviceState] = [:]
    /// Takers of every report beyond the sockets (``ReportSubscriber``), fixed at start.
    private let subscribers: [any ReportSubscriber]
    /// The services beside the hub, for `?STATUS;` (see ``GPSFixServer/describeServices(with:)``).
    var services: @Sendable () -> StatusLines = { StatusLines() }
    /// Sessions with reports queued but not yet flushed, and whether a flush is scheduled.
    private var unflushed: [ClientSession] = []
    /// The sessions being flushed now (``flushQueuedReports()``): `unflushed`'s other buffer.
    private var flushing: [ClientSession] = []
    private var flushScheduled = false
    /// The report being encoded, kept from one to the next so that encoding allocates
    /// only to grow: to twice the largest SKY at most, some 35 kB (140 satellites).
    /// Its bytes are copied out before anything is sent (see ``broadcastReport``).
    private var reportBytes = JSONBytes(capacity: 1024)

    init(
        eventLoop: any EventLoop, release: String, revision: String? = nil, limits: SessionLimits = SessionLimits(),
        holdBackLimit: TimeAmount = .seconds(2), subscribers: [any ReportSubscriber] = [], logger: Logger
    ) {
        self.eventLoop = eventLoop
        versionReport = ByteBuffer(bytes: SessionReport.version(release: release, revision: revision))
        sessionTable = SessionTable(limits: limits, eventLoop: eventLoop, logger: logger)
        corrections = CorrectionFeed(eventLoop: eventLoop)
        self.holdBackLimit = holdBackLimit
        self.subscribers = subscribers
        self.logger = logger
    }

    var sessionCount: Int {
        eventLoop.assertInEventLoop()
        return sessions.count
    }

    var anyDeviceOnline: Bool {
        eventLoop.assertInEventLoop()
        return devices.values.contains { $0.info.online }
    }

    /// One line on every device and the clients, for the log and systemd's STATUS:
    /// `3D fix, 14/22 satellites, 2 clients` with one device; with several, each named:
    /// `/dev/ttyUSB0 3D fix, 14/22 satellites; /dev/ttyACM0 no fix; 2 clients`.
    var status: String {
        eventLoop.assertInEventLoop()
        let states = deviceOrder.compactMap { devices[$0] }
        let summaries = states.map { state in
            let mode = switch state.fix?.mode {
            case .threeDimensional?: "3D fix"
            case .twoDimensional?: "2D fix"
            case .noFix?: "no fix"
            case .unknown?, nil: state.info.online ? "waiting for a fix" : "waiting for data"
            }
            let sky = state.sky.map { ", \($0.usedCount ?? 0)/\($0.visibleCount) satellites" } ?? ""
            return states.count == 1 ? mode + sky : "\(state.info.path) \(mode)\(sky)"
        }
        let devicesPart = summaries.isEmpty ? "no device" : summaries.joined(separator: "; ")
        return "\(devicesPart)\(states.count > 1 ? ";" : ",") \(sessions.count) clients"
    }

    /// Makes a device known before it sends anything, so DEVICES lists it; `canWait`
    /// says whether its source can be held back for lagging watchers.
    func add(device: DeviceInfo, canWait: Bool = false) {
        eventLoop.assertInEventLoop()
        if devices[device.path] == nil {
            deviceOrder.append(device.path)
            devices[device.path] = DeviceState(info: device)
        }
        devices[device.path]?.canWait = canWait
    }

    func register(_ session: ClientSession) {
        eventLoop.assertInEventLoop()
        sessions[ObjectIdentifier(session)] = session
        statistics.clientsAccepted += 1
    }

    func unregister(_ session: ClientSession) {
        eventLoop.assertInEventLoop()
        sessions[ObjectIdentifier(session)] = nil
        caughtUp(session)
        updateSentenceDemand()
    }

    /// A session went past its high-water mark: the sources that can wait are held back
    /// for it when it watches their reports or sentences (one behind on answers to its
    /// own requests, or on the time service's reports, has nothing a hold keeps) and they
    /// are not reading on after a hold that ran out. Returns whether they are. A hold
    /// ends when every session it is for has caught up, or after ``holdBackLimit``,
    /// whichever sessions joined it.
    func lags(_ session: ClientSession) -> Bool {
        eventLoop.assertInEventLoop()
        let settings = session.settings
        let watched = settings.device.map { devices[$0]?.canWait == true } ?? devices.values.contains { $0.canWait }
        guard settings.streamsReportsOrSentences, watched else { return false }
        if hold == nil {
            let now = eventLoop.now
            guard holdBackLimit > .zero, now >= nextHoldAllowed else { return false }
            let timer = eventLoop.assumeIsolated().scheduleTask(in: holdBackLimit) { [weak self] () -> Void in self?.holdRanOut() }
            hold = (now, timer)
            setPaused(true)
        }
        holdingSessions.insert(ObjectIdentifier(session))
        return true
    }

    /// A session lags no more (it read down to its low-water mark, or it left): once none
    /// that the hold is for lags, the sources read on.
    func caughtUp(_ session: ClientSession) {
        eventLoop.assertInEventLoop()
        if holdingSessions.remove(ObjectIdentifier(session)) != nil, holdingSessions.isEmpty { endHold(ranOut: false) }
        // After the hold's bookkeeping: what is sent here may make the session lag again.
        tellDevicesMissed(to: session)
    }

    /// Sends a session that caught up the DEVICE, as it is now, of each device whose
    /// notices it lost while it lagged, in the order of their paths; one it loses again
    /// (it lags again at once) is kept for the next time.
    private func tellDevicesMissed(to session: ClientSession) {
        let missed = session.devicesMissed
        session.devicesMissed.removeAll()
        for device in missed.sorted() where session.settings.wantsReports(of: device) {
            guard let info = devices[device]?.info else { continue }
            if !send(ByteBuffer(bytes: SessionReport.device(info, notice: true)), to: session) {
                session.devicesMissed.insert(device)
            }
        }
    }

    /// The hold lasted ``holdBackLimit``: the sources read on, and the sessions still
    /// lagging lose their reports until they read (logged once a minute at most).
    private func holdRanOut() {
        let laggards = holdingSessions.compactMap { sessions[$0] }
        holdingSessions.removeAll()
        for session in laggards { session.holdRanOut() }
        endHold(ranOut: true)
        guard let notLogged = holdsRanOutLog.admit(at: eventLoop.now) else { return }
        logger.warning(
            "clients lag: devices are no longer held back for them, and they lose reports until they read",
            metadata: notLogged.merging(["clients": "\(laggards.count)", "held": "\(holdBackLimit)"]) { $1 })
    }

    /// Lets the sources read; after a hold that ran out, for ``holdBackRestRatio`` times
    /// its length before the next. A hold that ended as its watchers caught up needs no
    /// rest: they read, and the sources go at their pace.
    private func endHold(ranOut: Bool) {
        guard let hold else { return }
        self.hold = nil
        hold.timer.cancel()
        let now = eventLoop.now
        if ranOut { nextHoldAllowed = now + (now - hold.began) * Self.holdBackRestRatio }
        setPaused(false)
    }

    private func setPaused(_ paused: Bool) {
        readingHold.set(holding: paused)
        for reader in pausableReaders.values { reader.setOption(.autoRead, value: !paused).whenFailure { _ in } }
    }

    /// A device read on this loop whose source can wait: it reads only while no session
    /// holds it back.
    func addPausableReader(_ channel: any Channel) {
        eventLoop.assertInEventLoop()
        let key = ObjectIdentifier(channel)
        pausableReaders[key] = channel
        if !holdingSessions.isEmpty { channel.setOption(.autoRead, value: false).whenFailure { _ in } }
        channel.closeFuture.whenComplete { _ in self.pausableReaders[key] = nil }
    }

    /// Whether `device` is one of the daemon's, as a WATCH may name it.
    func knows(device: String) -> Bool {
        eventLoop.assertInEventLoop()
        return devices[device] != nil
    }

    /// A session's WATCH settings changed.
    func settingsChanged() {
        eventLoop.assertInEventLoop()
        updateSentenceDemand()
    }

    private func updateSentenceDemand() {
        let watching = sessions.values.lazy.map(\.settings).filter(\.enable)
        sentenceDemand.set(
            sentences: nmeaDatagrams != nil || watching.contains { $0.nmea || $0.raw == 1 },
            bytes: watching.contains { $0.raw >= 2 })
    }

    /// NMEA 0183 out over UDP, when asked for: every sentence goes there too.
    private(set) var nmeaDatagrams: NMEADatagramSender?

    func send(sentencesTo sender: NMEADatagramSender) {
        eventLoop.assertInEventLoop()
        nmeaDatagrams = sender
        updateSentenceDemand()
    }

    func noteDropped() {
        eventLoop.assertInEventLoop()
        statistics.reportsDropped += 1
    }

    func noteRefused() {
        eventLoop.assertInEventLoop()
        statistics.requestsRefused += 1
    }

    /// Publishes one update of `device` to the sessions that want it.
    func publish(_ update: LocationUpdate, from device: String) {
        eventLoop.assertInEventLoop()
        let state = devices[device]
        // Reports of a source that can wait are held back for a lagging session, for a while.
        let canBeHeld = state?.canWait == true
        switch update {
        case .fix(let fix):
            if let state {
                state.fix = fix
                if let time = fix.time { state.info.cycle = state.cycle.record(time) }
                if fix.mode >= .twoDimensional { state.lastFixAt = .now() }
            }
            broadcastReport(update, of: device, content: .tpv(fix), canBeHeld: canBeHeld)
        case .sky(var sky):
            // Each SKY a watcher gets, and the one `?POLL` gives, is the whole view: a later
            // report of a cycle (its DOPs after its GSV groups, a u-blox epoch's end) that
            // leaves out what an earlier one said carries it again. gpsd 3.22's clients
            // take each SKY for the whole sky. (`gpsfix decode` writes it as gpsd's
            // regression reports have it, without.)
            if sky.satellitesReportedEarlier {
                if let earlier = state?.sky { sky.takeOmissions(from: earlier) }
                sky.satellitesReportedEarlier = false
            }
            state?.sky = sky
            broadcastReport(.sky(sky), of: device, content: .sky(sky), canBeHeld: canBeHeld)
        case .errorEstimate(let estimate):
            state?.estimate = estimate
            broadcastReport(update, of: device, content: nil, canBeHeld: canBeHeld)
        case .attitude:
            broadcastReport(update, of: device, content: nil, canBeHeld: canBeHeld)
        case .sentence(let line):
            nmeaDatagrams?.send(line)
            send(
                toSessionsThat: { $0.settings.wantsSentences(of: device) && $0.takes(sentence: line) }, canBeHeld: canBeHeld,
                making: { Self.sentenceBuffers(line) }
            ) { lines, session in session.isNMEAFeed ? lines.checksummed : lines.asRead }
        case .bytes(let chunk):
            send(toSessionsThat: { $0.settings.wantsBytes(of: device) }, canBeHeld: canBeHeld) { ByteBuffer(bytes: chunk) }
        case .rtcm3(let frame):
            corrections.forward(frame, from: device)
        case .counters(let counters):
            state?.counters = counters
        case .receiverTime, .nextPulse:
            break  // the time service's: it reports what it did with a sample (``publish(_:of:)``)
        case .device(let event):
            apply(event, to: device)
            guard let info = state?.info else { return }
            let report = SessionReport.device(info, notice: true)
            // As gpsd: to the JSON watchers of this device, never into a sentence stream.
            // Held for a lagging watcher as the device's other reports, so it comes before
            // them; one the watcher loses is told, as the device is then, once it has
            // caught up (``caughtUp(_:)``): a driver named or a device gone meanwhile is
            // not missed for good.
            let buffer = ByteBuffer(bytes: report)
            for session in sessions.values where session.settings.wantsReports(of: device) {
                if !send(buffer, to: session, canBeHeld: canBeHeld) { session.devicesMissed.insert(device) }
            }
            for subscriber in subscribers {
                subscriber.receive(PublishedReport(device: device, content: .device(info), json: report))
            }
        }
    }

    /// Sends a TOFF or PPS report of `device` to the sessions that asked for them.
    func publish(_ report: TimeReport, of device: String) {
        eventLoop.assertInEventLoop()
        // Encoded first for the subscribers, else only when a session wants it.
        let json = subscribers.isEmpty ? nil : GPSDReport.time(report, device: device)
        send(toSessionsThat: { $0.settings.wantsTimeReports(of: device) }) {
            ByteBuffer(bytes: json ?? GPSDReport.time(report, device: device))
        }
        guard let json else { return }
        for subscriber in subscribers { subscriber.receive(PublishedReport(device: device, content: .time(report), json: json)) }
    }

    private func identify(_ device: String, as receiver: ReceiverIdentity) {
        devices[device]?.info.driver = receiver.driver
        devices[device]?.info.subtype = receiver.subtype
        devices[device]?.info.subtype1 = receiver.subtype1
        devices[device]?.info.native = receiver.readsBinary
    }

    private func apply(_ event: DeviceEvent, to device: String) {
        switch event.kind {
        case .activated, .recovered, .resumed:
            // Opened again after being closed: a new activation, as gpsd's.
            let reopened = devices[device]?.info.closed == true
            devices[device]?.info.online = true
            devices[device]?.info.closed = false
            // Whatever the source (a port, a file, a gpsd's relayed sentences), the
            // protocol it speaks names the driver.
            identify(device, as: event.receiver ?? ReceiverIdentity(driver: "NMEA0183"))
            devices[device]?.info.line = event.line
            if reopened || devices[device]?.info.activated == nil { devices[device]?.info.activated = Self.now() }
            let what = switch event.kind {
            case .activated: "activated"
            case .recovered: "recovered"
            default: "sending again"
            }
            logger.info("device \(what)", metadata: ["device": "\(device)"])
        case .identified:
            if let receiver = event.receiver { identify(device, as: receiver) }
            if let line = event.line { devices[device]?.info.line = line }
            logger.info(
                "device identified",
                metadata: ["device": "\(device)", "driver": "\(event.receiver?.driver ?? "")",
                           "subtype": "\(event.receiver?.subtype ?? "")"])
        case .silent:
            devices[device]?.info.online = false
            logger.warning("device silent: fix decayed to no fix", metadata: ["device": "\(device)"])
        case .ended:
            devices[device]?.info.online = false
            devices[device]?.info.closed = true
            logger.info("device's data ended: fix decayed to no fix", metadata: ["device": "\(device)"])
        case .lost(let reason):
            devices[device]?.info.online = false
            devices[device]?.info.closed = true
            logger.warning("device lost, reopening", metadata: ["device": "\(device)", "reason": "\(reason)"])
        }
    }

    /// Encodes the report of `update` only when a session or a subscriber wants it (POLL
    /// encodes from the stored values), once for all of them, into ``reportBytes``; its
    /// bytes are then copied into the one buffer the sessions share. Subscribers take TPV
    /// and SKY (`content`), not GST or ATT (`nil`).
    private func broadcastReport(
        _ update: LocationUpdate, of device: String, content: @autoclosure () -> PublishedReport.Content?, canBeHeld: Bool
    ) {
        let published = subscribers.isEmpty ? nil : content()
        // Each copy is taken before anything is sent: a send runs the sessions' handlers,
        // and whatever they set off may encode another report over these bytes. Encoded
        // for the subscribers, the report is not encoded again for the sessions.
        var json: [UInt8]?
        if published != nil {
            encodeReport(update, of: device)
            json = reportBytes.withUnsafeBytes { [UInt8]($0) }
        }
        send(toSessionsThat: { $0.settings.wantsReports(of: device) }, canBeHeld: canBeHeld) {
            if json == nil { encodeReport(update, of: device) }
            return reportBytes.withUnsafeBytes { ByteBuffer(bytes: $0) }
        }
        guard let published, let json else { return }
        for subscriber in subscribers { subscriber.receive(PublishedReport(device: device, content: published, json: json)) }
    }

    private func encodeReport(_ update: LocationUpdate, of device: String) {
        reportBytes.removeAll()
        GPSDReport.encode(update, device: device, into: &reportBytes)
    }

    /// Sends the buffer `make` gives to every session that `wants` it, made once, for the
    /// first of them: nothing is made, and no list of the sessions, for what none wants.
    private func send(toSessionsThat wants: (ClientSession) -> Bool, canBeHeld: Bool = false, _ make: () -> ByteBuffer) {
        send(toSessionsThat: wants, canBeHeld: canBeHeld, making: make) { buffer, _ in buffer }
    }

    /// Sends to every session that `wants` it the buffer `pick` chooses for it from what
    /// `make` gives, made once, for the first of them (a sentence as read, and checksummed
    /// for NMEA out).
    private func send<Made>(
        toSessionsThat wants: (ClientSession) -> Bool, canBeHeld: Bool, making make: () -> Made,
        _ pick: (Made, ClientSession) -> ByteBuffer
    ) {
        var made: Made?
        for session in sessions.values where wants(session) {
            let shared = made ?? make()
            made = shared
            send(pick(shared, session), to: session, canBeHeld: canBeHeld)
        }
    }

    /// A sentence for gpsd's `nmea` watchers, as read, and for NMEA 0183 out, which
    /// always carries a checksum.
    private static func sentenceBuffers(_ line: [UInt8]) -> (asRead: ByteBuffer, checksummed: ByteBuffer) {
        var buffer = ByteBufferAllocator().buffer(capacity: line.count + 2)
        buffer.writeBytes(line)
        buffer.writeBytes([13, 10])
        return (buffer, NMEAOutput.hasChecksum(line) ? buffer : NMEAOutput.line(line))
    }

    /// Queues `buffer` for `session`, to be flushed once the loop has run the tasks
    /// queued now: the reports one chunk of a device completes (TPV, SKY, GST) then
    /// leave in one write per client instead of one each, and no later than that.
    /// A lagging session gets it only when its source is held back for it (`canBeHeld`).
    /// Returns whether the session got it.
    @discardableResult
    func send(_ buffer: ByteBuffer, to session: ClientSession, canBeHeld: Bool = false) -> Bool {
        eventLoop.assertInEventLoop()
        let alreadyQueued = session.awaitsFlush
        guard session.write(buffer, canBeHeldFor: canBeHeld) else { return false }
        statistics.reportsSent += 1
        if !alreadyQueued { unflushed.append(session) }
        guard !flushScheduled else { return true }
        flushScheduled = true
        eventLoop.execute { self.flushQueuedReports() }
        return true
    }

    private func flushQueuedReports() {
        eventLoop.assertInEventLoop()
        flushScheduled = false
        // A flush can send more (a client that catches up within it is told what it missed):
        // that goes to `unflushed`, emptied here first, and to the flush it schedules.
        swap(&unflushed, &flushing)
        for session in flushing where session.awaitsFlush { session.flush() }
        flushing.removeAll(keepingCapacity: true)
    }

    /// The clients' counters and every device's state, for the metrics.
    var snapshot: ServerSnapshot {
        eventLoop.assertInEventLoop()
        let now = NIODeadline.now()
        let clients = ServerSnapshot.Clients(
            connected: sessions.count, accepted: statistics.clientsAccepted, cutOff: sessionTable.counts.cutOff,
            reportsSent: statistics.reportsSent, reportsDropped: statistics.reportsDropped,
            requestsRefused: statistics.requestsRefused, connections: sessionTable.count,
            idleClosed: sessionTable.counts.idleClosed, evicted: sessionTable.counts.evicted,
            refusedAtCap: sessionTable.counts.refused, network: sessionTable.connections(on: .network),
            local: sessionTable.connections(on: .local))
        let states = deviceOrder.compactMap { path in devices[path] }
        return ServerSnapshot(clients: clients, devices: states.map { state in
            ServerSnapshot.Device(
                path: state.info.path, online: state.info.online, counters: state.counters, mode: state.fix?.mode,
                satellitesUsed: state.sky?.usedCount, satellitesVisible: state.sky?.visibleCount,
                sinceLastFix: state.lastFixAt.map { Duration.nanoseconds((now - $0).nanoseconds) }, status: state.fix?.status)
        }, caster: corrections.hasCaster ? corrections.currentStatistics : nil)
    }

    // MARK: Requests

    func devicesReport() -> [UInt8] {
        eventLoop.assertInEventLoop()
        return SessionReport.devices(deviceOrder.compactMap { devices[$0]?.info })
    }

    /// The answer to `?DEVICE`: the DEVICE of the device it names or, naming none, one for
    /// every device, as gpsd answers.
    func deviceReport(for request: DeviceRequest?) -> [UInt8] {
        eventLoop.assertInEventLoop()
        let named = request?.path.map { path in devices[path].map { [$0.info] } ?? [] } ?? deviceOrder.compactMap { devices[$0]?.info }
        if let request, named.contains(where: request.changes) {
            noteRefused()
            return SessionReport.error("Changing device settings is not supported by gpsfixd; restart it with --speed.")
        }
        // Any client of the port could otherwise change the receiver's speed or protocol,
        // or write its flash, behind the keeper's back: `gpsfix ubx` takes turns with it.
        if request?.writesToReceiver == true {
            noteRefused()
            return SessionReport.error("Writing hexdata to the receiver is not supported by gpsfixd; use gpsfix ubx.")
        }
        guard let path = request?.path else {
            guard !deviceOrder.isEmpty else { return SessionReport.error("Can't open a device: none is configured.") }
            return deviceOrder.compactMap { devices[$0]?.info }.flatMap { SessionReport.device($0) }
        }
        guard let device = devices[path] else { return SessionReport.error("Can't open \(path).") }
        return SessionReport.device(device.info)
    }

    /// POLL answers with the latest reports of every device, or of the one the session's
    /// WATCH named, watching or not (gpsd answers `active:0` to a session that is not
    /// itself watching, which helps no client), at the time it answers, as gpsd does: a
    /// client compares the reports' times with it to see how old they are.
    func pollReport(device: String?) -> [UInt8] {
        eventLoop.assertInEventLoop()
        let paths = device.map { [$0] } ?? deviceOrder
        let states = paths.compactMap { path in devices[path].map { (path, $0) } }
        let fixes = states.compactMap { path, state in state.fix.map { (path, $0) } }
        return SessionReport.poll(
            time: Self.currentTime(), active: states.filter { $0.1.info.online }.count, fixes: fixes,
            estimates: states.compactMap { path, state in state.estimate.map { (path, $0) } },
            skies: states.compactMap { path, state in state.sky.map { (path, $0) } })
    }

    /// The current UTC time as gpsd writes it, for `activated`.
    static func now() -> String { currentTime().iso8601 }

    /// The current UTC time, to the millisecond.
    static func currentTime() -> GPSTime {
        let now = WallTime.systemNow()
        return GPSTime(millisecondsSince1970: now.seconds * 1000 + now.nanoseconds / 1_000_000)
    }
}
