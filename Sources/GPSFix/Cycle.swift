import NMEA

/// The values of one receiver cycle as its sentences arrive, before they become a fix.
///
/// Each sentence type says something different about the fix's mode: GSA states it,
/// GGA implies it from its quality and altitude, RMC, GLL and GNS from their status
/// or mode letters. ``fix()`` settles it in that order of authority.
struct Cycle {
    var time: NMEATime?
    /// Whether any sentence contributed (a cycle of nothing is not emitted at the end).
    var sawData = false

    private var gsaMode: Int?
    /// A GSA of this cycle said which satellites are used.
    private(set) var listedUsedSatellites = false
    private var ggaQuality: Int?
    private var ggaHasAltitude = false
    private var gnsMode: ModeIndicator?
    /// The satellites a GNS counts: with an altitude, more than three make it 3D.
    private var gnsSatellitesUsed: Int?
    /// The mode a maker's own sentence states (u-blox PUBX,00, Garmin PGRMF, Magellan
    /// PMGNST, Ashtech PASHR,POS), the strongest of the cycle's.
    private var statedMode: FixMode?
    /// The status a maker's own position sentence states (u-blox PUBX,00's navigation
    /// status, Ashtech PASHR,POS's position type).
    private var statedStatus: FixStatus?
    private var positionValid: Bool?
    /// A valid GLL arrived: with an altitude from the cycle's GGA it means 3D (gpsd's rule).
    private var gllValid = false
    private var modeIndicator: ModeIndicator?

    private var latitude: Double?
    private var longitude: Double?
    private var altitudeMSL: Double?
    /// Above the ellipsoid, as u-blox's PUBX,00 gives it.
    private var altitudeHAE: Double?
    private var geoidSeparation: Double?
    /// Metres per second upwards, when the receiver says (PUBX,00).
    private var climb: Double?
    /// The velocity the receiver measured (PSTI,030).
    private var velocity: NEDVelocity?
    private var speed: Double?
    private var track: Double?
    private var magneticVariation: Double?
    private var horizontalError: Double?
    private var verticalError: Double?
    private var sphericalError: Double?
    private var longitudeError: Double?
    private var latitudeError: Double?
    private var speedError: Double?
    private var trackError: Double?
    /// The age and station of the corrections applied, when the receiver gives both.
    private var differential: (age: Double, station: Int)?

    var hdop: Double?
    private var ggaGaveHDOP = false
    var vdop: Double?
    var pdop: Double?
    var tdop: Double?
    var satellitesUsed: Int?
    var hasSkyData = false
    var errorEstimate: ErrorEstimate?
    /// Degrees from true north, from HDT or THS.
    var heading: Double?

    /// Knots to metres per second, as gpsd converts them.
    static let metresPerSecondPerKnot = 0.514_444_44

    mutating func merge(_ gga: GGA) {
        sawData = true
        ggaQuality = gga.quality
        // A GNSS fix from no satellites is no fix (dead reckoning, quality 6, excepted),
        // but its position and altitude stand for the cycle's other sentences, as in gpsd.
        if gga.satellitesUsed == 0, let quality = gga.quality, quality != 6 { ggaQuality = 0 }
        // A quality without a position (receivers reacquiring may send one) is no fix.
        if gga.quality != nil, gga.latitude == nil || gga.longitude == nil { ggaQuality = 0 }
        if let quality = gga.quality, quality > 0 {
            setPosition(gga.latitude, gga.longitude)
            altitudeMSL = gga.altitude?.doubleValue ?? altitudeMSL
            ggaHasAltitude = gga.altitude != nil
            geoidSeparation = gga.geoidSeparation?.doubleValue ?? geoidSeparation
            setDifferential(age: gga.differentialAge, station: gga.differentialStation)
        }
        // GGA's HDOP is the one of the position it reports: it wins over a GSA's.
        if let hdop = Self.dilution(gga.hdop) {
            self.hdop = hdop
            ggaGaveHDOP = true
            hasSkyData = true
        }
        satellitesUsed = gga.satellitesUsed
    }

