import GPSFix

/// gpsd's JSON reports for GPSFix's values: TPV, SKY and GST, encoded once into bytes
/// that can be handed unchanged to every client.
///
/// Field names, order and precision are gpsd 3.22's. Values GPSFix does not have are
/// left out, never `null`. gpsd's model-derived fields (`eph`, `epx`, `ept`, `sep`,
/// `magtrack`, ...) are not invented: `eph`/`epv`/`sep` are sent only when the receiver
/// itself reported them (Garmin PGRME, u-blox PUBX), `epx`/`epy`/`epv` from its GBS.
public enum GPSDReport {
    /// The TPV report for `fix`.
    public static func tpv(_ fix: Fix, device: String?) -> [UInt8] {
        report { tpv(fix, device: device, into: &$0) }
    }

    /// Appends the TPV report for `fix` to `bytes`.
    public static func tpv(_ fix: Fix, device: String?, into bytes: inout JSONBytes) {
        var json = JSONWriter(class: "TPV", continuing: bytes)
        if let device { json.field("device", string: device) }
        if fix.status.rawValue >= FixStatus.differential.rawValue { json.field("status", fix.status.rawValue) }
        json.field("mode", fix.mode.rawValue)
        if let time = fix.time { json.time("time", time) }
        if let leapSeconds = fix.leapSeconds { json.field("leapseconds", leapSeconds) }
        // A receiver's own estimate is nanoseconds (u-blox tAcc): to the nanosecond.
        json.field("ept", fix.timeError, decimals: 9)
        json.field("lat", fix.latitude, decimals: 9)
        json.field("lon", fix.longitude, decimals: 9)
        json.field("altHAE", fix.altitudeHAE, decimals: 4)
        json.field("altMSL", fix.altitudeMSL, decimals: 4)
        json.field("alt", fix.altitudeMSL, decimals: 4)
        json.field("epx", fix.longitudeError, decimals: 3)
        json.field("epy", fix.latitudeError, decimals: 3)
        json.field("epv", fix.verticalError, decimals: 3)
        json.field("track", fix.track, decimals: 4)
        json.field("magvar", fix.magneticVariation, decimals: 1)
        json.field("speed", fix.speed, decimals: 3)
        json.field("climb", fix.climb, decimals: 3)
        json.field("eps", fix.speedError, decimals: 2)
        json.field("epd", fix.trackError, decimals: 4)
        if let velocity = fix.velocity {
            json.field("velN", velocity.north, decimals: 3)
            json.field("velE", velocity.east, decimals: 3)
            json.field("velD", velocity.down, decimals: 3)
        }
        json.field("geoidSep", fix.geoidSeparation, decimals: 3)
        json.field("eph", fix.horizontalError, decimals: 3)
        json.field("sep", fix.sphericalError, decimals: 3)
        json.field("dgpsAge", fix.differentialAge, decimals: 1)
        if let station = fix.differentialStation { json.field("dgpsSta", station) }
        bytes = json.finishBytes()
    }

    /// The SKY report for `sky`. Unlike gpsd 3.22, it carries the cycle's `time`, so that
    /// a client can tell which fix it belongs to.
    public static func sky(_ sky: SkyView, device: String?) -> [UInt8] {
        report(capacity: capacity(for: sky)) { self.sky(sky, device: device, into: &$0) }
    }

