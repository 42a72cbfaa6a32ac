import GPSFix

/// TSIPv1 (RES 720): `id sub lenHi lenLo mode data… ck`; offsets below count from the
/// first data byte after the mode byte, and only responses (mode 2) are read.
extension TSIPAssembler {
    func readVersion1(id: UInt8, _ fields: FrameFields) {
        guard let sub = fields.u8(0), fields.u8(3) == 2, fields.bytes.count >= 5 else {
            reports.statistics.unknownMessages += 1
            return
        }
        let data = FrameFields(
            UnsafeRawBufferPointer(rebasing: fields.bytes[4..<(fields.bytes.count - 1)]), bigEndian: true)
        if id != 0xA2 { endSignals() }
        var decoded = true
        switch (id, sub) {
        case (0xA1, 0x00): decoded = readTiming(data)
        case (0xA1, 0x11): decoded = readPosition(data)
        case (0xA2, 0x00): decoded = readSignal(data)
        case (0xA3, 0x00): decoded = readAlarms(data)
        case (0xA3, 0x11): decoded = readStatus(data)
        default: reports.statistics.unknownMessages += 1
        }
        if !decoded { reports.statistics.decodingErrors += 1 }
    }

    /// A1-00, timing: opens the epoch at the second it names. The broken-down time is GPS
    /// time when the time base is GPS; week and time of week less the UTC offset are UTC
    /// either way.
    ///
    /// It names the pulse just past too, with that pulse's quantisation error in bytes
    /// 18–21, announced when the flags say the time and the UTC offset are valid. The
    /// manual gives the error in seconds; the RES 720 sends nanoseconds, as 0x8F-AC does
    /// (0.04 to 0.87 in steps of 0.119: a sawtooth below a nanosecond's tick).
    private func readTiming(_ data: FrameFields) -> Bool {
        guard let tow = data.u32(0), let week = data.u16(4), let flags = data.u8(15), let offset = data.i16(16),
            let quantisationError = data.f32(18), data.holds(30, at: 0)
        else { return false }
        self.week = Int(week)
        // The offset is the satellites' only with the flags' UTC valid (bit 0).
        if flags & 0x01 != 0 { takeLeapSeconds(Int(offset)) }
        guard let utc = time(week: Int(week), seconds: Double(tow)) else { return true }
        open(utc)
        changed = true
        // Without the time and the UTC offset valid, the time is shown but sets no clock.
        if flags & 0x03 != 0x03 { reports.fix.timeIsUnconfirmed = true }
        if flags & 0x03 == 0x03, let second = Int(exactly: utc.secondsSince1970.rounded()) {
            announcePulse(of: second, quantisationError: quantisationError)
        }
        return true
    }

    /// A1-11, position: latitude and longitude in degrees, altitude above the ellipsoid
    /// (above mean sea level when mask bit 2 is set), or, with mask bit 1, an Earth-centred
    /// point in metres; velocity east, north, up, or, with mask bit 3, Earth-centred.
    private func readPosition(_ data: FrameFields) -> Bool {
        guard let mask = data.u8(0), let fixType = data.u8(1), let first = data.f64(2), let second = data.f64(10),
            let third = data.f64(18), let east = data.f32(26), let north = data.f32(30), let up = data.f32(34),
            data.holds(50, at: 0)
        else { return false }
        solutions += 1
        switch fixType {
        case 1: mode = .twoDimensional
        case 2: mode = .threeDimensional
        default: mode = .noFix
        }
        if mode >= .twoDimensional {
            let (latitude, longitude): (Double, Double)
            if mask & 0x02 != 0 {
                let point = Geodesy.geodetic(x: first, y: second, z: third)
                (latitude, longitude) = (point.latitude, point.longitude)
                setPosition(latitude: latitude, longitude: longitude, altitudeHAE: point.height)
            } else {
                (latitude, longitude) = (first, second)
                let separation = Geoid.separation(latitude: latitude, longitude: longitude)
                setPosition(latitude: latitude, longitude: longitude, altitudeHAE: mask & 0x04 != 0 ? third + separation : third)
            }
            if mask & 0x08 == 0 {
                setVelocity(north: Double(north), east: Double(east), up: Double(up))
            } else if reports.fix.latitude != nil {
                // The same three fields, x, y and z: turned at the place they were measured.
                let local = Geodesy.localVelocity(x: Double(east), y: Double(north), z: Double(up), latitude: latitude, longitude: longitude)
                setVelocity(north: local.north, east: local.east, up: -local.down)
            }
        }
        changed = true
        return true
    }

