import NMEA

/// Builds the sky view from GSV groups and GSA used-lists.
///
/// A receiver lists the satellites in view as groups of GSV sentences, one group per
/// constellation and (NMEA 4.11) per signal, sent in a fixed order as one burst (every
/// cycle, or every few). A group replaces the previous list of its key when its last
/// sentence arrives; a group the new burst passes over is dropped as soon as a later
/// one arrives, so a constellation the receiver stops listing leaves the view at once,
/// as with gpsd, which starts a new view with each burst. A burst may span cycles: until
/// the new burst reaches a group's place, the group stays in the view. GSA sentences say
/// which satellites the solution used; several may come in one cycle (one per system),
/// and they accumulate.
///
/// Buffers are reused from cycle to cycle, so tracking allocates nothing once warm as
/// long as the consumer has let go of the previous sky view.
///
/// What it holds is bounded, whatever the stream: a list is refused when, with the other
/// groups, it would hold more than ``SkyView/maximumSatellites``, and so is a group past
/// ``maximumGroups``. The rest of a refused GSV group is dropped as that of a group whose
/// start was missed; a refused whole list changes nothing.
struct SatelliteTracker {
    /// The most groups held. NMEA 4.11 lists a group for each system and signal, and a
    /// receiver that tracks every signal of every system sends a few dozen.
    static let maximumGroups = 48

    private struct GroupKey: Hashable {
        var talker: Talker?
        var signal: Int?
        /// The system id of a Quectel `PQGSV`, whose BeiDou and QZSS groups share a talker.
        var system: Int?
        /// A maker's one-sentence list of every satellite (u-blox PUBX,03, Ashtech
        /// PASHR,SAT) rather than a GSV group.
        var isWholeList = false
    }

    private struct Group {
        var key: GroupKey
        var satellites: [Satellite]
        /// The burst in which the group was last completed, and its place in that burst.
        var burst: Int
        var place: Int
    }

    /// In the order of their places: this burst's groups, then the last burst's that this
    /// one has not yet reached.
    private var groups: [Group] = []
    /// The satellite buffers of dropped groups, reused so that tracking stays free of allocations.
    private var spareBuffers: [[Satellite]] = []
    /// The burst being received (a group completed twice starts a new one) and how many
    /// groups it has completed.
    private var burst = 0
    private var groupsInBurst = 0
    private var partial: [Satellite] = []
    private var partialKey: GroupKey?
    /// How many satellites the group being received may list: what the other groups leave
    /// of a view.
    private var partialRoom = 0
    private var nextPartialNumber = 1
    /// Two buffers for the views handed out, used in turn: a cycle may hand out a second
    /// view while the first is still held (a GSA after the GSV groups that also ends the
    /// cycle), and neither then has to be copied.
    private var view: [Satellite] = []
    private var previousView: [Satellite] = []
    /// gpsd PRNs the current cycle's GSAs (or a maker's whole list) mark used.
    private var used = PRNSet()
    private var usedListBegunThisCycle = false
    /// The systems whose satellites this cycle's GSAs marked used, a bit per `GNSS` raw value.
    private var claimedSystems: UInt16 = 0

    /// Whether a GSV group completed or a GSA arrived since the last sky view.
    private(set) var hasNews = false
    /// Whether a group completed this cycle: otherwise the view is one held from before.
    private(set) var viewRenewedThisCycle = false

    /// How many satellites this cycle's GSAs listed as used (none: no GSA this cycle).
    var listedUsedCount: Int { used.count }

