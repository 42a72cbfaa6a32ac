import GPSFix

extension TSIPAssembler {
    /// One satellite's tracking status (0x5C, 0x5D) into the channel table. A channel at
    /// or below the last one read starts a new run: the run before is reported first.
    func apply(_ tracking: TSIPTracking) {
        guard tracking.channel < Self.channelCount else {
            reports.statistics.valuesOutOfRange += 1
            return
        }
        if skyPending && tracking.channel <= lastChannel { endSky() }
        lastChannel = tracking.channel
        guard let identity = Self.identity(prn: tracking.prn, system: tracking.system) else {
            channels[tracking.channel] = nil
            return
        }
        let elevation = Double(tracking.elevation) * 180 / .pi
        var azimuth = Double(tracking.azimuth) * 180 / .pi
        if azimuth < 0 { azimuth += 360 }
        // 0x5C says nothing of use: gpsd marks a satellite used when the last 0x6D, of a
        // position fix, lists its PRN.
        let used = tracking.used ?? (positionSolution && usedPRNs.contains(tracking.prn))
        channels[tracking.channel] = Satellite(
            identity: identity, elevation: (-90...90).contains(elevation) ? elevation : nil,
            azimuth: (0...360).contains(azimuth) ? azimuth : nil,
            snr: tracking.signal >= 0 && tracking.signal < 100 ? Double(tracking.signal) : nil, used: used)
        if let week { skyTime = time(week: week, seconds: Double(tracking.timeOfMeasurement)) }
        skyPending = true
        if dilutionsComputed || (dilutions.pdop == nil && dilutions.hdop == nil && dilutions.vdop == nil) {
            computeDilutions()
        }
    }

    /// DOPs for an epoch that has no 0x6D's (yet): gpsd computes them, as each satellite
    /// comes in, from the geometry of its whole table (listed or not, stale entries
    /// included) once four used satellites allow it, and keeps them for the epoch.
    private func computeDilutions() {
        satellites.removeAll(keepingCapacity: true)
        for case let satellite? in channels { satellites.append(satellite) }
        guard let geometry = DilutionOfPrecision(usedSatellitesOf: satellites) else { return }
        dilutions = (geometry.pdop, geometry.hdop, geometry.vdop, geometry.tdop)
        dilutionsComputed = true
    }

    /// 0x47: signal levels of satellites already in the table, by PRN.
    func apply(_ levels: TSIPSignalLevels) {
        for index in 0..<levels.count {
            let (prn, signal) = levels[index]
            guard let signal, signal >= 0, signal < 100 else { continue }
            for channel in 0..<channels.count where channels[channel]?.identity.prn == prn {
                channels[channel]?.snr = Double(signal)
            }
        }
    }

    /// Reports the channel table as gpsd does: `nSat` counts the channels that hold a
    /// satellite, and the list is of those among the first `nSat` channels (gpsd prints
    /// its table up to the count, skipping empty channels, so a table with gaps lists
    /// fewer satellites than `nSat`); `uSat` counts every used one.
    func endSky() {
        guard skyPending else { return }
        skyPending = false
        lastChannel = -1
        var filled = 0
        var used = 0
        for case let satellite? in channels {
            filled += 1
            if satellite.used { used += 1 }
        }
        satellites.removeAll(keepingCapacity: true)
        for index in 0..<filled { if let satellite = channels[index] { satellites.append(satellite) } }
        reportView(visible: filled, used: used, time: skyTime)
    }

    /// Reports `satellites` with the held DOPs, as a view of `visible` satellites, `used`
    /// of them used.
    func reportView(visible: Int, used: Int, time: GPSTime?) {
        reports.sky.pdop = dilutions.pdop
        reports.sky.hdop = dilutions.hdop
        reports.sky.vdop = dilutions.vdop
        reports.sky.tdop = dilutions.tdop
        reports.sky.reportedVisibleCount = visible
        reports.sky.reportedUsedCount = used
        reports.reportSatellites(satellites, time: time)
        reports.sky.reportedVisibleCount = nil
        reports.sky.reportedUsedCount = nil
    }

    /// A satellite by its PRN and 0x5D's system (0 GPS, 1 GLONASS, 2 BeiDou, 3 Galileo,
    /// 5 QZSS); 0x5C's are GPS (SBAS from 120). GLONASS PRNs are sent as 65-96.
    static func identity(prn: Int, system: UInt8) -> SatelliteIdentity? {
        switch system {
        case 0: prn >= 120 ? SatelliteIdentity(gnss: .sbas, svid: prn) : SatelliteIdentity(gnss: .gps, svid: prn)
        case 1: SatelliteIdentity(gnss: .glonass, svid: prn > 64 ? prn - 64 : prn)
        case 2: SatelliteIdentity(gnss: .beidou, svid: prn)
        case 3: SatelliteIdentity(gnss: .galileo, svid: prn)
        case 5: SatelliteIdentity(gnss: .qzss, svid: prn > 192 ? prn - 192 : prn)
        default: nil
        }
    }
}