    /// A2-00, one signal of one satellite; a run of them, after A3-11, is a view.
    private func readSignal(_ data: FrameFields) -> Bool {
        guard let index = data.u8(0), let type = data.u8(1), let prn = data.u8(2), let azimuth = data.f32(3),
            let elevation = data.f32(7), let signal = data.f32(11), let flags = data.u32(15), let measured = data.u32(19)
        else { return false }
        if signalsPending && Int(index) <= lastSignal { endSignals() }
        lastSignal = Int(index)
        signalsPending = true
        // gpsd times the view by the signals' time of measurement (the second before the
        // epoch's A1-00), not the epoch's.
        if let week { skyTime = time(week: week, seconds: Double(measured)) }
        guard let identity = Self.identity(signalType: type, prn: Int(prn)), satellites.count < Self.channelCount else {
            reports.statistics.unknownMessages += 1
            return true
        }
        let acquired = flags & 0x01 != 0
        satellites.append(
            Satellite(
                identity: identity,
                elevation: acquired && (-90...90).contains(elevation) ? Double(elevation) : nil,
                azimuth: acquired && (0...360).contains(azimuth) ? Double(azimuth) : nil,
                snr: signal >= 0 && signal < 100 ? Double(signal) : nil, used: flags & 0x06 != 0))
        return true
    }

    /// A3-00, alarms: major bit 0, not tracking satellites, is dead reckoning for gpsd.
    private func readAlarms(_ data: FrameFields) -> Bool {
        guard data.u32(0) != nil, let major = data.u32(8) else { return false }
        notTracking = major & 0x01 != 0
        return true
    }

    /// A3-11, receiver status: DOPs; ends the epoch. gpsd reports status 7 (surveyed
    /// time) while the receiver is an overdetermined clock (receiver mode 6), 5 when it
    /// tracks no satellites; the mode is A1-11's fix. (gpsd reads the mode from the status
    /// byte with the receiver-mode values; the capture's fixes are 3D either way.)
    private func readStatus(_ data: FrameFields) -> Bool {
        guard let receiverMode = data.u8(0), let p = data.f32(3), let h = data.f32(7), let v = data.f32(11),
            let t = data.f32(15), data.holds(23, at: 0)
        else { return false }
        func given(_ value: Float) -> Double? { value > 0 && value < 99.99 ? Double(value) : nil }
        dilutions = (given(p), given(h), given(v), given(t))
        status = notTracking ? .deadReckoning : receiverMode == 6 ? .surveyedTime : .gps
        if epochTime != nil { reportFix() }
        return true
    }

    /// Reports the run of A2-00 signals as the open epoch's view.
    func endSignals() {
        guard signalsPending else { return }
        signalsPending = false
        lastSignal = -1
        let used = satellites.reduce(0) { $0 + ($1.used ? 1 : 0) }
        reportView(visible: satellites.count, used: used, time: skyTime)
        satellites.removeAll(keepingCapacity: true)
    }

    /// A signal's satellite by A2-00's signal type, as the RES 720 numbers them: 1-4 GPS,
    /// 5-8 GLONASS, 13-16 BeiDou, 17-20 Galileo (by the capture and gpsd's report of it).
    static func identity(signalType: UInt8, prn: Int) -> SatelliteIdentity? {
        switch signalType {
        case 1...4: SatelliteIdentity(gnss: .gps, svid: prn)
        case 5...8: SatelliteIdentity(gnss: .glonass, svid: prn)
        case 13...16: SatelliteIdentity(gnss: .beidou, svid: prn)
        case 17...20: SatelliteIdentity(gnss: .galileo, svid: prn)
        default: nil
        }
    }
}
