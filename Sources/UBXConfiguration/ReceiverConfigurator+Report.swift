import UBX

extension ReceiverConfigurator {
    /// Asks the receiver for its identity and settings, read-only: CFG-VALGET from the
    /// RAM layer from protocol 27 on, the legacy polls before. A part the receiver refuses
    /// to report (it has no such feature) is left out.
    public func report() throws -> ReceiverReport {
        let version = try self.version ?? identify()
        var report = ReceiverReport(version: version, protocolVersion: protocolVersion)
        report.chipID = try chipID
        if usesConfigurationInterface {
            try readValues(into: &report)
        } else {
            try readLegacy(into: &report)
        }
        if case .surveyIn = report.timingMode {
            report.survey = try surveyProgress(timingReceiver: report.timingModeResolution == .coarse)
        }
        return report
    }

    /// The survey-in's progress, polled once (read-only): NAV-SVIN, or TIM-SVIN from a
    /// timing receiver (CFG-TMODE2's); `nil` when the receiver refuses or does not answer.
    private func surveyProgress(timingReceiver: Bool) throws -> SurveyProgress? {
        let message = timingReceiver ? TimSVIN.message : NavSVIN.message
        do {
            let payload = try conversation.poll(LegacyMessages.frame(message), answer: message, what: UBXMessageName.of(message))
            return timingReceiver ? decode(message, payload, as: TimSVIN.init)?.progress : decode(message, payload, as: NavSVIN.init)?.progress
        } catch ConfigurationError.refused, ConfigurationError.silent {
            return nil
        }
    }