    /// A differential age is reported with its station, as gpsd does: either alone says
    /// nothing a client can use.
    private mutating func setDifferential(age: NMEADecimal?, station: Int?) {
        if let age, let station { differential = (age.doubleValue, station) }
    }

    mutating func merge(_ rmc: RMC) {
        sawData = true
        if rmc.isValid == true, rmc.mode != .notValid {
            positionValid = true
            setPosition(rmc.latitude, rmc.longitude)
            if let speed = rmc.speedKnots { self.speed = speed.doubleValue * Self.metresPerSecondPerKnot }
            track = rmc.track?.doubleValue ?? track
            magneticVariation = rmc.magneticVariation?.doubleValue ?? magneticVariation
        } else {
            saysNoPosition()
        }
        modeIndicator = rmc.mode ?? modeIndicator
    }

    mutating func merge(_ gll: GLL) {
        sawData = true
        if gll.isValid == true, gll.mode != .notValid {
            positionValid = true
            gllValid = true
            setPosition(gll.latitude, gll.longitude)
        } else {
            saysNoPosition()
        }
        modeIndicator = gll.mode ?? modeIndicator
    }

    mutating func merge(_ gns: GNS) {
        sawData = true
        gnsMode = gns.mode
        gnsSatellitesUsed = gns.satellitesUsed
        if let mode = gns.mode, mode != .notValid {
            setPosition(gns.latitude, gns.longitude)
            altitudeMSL = gns.altitude?.doubleValue ?? altitudeMSL
            geoidSeparation = gns.geoidSeparation?.doubleValue ?? geoidSeparation
            setDifferential(age: gns.differentialAge, station: gns.differentialStation)
        }
        if let hdop = Self.dilution(gns.hdop) { self.hdop = self.hdop ?? hdop }
    }

    mutating func merge(_ gsa: GSA) {
        sawData = true
        hasSkyData = true
        if let fixType = gsa.fixType, (1...3).contains(fixType) { gsaMode = max(gsaMode ?? 0, fixType) }
        listedUsedSatellites = true
        // Several GSAs in a cycle (one per system) repeat the same DOPs; the last one stands.
        if let pdop = Self.dilution(gsa.pdop) { self.pdop = pdop }
        if let hdop = Self.dilution(gsa.hdop), !ggaGaveHDOP { self.hdop = hdop }
        if let vdop = Self.dilution(gsa.vdop) { self.vdop = vdop }
    }

    mutating func merge(_ vtg: VTG) {
        sawData = true
        guard vtg.mode != .notValid else { return }
        if let knots = vtg.speedKnots {
            speed = knots.doubleValue * Self.metresPerSecondPerKnot
        } else if let kilometresPerHour = vtg.speedKilometresPerHour {
            speed = kilometresPerHour.doubleValue / 3.6
        }
        track = vtg.trackTrue?.doubleValue ?? track
    }

    mutating func merge(_ gst: GST) {
        sawData = true
        var estimate = ErrorEstimate()
        estimate.rangeRMS = gst.rangeRMS?.doubleValue
        estimate.semiMajor = gst.semiMajor?.doubleValue
        estimate.semiMinor = gst.semiMinor?.doubleValue
        estimate.orientation = gst.orientation?.doubleValue
        estimate.latitudeError = gst.latitudeError?.doubleValue
        estimate.longitudeError = gst.longitudeError?.doubleValue
        estimate.altitudeError = gst.altitudeError?.doubleValue
        errorEstimate = estimate
    }

    mutating func merge(_ pgrme: PGRME) {
        sawData = true
        horizontalError = pgrme.horizontalError?.doubleValue
        verticalError = pgrme.verticalError?.doubleValue
        sphericalError = pgrme.sphericalError?.doubleValue
    }

    /// Garmin's altitude sentence comes after GGA and, as in gpsd, its altitude stands
    /// when it comes from a 3D fix.
    mutating func merge(_ pgrmz: PGRMZ) {
        sawData = true
        if pgrmz.fixDimension == 3, let altitude = pgrmz.altitudeMetres { altitudeMSL = altitude }
    }