    /// Appends the SKY report for `sky` to `bytes`.
    public static func sky(_ sky: SkyView, device: String?, into bytes: inout JSONBytes) {
        let satellites = sky.satellitesReportedEarlier ? [] : listed(sky.satellites)
        var json = JSONWriter(class: "SKY", continuing: bytes, reserving: capacity(for: sky))
        if let device { json.field("device", string: device) }
        if let time = sky.time { json.time("time", time) }
        json.field("xdop", sky.xdop, decimals: 2)
        json.field("ydop", sky.ydop, decimals: 2)
        json.field("vdop", sky.vdop, decimals: 2)
        json.field("tdop", sky.tdop, decimals: 2)
        json.field("hdop", sky.hdop, decimals: 2)
        json.field("gdop", sky.gdop, decimals: 2)
        json.field("pdop", sky.pdop, decimals: 2)
        if !satellites.isEmpty || sky.listsNoSatellites { json.field("nSat", sky.visibleCount) }
        if let used = sky.usedCount { json.field("uSat", used) }
        if !satellites.isEmpty {
            json.nested("satellites", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { array in
                for index in satellites.indices { array.satellite(satellites[index], first: index == 0) }
            }
        }
        bytes = json.finishBytes()
    }

    /// The most satellites a SKY lists: `MAXCHANNELS` of libgps 3.22 (`gps.h`), which
    /// drops a SKY that lists more, whole (or fails the read), and gpsd never sends more;
    /// a receiver tracking every signal of four systems has more.
    public static let maximumSatellitesListed = 140

    /// The satellites a SKY lists: all of them up to ``maximumSatellitesListed``; past it,
    /// every used one and as many others as fit, in the receiver's order.
    static func listed(_ satellites: [Satellite]) -> [Satellite] {
        guard satellites.count > maximumSatellitesListed else { return satellites }
        var usedRoom = min(maximumSatellitesListed, satellites.reduce(0) { $0 + ($1.used ? 1 : 0) })
        var unusedRoom = maximumSatellitesListed - usedRoom
        var kept: [Satellite] = []
        kept.reserveCapacity(maximumSatellitesListed)
        for satellite in satellites {
            if satellite.used, usedRoom > 0 {
                kept.append(satellite)
                usedRoom -= 1
            } else if !satellite.used, unusedRoom > 0 {
                kept.append(satellite)
                unusedRoom -= 1
            }
        }
        return kept
    }

    /// The GST report for `estimate`.
    public static func gst(_ estimate: ErrorEstimate, device: String?) -> [UInt8] {
        report { gst(estimate, device: device, into: &$0) }
    }

    /// Appends the GST report for `estimate` to `bytes`.
    public static func gst(_ estimate: ErrorEstimate, device: String?, into bytes: inout JSONBytes) {
        var json = JSONWriter(class: "GST", continuing: bytes)
        if let device { json.field("device", string: device) }
        if let time = estimate.time { json.time("time", time) }
        json.field("rms", estimate.rangeRMS, decimals: 3)
        json.field("major", estimate.semiMajor, decimals: 3)
        json.field("minor", estimate.semiMinor, decimals: 3)
        json.field("orient", estimate.orientation, decimals: 3)
        json.field("lat", estimate.latitudeError, decimals: 3)
        json.field("lon", estimate.longitudeError, decimals: 3)
        json.field("alt", estimate.altitudeError, decimals: 3)
        bytes = json.finishBytes()
    }

    /// The report for any location update that has one (device events are sent as
    /// DEVICE objects by the server, which knows the device's settings).
    public static func encode(_ update: LocationUpdate, device: String?) -> [UInt8]? {
        var bytes = JSONBytes(capacity: capacity(for: update))
        return encode(update, device: device, into: &bytes) ? bytes.array : nil
    }

    /// The room the report for `update` is given, so that it is written with no growing.
    static func capacity(for update: LocationUpdate) -> Int {
        if case .sky(let view) = update { capacity(for: view) } else { 256 }
    }

    /// Appends the report for `update` to `bytes`; returns whether it had one.
    @discardableResult
    public static func encode(_ update: LocationUpdate, device: String?, into bytes: inout JSONBytes) -> Bool {
        switch update {
        case .fix(let fix): tpv(fix, device: device, into: &bytes)
        case .sky(let view): sky(view, device: device, into: &bytes)
        case .errorEstimate(let estimate): gst(estimate, device: device, into: &bytes)
        case .attitude(let attitude): att(attitude, device: device, into: &bytes)
        case .device, .sentence, .bytes, .rtcm3, .counters, .receiverTime, .nextPulse: return false
        }
        return true
    }

    /// The ATT report for `attitude`: gpsd 3.22 sends one for a heading sentence (HDT).
    public static func att(_ attitude: Attitude, device: String?) -> [UInt8] {
        report { att(attitude, device: device, into: &$0) }
    }

    /// Appends the ATT report for `attitude` to `bytes`.
    public static func att(_ attitude: Attitude, device: String?, into bytes: inout JSONBytes) {
        var json = JSONWriter(class: "ATT", continuing: bytes)
        if let device { json.field("device", string: device) }
        if let time = attitude.time { json.time("time", time) }
        json.field("heading", attitude.heading, decimals: 3)
        bytes = json.finishBytes()
    }

    /// gpsd's `TOFF` (receiver time) or `PPS` (a pulse) report for what the time service
    /// did with a sample: both times exactly, as seconds and nanoseconds, the precision,
    /// and the NTP shared-memory segment it went to (`"shm":"NTP0"`) when one did.
    public static func time(_ report: TimeReport, device: String) -> [UInt8] {
        var json = JSONWriter(class: report.kind == .pulse ? "PPS" : "TOFF")
        json.field("device", string: device)
        json.field("real_sec", report.sample.real.seconds)
        json.field("real_nsec", report.sample.real.nanoseconds)
        json.field("clock_sec", report.sample.clock.seconds)
        json.field("clock_nsec", report.sample.clock.nanoseconds)
        json.field("precision", report.precision)
        if let error = report.quantisationError {
            // Picoseconds, as gpsd's `qErr`.
            json.field("qErr", Int(error.components.attoseconds / 1_000_000) + Int(error.components.seconds) * 1_000_000_000_000)
        }
        if let unit = report.sharedMemoryUnit { json.field("shm", string: "NTP\(unit)") }
        return json.finish()
    }

    /// One report in an array of its own (the writer sizes its memory; the array is
    /// allocated once, to the report's length, when it is finished).
    private static func report(capacity: Int = 256, _ write: (inout JSONBytes) -> Void) -> [UInt8] {
        var bytes = JSONBytes(capacity: capacity)
        write(&bytes)
        return bytes.array
    }

    /// The room a SKY report of `sky` is given: enough for its satellites, and for the
    /// room the last one's run asks for, so that it is written with no growing.
    private static func capacity(for sky: SkyView) -> Int {
        sky.satellitesReportedEarlier ? 128 : 128 + 96 * min(sky.satellites.count, maximumSatellitesListed) + JSONWriter.satelliteRunRoom
    }
}

extension JSONWriter {
    /// What a satellite's run asks for besides its four numbers: its keys, punctuation and
    /// six whole numbers take at most 220 bytes.
    private static var satelliteRunFixedRoom: Int { 256 }