    private func readValues(into report: inout ReceiverReport) throws {
        report.port = port
        let keys = ConfigurationKeys.self
        // In groups: a receiver refuses a whole CFG-VALGET for one key it lacks.
        var core = [keys.measurementRate, keys.navigationRate, keys.dynamicModel, keys.outputsUBX(port), keys.outputsNMEA(port)]
        core += keys.baudRate(port).map { [$0] } ?? []
        core += Constellation.allCases.filter { $0 != .navic }.map(keys.enables)
        core += OutputMessage.sent(byProtocol: protocolVersion).compactMap { keys.outputRate($0, port) }
        let pulse = [
            keys.timePulseEnabled, keys.timePulsePeriod, keys.timePulseLength, keys.timePulsePeriodLocked,
            keys.timePulseLengthLocked, keys.timePulseUsesLocked,
        ]
        let timing = [
            keys.timingMode, keys.timingPositionType, keys.timingLatitude, keys.timingLongitude, keys.timingHeight, keys.timingLatitudeHP,
            keys.timingLongitudeHP, keys.timingHeightHP, keys.surveyInMinimumDuration, keys.surveyInAccuracyLimit,
        ]
        let rtcm = RTCMMessage.all.map { $0.outputRate(port) }
        var values: [UInt32: UInt64] = [:]
        for (group, required) in [(core, true), ([keys.enables(.navic)], false), (pulse, false), (timing, false), (rtcm, false)] {
            do {
                for frame in ValueMessages.get(group) {
                    let payload = try conversation.poll(frame, answer: ValueMessages.valueGet, what: "CFG-VALGET")
                    guard let items = decode(ValueMessages.valueGet, payload, as: ValueMessages.items(of:)) else {
                        throw ConfigurationError.malformed("CFG-VALGET")
                    }
                    for item in items { values[item.key] = item.value }
                }
            } catch ConfigurationError.refused where !required {
                continue
            }
        }
        func value(_ key: ConfigurationKey?) -> UInt64? { key.flatMap { values[$0.id] } }
        report.measurementPeriod = value(keys.measurementRate).map(Int.init)
        report.navigationRate = value(keys.navigationRate).map(Int.init)
        report.dynamicModel = value(keys.dynamicModel).map { UInt8(truncatingIfNeeded: $0) }
        report.baudRate = value(keys.baudRate(port)).map(Int.init)
        if let ubx = value(keys.outputsUBX(port)), let nmea = value(keys.outputsNMEA(port)) {
            report.output = OutputProtocols(ubx: ubx != 0, nmea: nmea != 0)
        }
        report.constellations = Set(Constellation.allCases.filter { value(keys.enables($0)).map { $0 != 0 } ?? false })
        for message in OutputMessage.sent(byProtocol: protocolVersion) {
            if let rate = value(keys.outputRate(message, port)) { report.messages[message.name] = Int(rate) }
        }
        for message in RTCMMessage.all {
            if let rate = value(message.outputRate(port)) { report.rtcmMessages[message.number] = Int(rate) }
        }
        if let enabled = value(keys.timePulseEnabled), let period = value(keys.timePulsePeriod),
            let length = value(keys.timePulseLength), let periodLocked = value(keys.timePulsePeriodLocked),
            let lengthLocked = value(keys.timePulseLengthLocked)
        {
            let usesLocked = value(keys.timePulseUsesLocked) != 0
            report.timePulse = TimePulseReport(
                enabled: enabled != 0, period: UInt32(truncatingIfNeeded: period), length: UInt32(truncatingIfNeeded: length),
                periodLocked: UInt32(truncatingIfNeeded: usesLocked ? periodLocked : period),
                lengthLocked: UInt32(truncatingIfNeeded: usesLocked ? lengthLocked : length))
        }
        // A fixed position given in ECEF (CFG-TMODE-POS_TYPE 0) is not reported, as on the
        // legacy receivers: the settings name one in degrees, and its degrees' keys read 0.
        if let mode = value(keys.timingMode), mode != 2 || value(keys.timingPositionType) == 1 {
            func signed(_ key: ConfigurationKey) -> Int64 {
                let raw = value(key) ?? 0
                let bits = UInt64(key.valueSize * 8)
                return Int64(bitPattern: raw << (64 - bits)) >> Int64(64 - bits)
            }
            report.timingMode = TimingMode(
                code: mode, surveySeconds: UInt32(truncatingIfNeeded: value(keys.surveyInMinimumDuration) ?? 0),
                surveyLimit: value(keys.surveyInAccuracyLimit) ?? 0,
                latitude: (signed(keys.timingLatitude), signed(keys.timingLatitudeHP)),
                longitude: (signed(keys.timingLongitude), signed(keys.timingLongitudeHP)),
                height: (signed(keys.timingHeight), signed(keys.timingHeightHP)))
        }
    }