    /// Garmin's fix data sentence, after the cycle's others: an automatic fix of type 1 or
    /// 2 gives a 2D or 3D fix with its position, speed (km/h) and course; its PDOP and
    /// TDOP, later than the GSA's, stand (as in gpsd).
    mutating func merge(_ pgrmf: PGRMF) {
        sawData = true
        let pdop = Self.dilution(pgrmf.pdop)
        let tdop = Self.dilution(pgrmf.tdop)
        if let pdop { self.pdop = pdop }
        if let tdop { self.tdop = tdop }
        hasSkyData = hasSkyData || pdop != nil || tdop != nil
        guard pgrmf.isAutomatic == true, let fixType = pgrmf.fixType else { return }
        switch fixType {
        case 1, 2:
            state(fixType == 2 ? .threeDimensional : .twoDimensional)
            positionValid = true
            setPosition(pgrmf.latitude, pgrmf.longitude)
            if let kilometresPerHour = pgrmf.speedKilometresPerHour { speed = kilometresPerHour.doubleValue / 3.6 }
            track = pgrmf.course?.doubleValue ?? track
        default:
            state(.noFix)
        }
    }

    /// Magellan's status sentence states the mode: 2 or 3 with `T`; anything else is no
    /// fix, which does not outweigh another sentence's fix.
    mutating func merge(_ pmgnst: PMGNST) {
        sawData = true
        let stated: FixMode = switch (pmgnst.hasFix, pmgnst.mode) {
        case (true?, 3?): .threeDimensional
        case (true?, 2?): .twoDimensional
        default: .noFix
        }
        state(stated)
    }

    /// SiRF's estimated errors, when valid: `eph`, `epv`, `eps` and `epd`, and an HDOP that
    /// gives way to the GGA's, as a GSA's does.
    mutating func merge(_ epe: PSRFEPE) {
        guard epe.isValid == true else { return }
        sawData = true
        if let hdop = Self.dilution(epe.hdop), !ggaGaveHDOP {
            self.hdop = hdop
            hasSkyData = true
        }
        horizontalError = epe.horizontalError?.doubleValue ?? horizontalError
        verticalError = epe.verticalError?.doubleValue ?? verticalError
        speedError = epe.speedError?.doubleValue
        trackError = epe.headingError?.doubleValue
    }

    /// u-blox's position sentence. Its navigation status states the mode: G2/D2 2D and
    /// G3/D3 3D (D: differential), DR dead reckoning (2D), RK GNSS with dead reckoning
    /// (3D); NF (no fix) and TT (time only) carry no position. Its altitude is above the
    /// ellipsoid, its vertical velocity positive downwards.
    mutating func merge(_ pubx: PUBXPosition) {
        sawData = true
        let hdop = Self.dilution(pubx.hdop)
        let vdop = Self.dilution(pubx.vdop)
        let tdop = Self.dilution(pubx.tdop)
        if let hdop { self.hdop = self.hdop ?? hdop }
        if let vdop { self.vdop = vdop }
        if let tdop { self.tdop = tdop }
        hasSkyData = hasSkyData || hdop != nil || vdop != nil || tdop != nil
        let status = pubx.navigationStatus.map { (Character(Unicode.Scalar($0[0])), Character(Unicode.Scalar($0[1]))) }
        let pubxMode: FixMode
        switch status {
        case ("G", "2")?, ("D", "2")?, ("D", "R")?: pubxMode = .twoDimensional
        case ("G", "3")?, ("D", "3")?, ("R", "K")?: pubxMode = .threeDimensional
        default:
            // NF or TT: no position.
            saysNoPosition()
            return
        }
        state(pubxMode)
        switch status {
        case ("D", "2")?, ("D", "3")?: statedStatus = .differential
        case ("D", "R")?: statedStatus = .deadReckoning
        case ("R", "K")?: statedStatus = .gnssWithDeadReckoning
        default: statedStatus = .gps
        }
        positionValid = true
        setPosition(pubx.latitude, pubx.longitude)
        if let kilometresPerHour = pubx.speedKilometresPerHour { speed = kilometresPerHour.doubleValue / 3.6 }
        track = pubx.track?.doubleValue ?? track
        if pubxMode == .threeDimensional {
            altitudeHAE = pubx.altitudeHAE?.doubleValue ?? altitudeHAE
            if let down = pubx.verticalVelocity { climb = -down.doubleValue }
        }
        horizontalError = pubx.horizontalAccuracy?.doubleValue
        verticalError = pubx.verticalAccuracy?.doubleValue
    }