    /// The room a satellite's run asks for when its numbers are below a billion, as every
    /// value in range is.
    fileprivate static var satelliteRunRoom: Int {
        satelliteRunFixedRoom + 4 * FixedPoint.maximumCount(for: 0, decimals: 1)
    }

    /// One satellite of a SKY's list, an object of fixed shape written as one run: most of
    /// a SKY's bytes, so its keys are literals and its numbers go unchecked into room
    /// made once (``beginRun(maximumCount:)``). Inlined, it reads the satellite where
    /// the view holds it instead of a copy of its 136 bytes.
    @inline(always)
    fileprivate mutating func satellite(_ satellite: Satellite, first: Bool) {
        func room(_ value: Double?) -> Int { FixedPoint.maximumCount(for: value ?? 0, decimals: 1) }
        let maximumCount =
            Self.satelliteRunFixedRoom + room(satellite.elevation) + room(satellite.azimuth) + room(satellite.snr)
            + room(satellite.residual)
        var run = beginRun(maximumCount: maximumCount)
        if !first { run.write(",") }
        run.write("{\"PRN\":")
        run.write(satellite.identity.prn)
        run.write(",\"el\":", tenths: satellite.elevation)
        run.write(",\"az\":", tenths: satellite.azimuth)
        run.write(",\"ss\":", tenths: satellite.snr)
        run.write(",\"used\":")
        run.write(satellite.used)
        run.write(",\"gnssid\":")
        run.write(satellite.identity.gnss.rawValue)
        run.write(",\"svid\":")
        run.write(satellite.identity.svid)
        run.write(",\"sigid\":", satellite.signal)
        run.write(",\"prRes\":", satellite.residual, decimals: 1)
        run.write(",\"qual\":", satellite.quality)
        run.write(",\"health\":", satellite.health)
        run.write("}")
        endRun(run)
    }
}

extension GPSTime {
    /// The time as gpsd writes it: ISO 8601, UTC, milliseconds (`2010-06-03T14:52:45.000Z`).
    public var iso8601: String {
        var writer = JSONWriter()
        writer.appendISO8601(self)
        return writer.text
    }
}

extension JSONWriter {
    /// An ISO 8601 UTC time with milliseconds, as gpsd writes it: `2010-06-03T14:52:45.000Z`.
    public mutating func time(_ name: StaticString, _ time: GPSTime) {
        key(name)
        appendByte(UInt8(ascii: "\""))
        appendISO8601(time)
        appendByte(UInt8(ascii: "\""))
    }

    mutating func appendISO8601(_ time: GPSTime) {
        // An inserted second as gpsd names it (its clients know no second 60).
        let time = time.posixNamed
        // yyyy-mm-ddThh:mm:ss.sssZ as one token; a year past 9999 only widens it.
        appendToken(maximumCount: 48) { output in
            var count = Self.writeDigits(UInt(clamping: time.year), minimumDigits: 4, to: output)
            func part(_ separator: UInt8, _ value: Int, digits: Int) {
                output[count] = separator
                count += 1 + Self.writeDigits(UInt(clamping: value), minimumDigits: digits, to: output + count + 1)
            }
            part(UInt8(ascii: "-"), time.month, digits: 2)
            part(UInt8(ascii: "-"), time.day, digits: 2)
            part(UInt8(ascii: "T"), Int(time.time.hour), digits: 2)
            part(UInt8(ascii: ":"), Int(time.time.minute), digits: 2)
            part(UInt8(ascii: ":"), Int(time.time.second), digits: 2)
            part(UInt8(ascii: "."), Int(time.time.nanosecond / 1_000_000), digits: 3)
            output[count] = UInt8(ascii: "Z")
            return count + 1
        }
    }
}