    private func readLegacy(into report: inout ReceiverReport) throws {
        let port = try conversation.poll(LegacyMessages.port, length: 20, what: "CFG-PRT")
        report.port = ReceiverPort.allCases.first { $0.legacyID == port[0] }
        if port[0] == 1 || port[0] == 2 { report.baudRate = Int(port.u32(8)) }
        report.output = OutputProtocols(ubx: port.u16(14) & 1 != 0, nmea: port.u16(14) & 2 != 0)
        if let rate = try conversation.optionalPoll(LegacyMessages.rate, length: 6, what: "CFG-RATE") {
            report.measurementPeriod = Int(rate.u16(0))
            report.navigationRate = Int(rate.u16(2))
        }
        if let gnss = try conversation.optionalPoll(LegacyMessages.constellations, length: 4, what: "CFG-GNSS"), gnss.count == 4 + 8 * Int(gnss[3]) {
            report.constellations = Set((0..<Int(gnss[3])).compactMap { block in
                gnss.u32(4 + 8 * block + 4) & 1 != 0 ? Constellation(gnssID: gnss[4 + 8 * block]) : nil
            })
        }
        if let nav5 = try conversation.optionalPoll(LegacyMessages.navigation, length: 36, what: "CFG-NAV5") { report.dynamicModel = nav5[2] }
        if let tp5 = try conversation.optionalPoll(LegacyMessages.timePulse, length: 32, what: "CFG-TP5", payload: [0]) {
            let flags = tp5.u32(28)
            let usesLocked = flags & 0x04 != 0
            report.timePulse = TimePulseReport(
                enabled: flags & 0x01 != 0, period: tp5.u32(8), length: tp5.u32(16),
                periodLocked: usesLocked ? tp5.u32(12) : tp5.u32(8), lengthLocked: usesLocked ? tp5.u32(20) : tp5.u32(16))
        }
        // A fixed position given in ECEF is not reported: the settings name one in degrees.
        if let (message, tmode) = try conversation.timingModeMessage() {
            if message == LegacyMessages.timingMode3, tmode[2] != 2 || tmode[3] & 0x01 != 0 {
                report.timingMode = TimingMode(
                    code: UInt64(tmode[2]), surveySeconds: tmode.u32(24), surveyLimit: UInt64(tmode.u32(28)),
                    latitude: (Int64(tmode.i32(4)), Int64(Int8(bitPattern: tmode[16]))),
                    longitude: (Int64(tmode.i32(8)), Int64(Int8(bitPattern: tmode[17]))),
                    height: (Int64(tmode.i32(12)), Int64(Int8(bitPattern: tmode[18]))))
            } else if message == LegacyMessages.timingMode2 {
                // Whole units only (1e-7°, cm), accuracies in mm.
                report.timingModeResolution = .coarse
                if tmode[0] != 2 || tmode[2] & 0x01 != 0 {
                    report.timingMode = TimingMode(
                        code: UInt64(tmode[0]), surveySeconds: tmode.u32(20), surveyLimit: UInt64(tmode.u32(24)) * 10,
                        latitude: (Int64(tmode.i32(4)), 0), longitude: (Int64(tmode.i32(8)), 0), height: (Int64(tmode.i32(12)), 0))
                }
            }
        }
        for message in OutputMessage.sent(byProtocol: protocolVersion) {
            let (messageClass, id) = message.classAndID
            if let rates = try conversation.optionalPoll(LegacyMessages.messageRate, length: 8, what: "CFG-MSG", payload: [messageClass, id]),
                let portID = report.port?.legacyID
            {
                report.messages[message.name] = Int(rates[2 + Int(portID)])
            }
        }
        // Only base receivers (M8P) send RTCM: one that refuses class 0xF5, or ignores it,
        // is asked no more of it.
        guard let portID = report.port?.legacyID else { return }
        for message in RTCMMessage.all {
            let (messageClass, id) = message.classAndID
            let rates: [UInt8]?
            do {
                rates = try conversation.optionalPoll(LegacyMessages.messageRate, length: 8, what: "CFG-MSG", payload: [messageClass, id])
            } catch ConfigurationError.silent {
                rates = nil
            }
            guard let rates else { break }
            report.rtcmMessages[message.number] = Int(rates[2 + Int(portID)])
        }
    }
}

extension TimingMode {
    /// The mode from a receiver's fields: mode 0 off, 1 survey-in (its accuracy limit in
    /// 0.1 mm, as wide as any receiver's field scaled to it), 2 fixed (in whole units and
    /// high-precision remainders: 1e-7° and 1e-9°, cm and 0.1 mm).
    init?(
        code: UInt64, surveySeconds: UInt32, surveyLimit: UInt64, latitude: (Int64, Int64), longitude: (Int64, Int64),
        height: (Int64, Int64)
    ) {
        switch code {
        case 0: self = .navigate
        case 1: self = .surveyIn(seconds: surveySeconds, metres: Double(surveyLimit) / 1e4)
        case 2:
            self = .fixed(
                latitude: (Double(latitude.0) * 100 + Double(latitude.1)) / 1e9,
                longitude: (Double(longitude.0) * 100 + Double(longitude.1)) / 1e9,
                height: (Double(height.0) * 100 + Double(height.1)) / 1e4)
        default: return nil
        }
    }
}