    /// Ashtech's PASHR,POS: a position type means a 3D solution (the sentence has no 2D
    /// form); an empty one, no position.
    mutating func merge(_ pashr: PASHRPosition) {
        sawData = true
        guard let type = pashr.positionType else {
            saysNoPosition()
            return
        }
        state(.threeDimensional)
        switch type {
        case 1: statedStatus = .differential
        case 2: statedStatus = .rtkFloat
        case 3: statedStatus = .rtkFixed
        default: statedStatus = .gps
        }
        positionValid = true
        setPosition(pashr.latitude, pashr.longitude)
        altitudeHAE = pashr.altitudeHAE?.doubleValue ?? altitudeHAE
        if let kilometresPerHour = pashr.speedKilometresPerHour { speed = kilometresPerHour.doubleValue / 3.6 }
        track = pashr.track?.doubleValue ?? track
        climb = pashr.verticalVelocity?.doubleValue ?? climb
        let pdop = Self.dilution(pashr.pdop)
        let hdop = Self.dilution(pashr.hdop)
        if let pdop { self.pdop = pdop }
        if let hdop, !ggaGaveHDOP { self.hdop = hdop }
        if let vdop = Self.dilution(pashr.vdop) { self.vdop = vdop }
        if let tdop = Self.dilution(pashr.tdop) { self.tdop = tdop }
        hasSkyData = hasSkyData || pdop != nil || hdop != nil
        satellitesUsed = satellitesUsed ?? pashr.satellitesUsed
    }

    /// SkyTraq's PSTI,030: a valid one is a 2D fix, or 3D with its altitude; its mode
    /// letter gives the status (`F` float, `R` fixed RTK). Its velocity is kept whole,
    /// for the fix's `velocity`.
    mutating func merge(_ psti: PSTIPosition) {
        sawData = true
        guard psti.isValid == true, psti.mode != .notValid, psti.latitude != nil else {
            saysNoPosition()
            return
        }
        state(psti.altitudeMSL != nil ? .threeDimensional : .twoDimensional)
        statedStatus = Self.status(of: psti.mode)
        positionValid = true
        setPosition(psti.latitude, psti.longitude)
        altitudeMSL = psti.altitudeMSL?.doubleValue ?? altitudeMSL
        if let east = psti.velocityEast, let north = psti.velocityNorth, let up = psti.velocityUp {
            velocity = NEDVelocity(north: north.doubleValue, east: east.doubleValue, down: -up.doubleValue)
        }
    }

    /// GBS's error estimates, when they are of this cycle's time (as gpsd takes them).
    mutating func merge(_ gbs: GBS) {
        guard let stamp = gbs.time, stamp == time else { return }
        sawData = true
        longitudeError = gbs.longitudeError?.doubleValue
        latitudeError = gbs.latitudeError?.doubleValue
        if verticalError == nil { verticalError = gbs.altitudeError?.doubleValue }
    }

    mutating func merge(_ hdt: HDT) {
        take(heading: hdt.heading)
    }

    /// THS's heading, unless its mode says it is not valid.
    mutating func merge(_ ths: THS) {
        if ths.isValid != false { take(heading: ths.heading) }
    }

    private mutating func take(heading: NMEADecimal?) {
        guard let heading else { return }
        sawData = true
        self.heading = heading.doubleValue
    }

