/// The steps that apply settings to a receiver before protocol 27, one legacy message per
/// part of the configuration, in an order that keeps the port reachable: the port's speed,
/// then its protocols, then the save (at the new speed). Turning UBX off on the port the
/// conversation uses silences the receiver's answers, so that comes last of all, and what
/// follows it cannot be confirmed.
///
/// CFG-RATE, CFG-GNSS, CFG-TP5, CFG-TMODE2/3 and CFG-PRT set more than one setting each, so
/// each is polled (read-only) and written back with only the asked fields changed.
struct LegacyPlan<C: Clock> where C.Duration == Duration {
    let conversation: ReceiverConversation<C>
    let protocolVersion: Double

    /// The steps, and with `layers` beyond RAM a save of the whole configuration there
    /// (CFG-CFG: legacy messages set RAM only).
    func steps(_ settings: ReceiverSettings, layers: ConfigurationLayers) throws -> [ConfigurationStep] {
        var steps: [ConfigurationStep] = []
        func add(_ option: String, _ frame: [UInt8], _ confirmation: ConfigurationStep.Confirmation = .acknowledgement) {
            steps.append(ConfigurationStep(settings: option, frame: frame, confirmation: confirmation))
        }
        if let period = settings.measurementPeriod {
            var rate = try conversation.poll(LegacyMessages.rate, length: 6, what: "CFG-RATE")
            rate.put(period, at: 0)
            rate.put(UInt16(1), at: 2)  // one navigation solution per measurement
            add("--rate", LegacyMessages.frame(LegacyMessages.rate, rate))
        }
        if let wanted = settings.constellations {
            add("--gnss", LegacyMessages.frame(LegacyMessages.constellations, try constellations(wanted)))
        }
        if let model = settings.dynamicModel {
            add("--dynamic-model", LegacyMessages.setDynamicModel(model))
        }
        if let pulse = settings.timePulse {
            add("--timepulse", LegacyMessages.frame(LegacyMessages.timePulse, try timePulse(pulse)))
        }
        if let mode = settings.timingMode {
            add(mode.option, try timingMode(mode))
        }
        if settings.output?.ubx == true {
            for message in OutputMessage.sent(byProtocol: protocolVersion) {
                add("--output", LegacyMessages.setRate(of: message, to: message.rate))
            }
        }
        if let rtcm = settings.rtcm {
            for message in RTCMMessage.all {
                add("--rtcm", LegacyMessages.setRate(of: message.classAndID, to: rtcm.rate(of: message)))
            }
        }
        let silencing = settings.output == .nmea
        if settings.output != nil || settings.baudRate != nil {
            var port = try conversation.poll(LegacyMessages.port, length: 20, what: "CFG-PRT")
            if let speed = settings.baudRate, UInt32(speed) != port.u32(8) {
                guard port[0] == 1 || port[0] == 2 else {
                    throw ConfigurationError.unsupported("--baud sets a UART's speed; this receiver is reached over USB")
                }
                port.put(UInt32(speed), at: 8)
                add("--baud", LegacyMessages.frame(LegacyMessages.port, port), .answersAt(speed))
            }
            if let output = settings.output {
                var mask = port.u16(14) & ~0x0003
                if output.ubx { mask |= 0x0001 }
                if output.nmea { mask |= 0x0002 }
                port.put(mask, at: 14)
                add("--output", LegacyMessages.frame(LegacyMessages.port, port), silencing ? .unacknowledged : .acknowledgement)
            }
        }
        if layers.contains(.flash) || layers.contains(.batteryBacked) {
            add("--save", LegacyMessages.save(toFlash: layers.contains(.flash)), silencing ? .unacknowledged : .acknowledgement)
        }
        return steps
    }

    /// The receiver's timing-mode message with `mode` set and the rest as it was.
    private func timingMode(_ mode: TimingMode) throws -> [UInt8] {
        guard let (message, current) = try conversation.timingModeMessage() else {
            throw ConfigurationError.unsupported("\(mode.option) needs a timing or base receiver: this one has no timing mode")
        }
        let payload = message == LegacyMessages.timingMode3
            ? LegacyMessages.timingMode3(mode, from: current) : LegacyMessages.timingMode2(mode, from: current)
        return LegacyMessages.frame(message, payload)
    }

    /// CFG-GNSS with each system's enable bit as `wanted` says and its channels as they were.
    private func constellations(_ wanted: Set<Constellation>) throws -> [UInt8] {
        var gnss = try conversation.poll(LegacyMessages.constellations, length: 4, what: "CFG-GNSS")
        let blocks = Int(gnss[3])
        guard gnss.count == 4 + 8 * blocks else { throw ConfigurationError.malformed("CFG-GNSS") }
        let present = Set((0..<blocks).compactMap { Constellation(gnssID: gnss[4 + 8 * $0]) })
        if let missing = wanted.subtracting(present).sorted().first {
            throw ConfigurationError.unsupported("--gnss: this receiver has no \(missing.rawValue)")
        }
        for block in 0..<blocks {
            let offset = 4 + 8 * block
            guard let system = Constellation(gnssID: gnss[offset]) else { continue }
            let flags = gnss.u32(offset + 4)
            gnss.put(wanted.contains(system) ? flags | 1 : flags & ~1, at: offset + 4)
        }
        return gnss
    }

    /// CFG-TP5 of the first pulse with period and length set, aligned to the second,
    /// rising, and with `onlyWhenLocked` no pulse before a fix.
    private func timePulse(_ pulse: TimePulse) throws -> [UInt8] {
        var tp5 = try conversation.poll(LegacyMessages.timePulse, length: 32, what: "CFG-TP5", payload: [0])
        let (period, length) = pulse.microseconds
        tp5.put(period, at: 8)  // freqPeriod
        tp5.put(period, at: 12)  // freqPeriodLock
        tp5.put(pulse.onlyWhenLocked ? 0 : length, at: 16)  // pulseLenRatio
        tp5.put(length, at: 20)  // pulseLenRatioLock
        // active, lockGnssFreq, lockedOtherSet, isLength, alignToTow, polarity; not isFreq.
        tp5.put(tp5.u32(28) & ~0x08 | 0x77, at: 28)
        return tp5
    }
}