    /// Adds one GSV sentence; `false` when it is refused (see the bounds above).
    ///
    /// A group is keyed by its talker and the signal id of its first sentence: some
    /// receivers (Quectel LC79D) put the signal id on the group's last sentence only,
    /// so each satellite takes the signal id of the sentence that lists it.
    mutating func add(_ gsv: GSV) -> Bool {
        let number = gsv.messageNumber ?? 1
        if number == 1 {
            begin(GroupKey(talker: gsv.talker, signal: gsv.signalID, system: gsv.systemID))
        } else if partialKey?.talker != gsv.talker || number != nextPartialNumber {
            // A sentence of a group whose start was missed, or one out of order: drop the group.
            dropPartial()
            return true
        }
        guard partialKey != nil else { return true }
        let system = gsv.systemID.flatMap(GNSS.init(nmeaSystemID:)) ?? gsv.talker.flatMap(GNSS.init(talker:))
        for satellite in gsv.satellites {
            guard let identity = SatelliteIdentity(nmeaID: Int(satellite.id), talker: gsv.talker, system: system)
            else { continue }
            // A position needs both angles; gpsd reports neither when one is missing.
            let hasPosition = satellite.elevation != nil && satellite.azimuth != nil
            let listed = append(
                Satellite(
                    identity: identity, signal: Self.gpsdSignal(gsv.signalID, of: identity.gnss),
                    elevation: hasPosition ? satellite.elevation.map(Double.init) : nil,
                    azimuth: hasPosition ? satellite.azimuth.map(Double.init) : nil,
                    snr: satellite.snr.map(Double.init)))
            guard listed else { return false }
        }
        nextPartialNumber = number + 1
        guard gsv.isLast else { return true }
        return completePartial()
    }

    /// Begins the list of the group of `key`, with the room the other groups leave it.
    private mutating func begin(_ key: GroupKey) {
        partial.removeAll(keepingCapacity: true)
        partialKey = key
        partialRoom = SkyView.maximumSatellites
        for group in groups where group.key != key { partialRoom -= group.satellites.count }
    }

    /// Lists `satellite` in the group being received; `false` when there is no room for
    /// it, and the group is dropped.
    private mutating func append(_ satellite: Satellite) -> Bool {
        guard partial.count < partialRoom else {
            dropPartial()
            return false
        }
        partial.append(satellite)
        return true
    }

    /// The group being received is complete: it replaces its key's, unless it would be a
    /// group past ``maximumGroups``.
    private mutating func completePartial() -> Bool {
        guard let key = partialKey else { return true }
        guard groups.count < Self.maximumGroups || groups.contains(where: { $0.key == key }) else {
            dropPartial()
            return false
        }
        partialKey = nil
        completeGroup(key)
        return true
    }

    /// Forgets the group being received.
    private mutating func dropPartial() {
        partial.removeAll(keepingCapacity: true)
        partialKey = nil
    }

    /// The satellites gathered in `partial` replace the group of `key`.
    ///
    /// A key already completed in this burst starts the next one, which forgets the
    /// groups the burst before it did not renew. The group renewed goes to its new place,
    /// and groups of the last burst that came before it there were passed over: dropped.
    private mutating func completeGroup(_ key: GroupKey) {
        var index = groups.firstIndex { $0.key == key }
        if let found = index, groups[found].burst == burst {
            burst += 1
            groupsInBurst = 0
            let lastBurst = burst - 1
            dropGroups { $0.burst < lastBurst }
            index = groups.firstIndex { $0.key == key }
        }
        var group: Group
        if let found = index {
            group = groups.remove(at: found)
            let (current, passedPlace) = (burst, group.place)
            dropGroups { $0.burst < current && $0.place < passedPlace }
        } else {
            group = Group(key: key, satellites: spareBuffers.popLast() ?? [], burst: burst, place: 0)
        }
        swap(&group.satellites, &partial)
        group.burst = burst
        group.place = groupsInBurst
        // This burst's groups come first, in its order, then the last burst's still standing.
        groups.insert(group, at: groupsInBurst)
        groupsInBurst += 1
        partial.removeAll(keepingCapacity: true)
        hasNews = true
        viewRenewedThisCycle = true
    }

    /// Drops the groups `shouldDrop` picks, keeping their buffers for the groups to come.
    private mutating func dropGroups(where shouldDrop: (Group) -> Bool) {
        var index = groups.count
        while index > 0 {
            index -= 1
            guard shouldDrop(groups[index]) else { continue }
            var buffer = groups.remove(at: index).satellites
            buffer.removeAll(keepingCapacity: true)
            spareBuffers.append(buffer)
        }
    }