    /// Takes what `later`, sentences of the same epoch that came after this cycle was
    /// closed, said: each value it has replaces this one's, as if merged in order.
    mutating func absorb(_ later: Cycle) {
        func take<Value>(_ value: inout Value?, _ newer: Value?) { if let newer { value = newer } }
        sawData = sawData || later.sawData
        take(&gsaMode, later.gsaMode)
        listedUsedSatellites = listedUsedSatellites || later.listedUsedSatellites
        take(&ggaQuality, later.ggaQuality)
        ggaHasAltitude = ggaHasAltitude || later.ggaHasAltitude
        take(&gnsMode, later.gnsMode)
        take(&gnsSatellitesUsed, later.gnsSatellitesUsed)
        take(&statedStatus, later.statedStatus)
        take(&statedMode, later.statedMode)
        take(&positionValid, later.positionValid)
        gllValid = gllValid || later.gllValid
        take(&modeIndicator, later.modeIndicator)
        take(&latitude, later.latitude)
        take(&longitude, later.longitude)
        take(&altitudeMSL, later.altitudeMSL)
        take(&altitudeHAE, later.altitudeHAE)
        take(&geoidSeparation, later.geoidSeparation)
        take(&climb, later.climb)
        take(&velocity, later.velocity)
        take(&speed, later.speed)
        take(&track, later.track)
        take(&magneticVariation, later.magneticVariation)
        take(&horizontalError, later.horizontalError)
        take(&verticalError, later.verticalError)
        take(&sphericalError, later.sphericalError)
        take(&longitudeError, later.longitudeError)
        take(&latitudeError, later.latitudeError)
        take(&speedError, later.speedError)
        take(&trackError, later.trackError)
        take(&hdop, later.hdop)
        ggaGaveHDOP = ggaGaveHDOP || later.ggaGaveHDOP
        take(&vdop, later.vdop)
        take(&pdop, later.pdop)
        take(&tdop, later.tdop)
        take(&satellitesUsed, later.satellitesUsed)
        hasSkyData = hasSkyData || later.hasSkyData
        take(&errorEstimate, later.errorEstimate)
        take(&heading, later.heading)
    }

    /// A DOP as the receiver gave it, or `nil` for the placeholders receivers send when
    /// they have none: 0 (SkyTraq, GP-320FW and others) and 99 or more (99.99 on many).
    /// gpsd reports neither.
    private static func dilution(_ value: NMEADecimal?) -> Double? {
        guard let value = value?.doubleValue, value > 0, value < 99 else { return nil }
        return value
    }

    /// Whether any of a sentence's DOP fields holds a DOP (not empty, not a placeholder).
    static func carriesDilution(_ first: NMEADecimal?, _ second: NMEADecimal? = nil, _ third: NMEADecimal? = nil) -> Bool {
        dilution(first) != nil || dilution(second) != nil || dilution(third) != nil
    }

    /// A sentence says the receiver has no position: that holds unless another sentence
    /// of the cycle gave one (a no-fix sentence says nothing against a fix).
    private mutating func saysNoPosition() {
        if positionValid == nil { positionValid = false }
    }

    /// A maker's sentence states `mode`: the strongest stated in the cycle stands.
    private mutating func state(_ mode: FixMode) {
        statedMode = max(statedMode ?? .unknown, mode)
    }

    private mutating func setPosition(_ latitude: NMEACoordinate?, _ longitude: NMEACoordinate?) {
        guard let latitude, let longitude else { return }
        self.latitude = latitude.degrees
        self.longitude = longitude.degrees
    }

