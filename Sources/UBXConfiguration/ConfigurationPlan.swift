/// The steps that apply settings through the configuration interface (protocol 27 on):
/// everything but the port's speed in one CFG-VALSET transaction, which the receiver
/// applies whole or not at all, then the speed alone. Turning UBX off on the port the
/// conversation uses silences the receiver's answers: that comes last of all, unconfirmed.
/// A save writes flash once: every setting, the speed and UBX's end included, goes to the
/// flash layer in one transaction of its own, after the others are applied and while the
/// receiver still answers; the other steps write the other layers only. A new speed is
/// written to RAM first, and to battery-backed RAM once the receiver answers at it.
enum ConfigurationPlan {
    /// The steps that write `settings` to `layers` but flash, and with flash among
    /// `layers`, `saving` (by default `settings`) to flash: a keeper writes only what
    /// differs where the receiver runs (a base's survey-in written again begins anew),
    /// and the whole table to flash.
    static func valueSteps(
        _ settings: ReceiverSettings, saving: ReceiverSettings? = nil, port: ReceiverPort, layers: ConfigurationLayers
    ) throws -> [ConfigurationStep] {
        let (items, named) = values(of: settings, port: port)
        // Each step below writes these layers; flash, if asked for, is written once, after
        // the speed and before UBX is turned off.
        let running = layers.subtracting(.flash)
        var steps: [ConfigurationStep] = []
        func append(
            _ items: [ConfigurationItem], settings: String, _ confirmation: ConfigurationStep.Confirmation, in layers: ConfigurationLayers? = nil
        ) {
            let layers = layers ?? running
            guard !layers.isEmpty, !items.isEmpty else { return }
            steps += ValueMessages.set(items, in: layers).map { ConfigurationStep(settings: settings, frame: $0, confirmation: confirmation) }
        }
        append(items, settings: named.joined(separator: ", "), .acknowledgement)
        if let speed = settings.baudRate, running.contains(.ram) {
            let item = try speedItem(speed, port: port)
            // Switched in RAM alone, and kept in battery-backed RAM only once the receiver
            // answers there: a speed the line cannot carry is then lost with the receiver's
            // power, rather than kept over it, out of reach.
            steps += ValueMessages.set([item], in: .ram).map { ConfigurationStep(settings: "--baud", frame: $0, confirmation: .answersAt(speed)) }
            append([item], settings: "--baud", .acknowledgement, in: running.subtracting(.ram))
        }
        if layers.contains(.flash) {
            let saved = saving ?? settings
            var (savedItems, savedNamed) = values(of: saved, port: port)
            if let speed = saved.baudRate {
                savedItems.append(try speedItem(speed, port: port))
                savedNamed.append("--baud")
            }
            savedItems += ubxOff(saved, port: port)
            if !savedItems.isEmpty {
                steps += ValueMessages.set(savedItems, in: .flash).map {
                    ConfigurationStep(settings: (savedNamed + ["--save"]).joined(separator: ", "), frame: $0, confirmation: .acknowledgement)
                }
            }
        }
        append(ubxOff(settings, port: port), settings: "--output", .unacknowledged)
        return steps
    }

    /// The port's speed's item.
    private static func speedItem(_ speed: Int, port: ReceiverPort) throws -> ConfigurationItem {
        guard let key = ConfigurationKeys.baudRate(port) else {
            throw ConfigurationError.unsupported("--baud sets a UART's speed; this receiver is reached over \(port.rawValue.uppercased())")
        }
        return ConfigurationItem(key, UInt64(speed))
    }

    /// UBX turned off on the port, when `settings` ask for NMEA alone: last of all, since
    /// the receiver's answers go with it.
    private static func ubxOff(_ settings: ReceiverSettings, port: ReceiverPort) -> [ConfigurationItem] {
        settings.output == .nmea ? [ConfigurationItem(ConfigurationKeys.outputsUBX(port), 0)] : []
    }