    /// Adds u-blox's PUBX,03, a complete list of the satellites tracked with their used
    /// flags (status `U`), in one sentence: it replaces the previous one as a GSV group
    /// does. Its ids are NMEA's, except SBAS, numbered by PRN (120-158).
    mutating func add(_ pubx: PUBXSatellites) -> Bool {
        guard beginWholeList(listing: pubx.count) else { return false }
        for index in 0..<pubx.count {
            guard let satellite = try? pubx.satellite(at: index) else { continue }
            let id = (120...158).contains(satellite.id) ? satellite.id - 87 : satellite.id
            guard let identity = SatelliteIdentity(nmeaID: id, talker: nil) else { continue }
            appendToWholeList(
                identity, elevation: satellite.elevation, azimuth: satellite.azimuth, snr: satellite.snr,
                used: satellite.status == UInt8(ascii: "U"))
        }
        return completePartial()
    }

    /// Adds Ashtech's PASHR,SAT, every satellite locked with its used flag, in one
    /// sentence: like PUBX,03 it replaces the previous list as a GSV group does. Its
    /// numbers are GPS PRNs (SBAS 33-64 as NMEA numbers them).
    mutating func add(_ pashr: PASHRSatellites) -> Bool {
        guard beginWholeList(listing: pashr.count) else { return false }
        for index in 0..<pashr.count {
            guard let satellite = try? pashr.satellite(at: index),
                let identity = SatelliteIdentity(nmeaID: satellite.prn, talker: nil)
            else { continue }
            appendToWholeList(
                identity, elevation: satellite.elevation, azimuth: satellite.azimuth, snr: satellite.snr,
                used: satellite.used)
        }
        return completePartial()
    }

    /// Begins a maker's whole list of `count` satellites, its used flags to replace those
    /// of earlier cycles; `false` when the other groups leave it no room, and nothing of
    /// it is taken.
    private mutating func beginWholeList(listing count: Int) -> Bool {
        begin(GroupKey(isWholeList: true))
        guard count <= partialRoom else {
            dropPartial()
            return false
        }
        beginUsedListOfCycle()
        return true
    }

    /// The first used-list of a cycle (a GSA's or a maker's whole list) replaces the
    /// previous cycle's; later ones of the same cycle add to it.
    private mutating func beginUsedListOfCycle() {
        guard !usedListBegunThisCycle else { return }
        used.removeAll()
        claimedSystems = 0
        usedListBegunThisCycle = true
    }

    /// One satellite of a maker's whole list, in the room ``beginWholeList(listing:)``
    /// found. A signal of 0 is none: the makers write 0 for a satellite they do not track.
    private mutating func appendToWholeList(
        _ identity: SatelliteIdentity, elevation: NMEADecimal?, azimuth: NMEADecimal?, snr: NMEADecimal?, used isUsed: Bool
    ) {
        let hasPosition = elevation != nil && azimuth != nil
        partial.append(
            Satellite(
                identity: identity, elevation: hasPosition ? elevation?.doubleValue : nil,
                azimuth: hasPosition ? azimuth?.doubleValue : nil,
                snr: snr.map(\.doubleValue).flatMap { $0 > 0 ? $0 : nil }))
        if isUsed { used.insert(identity.prn) }
    }

    /// Adds one GSA sentence's used-list.
    ///
    /// A `GN` GSA without a system id (NMEA 4.0 multi-GNSS receivers send one per system)
    /// does not say whose satellites it lists, and BeiDou or Galileo numbered 1-37 look
    /// like GPS. Its list goes to the system in which every satellite it names is in view,
    /// passing over a system an earlier GSA of the cycle took; a list that matches no
    /// system's view is read by NMEA's number ranges, unless that system is taken: another
    /// system's satellites are never marked used on a guess.
    mutating func add(_ gsa: GSA) {
        beginUsedListOfCycle()
        var system = gsa.systemID.flatMap(GNSS.init(nmeaSystemID:))
        if system == nil, gsa.talker == .multiGNSS, !gsa.satellites.isEmpty {
            guard let resolved = systemListed(by: gsa) else { return }
            system = resolved
        }
        for id in gsa.satellites {
            guard let identity = SatelliteIdentity(nmeaID: Int(id), talker: gsa.talker, system: system),
                used.insert(identity.prn)
            else { continue }
            claimedSystems |= 1 << identity.gnss.rawValue
        }
        hasNews = true
    }

    /// The systems a `GN` GSA without system id may speak of: first NMEA's number ranges
    /// (GPS, SBAS, GLONASS 65-96), then the systems receivers number from 1.
    private static let candidateSystems: [GNSS?] = [nil, .beidou, .galileo, .qzss, .glonass]

