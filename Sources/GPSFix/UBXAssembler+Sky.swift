import UBX

/// The sky of a UBX epoch: satellites from NAV-SAT (NAV-SVINFO before u-blox 8), signals
/// from NAV-SIG, DOPs from NAV-DOP.
extension UBXAssembler {
    mutating func apply(_ dilutions: NavDOP) {
        open(dilutions.iTOW, NavDOP.message)
        // u-blox sends 99.99 for a DOP it cannot give.
        func given(_ value: Double) -> Double? { value < 99.99 ? value : nil }
        sky.gdop = given(dilutions.gdop)
        sky.pdop = given(dilutions.pdop)
        sky.tdop = given(dilutions.tdop)
        sky.vdop = given(dilutions.vdop)
        sky.hdop = given(dilutions.hdop)
        sky.ydop = given(dilutions.ndop)
        sky.xdop = given(dilutions.edop)
    }

    mutating func apply(_ view: NavSAT) {
        open(view.iTOW, NavSAT.message)
        satellites.removeAll(keepingCapacity: true)
        for index in 0..<view.count {
            let entry = view[index]
            guard let gnss = GNSS(rawValue: entry.gnssID), let identity = SatelliteIdentity(gnss: gnss, svid: entry.svID)
            else { continue }
            satellites.append(
                Satellite(
                    identity: identity, elevation: Self.elevation(entry.elevation), azimuth: Self.azimuth(entry.azimuth),
                    snr: Double(entry.cno), used: entry.isUsed, health: entry.health == 0 ? nil : entry.health,
                    quality: entry.quality, residual: entry.residual))
        }
        satellitesOfEpoch = true
        reportSatellites(satellites)
    }

    mutating func apply(_ view: NavSVINFO) {
        open(view.iTOW, NavSVINFO.message)
        satellites.removeAll(keepingCapacity: true)
        for index in 0..<view.count {
            let channel = view[index]
            guard let identity = SatelliteIdentity(ubxSingleNumber: channel.svID) else { continue }
            satellites.append(
                Satellite(
                    identity: identity, elevation: Self.elevation(channel.elevation),
                    azimuth: (0...359).contains(channel.azimuth) ? Double(channel.azimuth) : nil, snr: Double(channel.cno),
                    used: channel.isUsed, health: channel.isUnhealthy ? 2 : 1, quality: channel.quality,
                    residual: channel.residual))
        }
        satellitesOfEpoch = true
        reportSatellites(satellites)
    }

    /// NAV-SIG lists every signal: the view goes out signal by signal, each placed where
    /// the epoch's NAV-SAT put its satellite, used when its code is locked (quality 4 on).
    mutating func apply(_ view: NavSIG) {
        open(view.iTOW, NavSIG.message)
        signals.removeAll(keepingCapacity: true)
        for index in 0..<view.count {
            let entry = view[index]
            guard let gnss = GNSS(rawValue: entry.gnssID), let identity = SatelliteIdentity(gnss: gnss, svid: entry.svID)
            else { continue }
            let placed = satellitesOfEpoch ? satellites.first { $0.identity.prn == identity.prn } : nil
            signals.append(
                Satellite(
                    identity: identity, signal: entry.signalID, elevation: placed?.elevation, azimuth: placed?.azimuth,
                    snr: Double(entry.cno), used: entry.quality >= 4, health: entry.health == 0 ? nil : entry.health,
                    quality: entry.quality, residual: entry.residual))
        }
        reportSatellites(signals)
    }

    /// Sends a view of `satellites` with the epoch's DOPs so far, those missing computed
    /// from the geometry and kept for the rest of the epoch, as gpsd does.
    private mutating func reportSatellites(_ satellites: [Satellite]) {
        guard !satellites.isEmpty else { return }
        let view = sky.view(of: satellites, time: skyTime)
        satellitesReported = true
        complete(.sky(view))
    }

    static func elevation(_ degrees: Int) -> Double? { (-90...90).contains(degrees) ? Double(degrees) : nil }

    /// u-blox gives 0 to 360; gpsd reports 360 as 0.
    static func azimuth(_ degrees: Int) -> Double? {
        degrees == 360 ? 0 : (0...359).contains(degrees) ? Double(degrees) : nil
    }
}

extension SatelliteIdentity {
    /// Names a satellite by u-blox's system and number, with gpsd's PRN for it; `nil`
    /// for a number the system does not use (GLONASS 255: a slot not yet identified).
    public init?(gnss: GNSS, svid: Int) {
        switch (gnss, svid) {
        case (.gps, 1...32): self.init(prn: svid, gnss: gnss, svid: svid)
        // gpsd numbers SBAS 120-151 as NMEA does, 33-64.
        case (.sbas, 120...151): self.init(prn: svid - 87, gnss: gnss, svid: svid)
        case (.sbas, 152...158): self.init(prn: svid, gnss: gnss, svid: svid)
        case (.galileo, 1...36): self.init(prn: 300 + svid, gnss: gnss, svid: svid)
        case (.beidou, 1...63): self.init(prn: 400 + svid, gnss: gnss, svid: svid)
        case (.imes, 1...10): self.init(prn: 172 + svid, gnss: gnss, svid: svid)
        case (.qzss, 1...10): self.init(prn: 192 + svid, gnss: gnss, svid: svid)
        case (.glonass, 1...32): self.init(prn: 64 + svid, gnss: gnss, svid: svid)
        default: return nil
        }
    }

    /// Names a satellite by the single number of u-blox's older messages (NAV-SVINFO):
    /// GPS 1-32, BeiDou 159-163 (1-5) and 33-64 (6-37), GLONASS 65-96, SBAS 120-158, IMES 173-182,
    /// QZSS 193-197, Galileo 211-246.
    public init?(ubxSingleNumber number: Int) {
        switch number {
        case 1...32: self.init(gnss: .gps, svid: number)
        case 33...64: self.init(gnss: .beidou, svid: number - 27)
        case 65...96: self.init(gnss: .glonass, svid: number - 64)
        case 120...158: self.init(gnss: .sbas, svid: number)
        case 159...163: self.init(gnss: .beidou, svid: number - 158)
        case 173...182: self.init(gnss: .imes, svid: number - 172)
        case 193...197: self.init(gnss: .qzss, svid: number - 192)
        case 211...246: self.init(gnss: .galileo, svid: number - 210)
        default: return nil
        }
    }
}