    /// The cycle's fix, with its mode and status settled.
    ///
    /// A cycle whose only evidence is a valid RMC or GLL (no GGA, GSA or GNS) says
    /// nothing of altitude; it keeps the 3D mode and altitude of `previous`, the last
    /// fix, when that is at most `carryOver` seconds older, as gpsd keeps them.
    ///
    /// Inlined into the assembler's end of cycle, its one caller: a call would lend the
    /// cycle and the previous fix, 1 KB, by copying them.
    @inline(__always)
    func fix(previous: Fix?, carryOver: Double = 2.5, time: GPSTime?) -> Fix {
        var fix = Fix()
        fix.mode = mode
        if fix.mode == .twoDimensional, gsaMode == nil, ggaQuality == nil, gnsMode == nil,
            let previous, previous.mode == .threeDimensional, let time, let previousTime = previous.time,
            time.secondsSince1970 - previousTime.secondsSince1970 <= carryOver
        {
            fix.mode = .threeDimensional
            fix.altitudeMSL = previous.altitudeMSL
            fix.altitudeHAE = previous.altitudeHAE
            fix.geoidSeparation = previous.geoidSeparation
        }
        fix.status = status(for: fix.mode)
        guard fix.mode >= .twoDimensional else { return fix }
        fix.time = time
        fix.latitude = latitude
        fix.longitude = longitude
        fix.speed = speed
        fix.track = track
        fix.magneticVariation = magneticVariation
        fix.horizontalError = horizontalError
        fix.verticalError = verticalError
        fix.sphericalError = sphericalError
        fix.longitudeError = longitudeError
        fix.latitudeError = latitudeError
        fix.speedError = speedError
        fix.trackError = trackError
        fix.velocity = velocity
        fix.differentialAge = differential?.age
        fix.differentialStation = differential?.station
        if fix.mode == .threeDimensional, let altitudeMSL {
            fix.altitudeMSL = altitudeMSL
            fix.geoidSeparation = geoidSeparation
            fix.altitudeHAE = geoidSeparation.map { altitudeMSL + $0 }
        } else if fix.mode == .threeDimensional, let altitudeHAE {
            fix.altitudeHAE = altitudeHAE
            fix.geoidSeparation = geoidSeparation
            fix.altitudeMSL = geoidSeparation.map { altitudeHAE - $0 }
        } else if ggaHasAltitude, let altitudeMSL {
            // A 2D fix whose GGA gave an altitude while counting no satellites (a valid
            // RMC made it 2D): gpsd reports that altitude, without the geoid separation.
            fix.altitudeMSL = altitudeMSL
            fix.altitudeHAE = geoidSeparation.map { altitudeMSL + $0 }
        }
        if fix.mode == .threeDimensional { fix.climb = climb }
        return fix
    }

    /// The strongest mode any sentence of the cycle implies: a GGA with an altitude
    /// means 3D even when a GSA of the same cycle says 2D, as gpsd reports it.
    private var mode: FixMode {
        var mode = FixMode.unknown
        if let gsaMode { mode = max(mode, FixMode(rawValue: gsaMode) ?? .unknown) }
        if let ggaQuality {
            mode = max(mode, ggaQuality == 0 ? .noFix : ggaHasAltitude ? .threeDimensional : .twoDimensional)
        }
        if let gnsMode {
            // Position and time take four satellites: with three, an altitude is held, not
            // measured (gpsd reads GNS so too).
            let measuresAltitude = altitudeMSL != nil && (gnsSatellitesUsed ?? 0) > 3
            mode = max(mode, gnsMode == .notValid ? .noFix : measuresAltitude ? .threeDimensional : .twoDimensional)
        }
        if let statedMode { mode = max(mode, statedMode) }
        if gllValid, altitudeMSL != nil { mode = max(mode, .threeDimensional) }
        // A valid RMC or GLL position is at least a 2D fix, whatever a GGA of the same
        // epoch said of its satellites (gpsd takes the later sentence's word; RMC and GLL
        // come after GGA in every receiver's cycle seen).
        if positionValid == true, latitude != nil {
            mode = max(mode, .twoDimensional)
        } else if mode == .unknown, positionValid != nil {
            mode = .noFix
        }
        return mode
    }

    private func status(for mode: FixMode) -> FixStatus {
        guard mode >= .twoDimensional else { return .unknown }
        switch ggaQuality {
        case 2?, 3?: return .differential
        case 4?: return .rtkFixed
        case 5?: return .rtkFloat
        case 6?: return .deadReckoning
        case 7?: return .surveyedTime
        case 8?: return .simulated
        default: break
        }
        if let statedStatus, statedStatus != .gps { return statedStatus }
        return Self.status(of: modeIndicator ?? gnsMode)
    }

    /// The status a mode indicator letter states.
    private static func status(of indicator: ModeIndicator?) -> FixStatus {
        switch indicator {
        case .differential?, .precise?: .differential
        case .fixedRTK?: .rtkFixed
        case .floatRTK?: .rtkFloat
        case .estimated?: .deadReckoning
        case .simulator?: .simulated
        default: .gps
        }
    }
}