    /// The items of every setting but the speed and UBX's end, and the options they answer.
    private static func values(of settings: ReceiverSettings, port: ReceiverPort) -> (items: [ConfigurationItem], named: [String]) {
        var items: [ConfigurationItem] = []
        var named: [String] = []
        if let period = settings.measurementPeriod {
            items += [ConfigurationItem(ConfigurationKeys.measurementRate, UInt64(period)), ConfigurationItem(ConfigurationKeys.navigationRate, 1)]
            named.append("--rate")
        }
        if let wanted = settings.constellations {
            // NavIC is written only when asked for: receivers without it refuse its key.
            for system in Constellation.allCases where system != .navic || wanted.contains(.navic) {
                items.append(ConfigurationItem(ConfigurationKeys.enables(system), wanted.contains(system) ? 1 : 0))
            }
            named.append("--gnss")
        }
        if let output = settings.output {
            items.append(ConfigurationItem(ConfigurationKeys.outputsNMEA(port), output.nmea ? 1 : 0))
            if output.ubx {
                items.append(ConfigurationItem(ConfigurationKeys.outputsUBX(port), 1))
                for message in OutputMessage.sent(byProtocol: 27) {
                    if let key = ConfigurationKeys.outputRate(message, port) { items.append(ConfigurationItem(key, UInt64(message.rate))) }
                }
            }
            named.append("--output")
        }
        if let model = settings.dynamicModel {
            items.append(ConfigurationItem(ConfigurationKeys.dynamicModel, UInt64(model.code)))
            named.append("--dynamic-model")
        }
        if let pulse = settings.timePulse {
            let (period, length) = pulse.microseconds
            items += [
                ConfigurationItem(ConfigurationKeys.timePulseEnabled, 1),
                ConfigurationItem(ConfigurationKeys.timePulseDefinition, 0),
                ConfigurationItem(ConfigurationKeys.timePulseLengthDefinition, 1),
                ConfigurationItem(ConfigurationKeys.timePulseUsesLocked, 1),
                ConfigurationItem(ConfigurationKeys.timePulseAlignedToSecond, 1),
                ConfigurationItem(ConfigurationKeys.timePulseRising, 1),
                ConfigurationItem(ConfigurationKeys.timePulsePeriod, UInt64(period)),
                ConfigurationItem(ConfigurationKeys.timePulsePeriodLocked, UInt64(period)),
                ConfigurationItem(ConfigurationKeys.timePulseLength, pulse.onlyWhenLocked ? 0 : UInt64(length)),
                ConfigurationItem(ConfigurationKeys.timePulseLengthLocked, UInt64(length)),
            ]
            named.append("--timepulse")
        }
        if let mode = settings.timingMode {
            items += timingItems(mode)
            named.append(mode.option)
        }
        if let rtcm = settings.rtcm {
            items += RTCMMessage.all.map { ConfigurationItem($0.outputRate(port), UInt64(rtcm.rate(of: $0))) }
            named.append("--rtcm")
        }
        return (items, named)
    }

    private static func timingItems(_ mode: TimingMode) -> [ConfigurationItem] {
        switch mode {
        case .navigate:
            return [ConfigurationItem(ConfigurationKeys.timingMode, 0)]
        case .surveyIn(let seconds, let metres):
            return [
                ConfigurationItem(ConfigurationKeys.timingMode, 1),
                ConfigurationItem(ConfigurationKeys.surveyInMinimumDuration, UInt64(seconds)),
                ConfigurationItem(ConfigurationKeys.surveyInAccuracyLimit, UInt64((metres * 1e4).rounded())),
            ]
        case .fixed(let latitude, let longitude, let height):
            let (lat, latHP) = TimingMode.split(degrees: latitude)
            let (lon, lonHP) = TimingMode.split(degrees: longitude)
            let (alt, altHP) = TimingMode.split(metres: height)
            return [
                ConfigurationItem(ConfigurationKeys.timingMode, 2),
                ConfigurationItem(ConfigurationKeys.timingPositionType, 1),
                ConfigurationItem(ConfigurationKeys.timingLatitude, signed: Int64(lat)),
                ConfigurationItem(ConfigurationKeys.timingLongitude, signed: Int64(lon)),
                ConfigurationItem(ConfigurationKeys.timingHeight, signed: Int64(alt)),
                ConfigurationItem(ConfigurationKeys.timingLatitudeHP, signed: Int64(latHP)),
                ConfigurationItem(ConfigurationKeys.timingLongitudeHP, signed: Int64(lonHP)),
                ConfigurationItem(ConfigurationKeys.timingHeightHP, signed: Int64(altHP)),
            ]
        }
    }
}

extension TimingMode {
    /// The option of `gpsfix ubx set` that asks for this mode.
    var option: String {
        switch self {
        case .navigate: "--navigate"
        case .surveyIn: "--survey-in"
        case .fixed: "--fixed-position"
        }
    }
}
