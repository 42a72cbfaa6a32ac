/// A setting that cannot be read: what `gpsfix ubx set` and the daemon's receiver table
/// print, naming the setting.
public struct SettingError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension ReceiverSettings {
    /// The names of the settings, as `gpsfix ubx set` takes them (without dashes) and the
    /// daemon's `[receiver]` table names its keys.
    public static let names = ["rate", "gnss", "output", "baud", "dynamic-model", "timepulse", "survey-in", "fixed-position", "navigate", "rtcm"]

    /// Sets `name` from its text, checked: `rate` 0.016 to 50 Hz, `gnss` a list of systems,
    /// `baud` a serial speed, `timepulse` PERIOD[,LENGTH][,locked], `survey-in`
    /// SECONDS,METRES, `fixed-position` LAT,LON,HEIGHT; one timing mode at most; `rtcm`
    /// msm4, msm7 or off.
    public mutating func set(_ name: String, to text: String) throws(SettingError) {
        switch name {
        case "rate":
            // A measurement period is at most 65.535 s (a 16-bit count of milliseconds).
            guard let rate = Double(text), (0.016...50).contains(rate) else { throw SettingError("rate \(text): give 0.016 to 50 Hz") }
            self.rate = rate
        case "gnss":
            var systems = Set<Constellation>()
            for system in text.split(separator: ",") {
                guard let known = Constellation(rawValue: system.lowercased()) else {
                    throw SettingError("gnss: '\(system)' is none of gps, galileo, beidou, glonass, qzss, sbas, navic")
                }
                systems.insert(known)
            }
            guard !systems.isEmpty else { throw SettingError("gnss names no constellation") }
            constellations = systems
        case "output":
            guard let output = OutputProtocols(rawValue: text) else { throw SettingError("output \(text): give ubx, nmea or both") }
            self.output = output
        case "baud":
            guard let speed = Int(text), Self.speeds.contains(speed) else { throw SettingError("baud \(text) is not a serial speed") }
            baudRate = speed
        case "dynamic-model":
            guard let model = DynamicModel(rawValue: text) else {
                throw SettingError("dynamic-model \(text): give one of \(DynamicModel.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            dynamicModel = model
        case "timepulse": timePulse = try Self.timePulse(text)
        case "survey-in": try setTimingMode(Self.surveyIn(text), name)
        case "fixed-position": try setTimingMode(Self.fixedPosition(text), name)
        case "navigate":
            guard text == "true" else { throw SettingError("navigate takes no value") }
            try setTimingMode(.navigate, name)
        case "rtcm":
            guard let rtcm = RTCMOutput(rawValue: text) else { throw SettingError("rtcm \(text): give msm4, msm7 or off") }
            self.rtcm = rtcm
        default:
            throw SettingError("unknown setting '\(name)': the settings are \(Self.names.joined(separator: ", "))")
        }
    }

    /// The settings as `KEY=VALUE` pairs joined by `;`, as ``set(_:to:)`` takes them back,
    /// always in the same order: the same text for the same settings in every run (unlike
    /// `hashValue`, which is seeded per process), so that what was saved can be remembered
    /// on disk.
    public var canonicalText: String {
        var pairs: [String] = []
        if let rate { pairs.append("rate=\(rate)") }
        if let constellations { pairs.append("gnss=" + constellations.sorted().map(\.rawValue).joined(separator: ",")) }
        if let output { pairs.append("output=\(output.rawValue)") }
        if let baudRate { pairs.append("baud=\(baudRate)") }
        if let dynamicModel { pairs.append("dynamic-model=\(dynamicModel.rawValue)") }
        if let timePulse {
            pairs.append("timepulse=\(timePulse.period),\(timePulse.length)" + (timePulse.onlyWhenLocked ? ",locked" : ""))
        }
        switch timingMode {
        case .navigate: pairs.append("navigate=true")
        case .surveyIn(let seconds, let metres): pairs.append("survey-in=\(seconds),\(metres)")
        case .fixed(let latitude, let longitude, let height): pairs.append("fixed-position=\(latitude),\(longitude),\(height)")
        case nil: break
        }
        if let rtcm { pairs.append("rtcm=\(rtcm.rawValue)") }
        return pairs.joined(separator: ";")
    }

    /// The serial speeds a receiver's port can be set to.
    public static let speeds = [4800, 9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600]

    private mutating func setTimingMode(_ mode: TimingMode, _ name: String) throws(SettingError) {
        guard timingMode == nil else { throw SettingError("\(name): give one of survey-in, fixed-position and navigate") }
        timingMode = mode
    }

    private static func numbers(_ text: some StringProtocol, _ name: String) throws(SettingError) -> [Double] {
        var values: [Double] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = Double(part), value.isFinite else { throw SettingError("\(name) \(text): '\(part)' is not a number") }
            values.append(value)
        }
        return values
    }

    static func timePulse(_ text: String) throws(SettingError) -> TimePulse {
        var parts = text.split(separator: ",").map(String.init)
        let locked = parts.last == "locked"
        if locked { parts.removeLast() }
        let values = try numbers(parts.joined(separator: ","), "timepulse")
        guard (1...2).contains(values.count) else { throw SettingError("timepulse \(text): give PERIOD[,LENGTH][,locked]") }
        let period = values[0]
        let length = values.count > 1 ? values[1] : 0.1
        guard (0.000_001...60).contains(period), length > 0, length < period else {
            throw SettingError("timepulse \(text): the period must be 1 µs to 60 s, the length more than 0 and less than the period")
        }
        return TimePulse(period: period, length: length, onlyWhenLocked: locked)
    }

    static func surveyIn(_ text: String) throws(SettingError) -> TimingMode {
        let values = try numbers(text, "survey-in")
        guard values.count == 2, (1...31_536_000).contains(values[0]), values[0] == values[0].rounded(), (0.0001...1000).contains(values[1])
        else { throw SettingError("survey-in \(text): give SECONDS (1 to a year),METRES (0.0001 to 1000)") }
        return .surveyIn(seconds: UInt32(values[0]), metres: values[1])
    }

    static func fixedPosition(_ text: String) throws(SettingError) -> TimingMode {
        let values = try numbers(text, "fixed-position")
        guard values.count == 3, (-90...90).contains(values[0]), (-180...180).contains(values[1]), (-1000...100_000).contains(values[2])
        else { throw SettingError("fixed-position \(text): give LAT (-90 to 90),LON (-180 to 180),HEIGHT (-1000 to 100000 m)") }
        return .fixed(latitude: values[0], longitude: values[1], height: values[2])
    }
}