    /// The system whose satellites a `GN` GSA without system id lists (see ``add(_:)``);
    /// `nil` when it cannot be told without marking a taken system's satellites.
    private func systemListed(by gsa: GSA) -> GNSS? {
        var matchedTakenSystem = false
        for candidate in Self.candidateSystems {
            var listed: GNSS?
            for id in gsa.satellites {
                guard let identity = SatelliteIdentity(nmeaID: Int(id), talker: nil, system: candidate),
                    isInView(identity.prn)
                else {
                    listed = nil
                    break
                }
                listed = identity.gnss
            }
            guard let listed else { continue }
            if claimedSystems & (1 << listed.rawValue) == 0 { return candidate ?? listed }
            matchedTakenSystem = true
        }
        // In no free system's view (its GSV not heard yet): NMEA's number ranges, unless
        // that system is taken or another system's view matched.
        guard !matchedTakenSystem, let byRange = SatelliteIdentity(nmeaID: Int(gsa.satellites[0]), talker: nil)?.gnss,
            claimedSystems & (1 << byRange.rawValue) == 0
        else { return nil }
        return byRange
    }

    /// Whether a satellite with gpsd PRN `prn` is in the held view.
    private func isInView(_ prn: Int) -> Bool {
        groups.contains { $0.satellites.contains { $0.identity.prn == prn } }
    }

    /// The satellites in view with their used flags, and marks the news as taken.
    ///
    /// As gpsd reports it, a satellite counts as used when a GSA listed it and it has a
    /// signal (a satellite listed but not heard on a signal is not used on that signal).
    mutating func takeView() -> [Satellite] {
        hasNews = false
        swap(&view, &previousView)
        view.removeAll(keepingCapacity: true)
        for group in groups {
            for var satellite in group.satellites {
                satellite.used = satellite.snr != nil && used.contains(satellite.identity.prn)
                view.append(satellite)
            }
        }
        return view
    }

    /// Forgets every group and used flag: the receiver has not renewed them for too long.
    mutating func forget() {
        dropGroups { _ in true }
        burst += 1
        groupsInBurst = 0
        used.removeAll()
    }

    /// Starts a new cycle: the next GSA replaces the used-list instead of adding to it.
    mutating func beginCycle() {
        usedListBegunThisCycle = false
        viewRenewedThisCycle = false
    }

    /// NMEA 4.11 signal ids mapped to the u-blox numbering gpsd reports as `sigid`;
    /// `nil` for the primary signal (which gpsd leaves out) and for unknown ones.
    static func gpsdSignal(_ nmeaSignal: Int?, of system: GNSS) -> Int? {
        switch (system, nmeaSignal) {
        case (.gps, 5?), (.sbas, 5?): 4  // L2 CM
        case (.gps, 6?), (.sbas, 6?): 3  // L2 CL
        case (.gps, 7?), (.sbas, 7?): 6  // L5 I
        case (.gps, 8?), (.sbas, 8?): 7  // L5 Q
        case (.glonass, 3?): 2  // L2 OF
        case (.galileo, 1?): 3  // E5a
        case (.galileo, 2?): 5  // E5b
        case (.galileo, 7?): 4  // E1, as gpsd numbers it
        case (.beidou, 3?): 5  // B1C
        case (.beidou, 5?): 7  // B2a
        case (.qzss, 5?): 4  // L2 CM
        case (.qzss, 6?): 5  // L2 CL
        case (.qzss, 8?): 9  // L5 Q
        default: nil
        }
    }
}

/// A set of gpsd PRNs (0-1023) as a bitmap: no hashing, and no allocation once made.
private struct PRNSet {
    private var words = [UInt64](repeating: 0, count: 16)

    /// Adds `prn`; `false` when it is out of the set's range (and so not added).
    @discardableResult
    mutating func insert(_ prn: Int) -> Bool {
        guard prn >= 0, prn < words.count * 64 else { return false }
        words[prn >> 6] |= 1 << UInt64(prn & 63)
        return true
    }

    func contains(_ prn: Int) -> Bool {
        prn >= 0 && prn < words.count * 64 && words[prn >> 6] & (1 << UInt64(prn & 63)) != 0
    }

    mutating func removeAll() {
        for index in words.indices { words[index] = 0 }
    }

    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }
}
