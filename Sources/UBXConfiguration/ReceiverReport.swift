import UBX

/// A receiver's identity and current settings, as it reports them: what `gpsfix ubx show`
/// prints and what the doctor compares with the configuration. A part the receiver does
/// not have (a timing mode on a navigation receiver) is `nil`.
public struct ReceiverReport: Hashable, Sendable {
    public var version: MonVER
    public var protocolVersion: Double
    /// The chip's unique ID (SEC-UNIQID, in hexadecimal), from a receiver that says it:
    /// what tells apart two receivers of one model and firmware.
    public var chipID: String?
    public var port: ReceiverPort?
    public var baudRate: Int?
    /// Milliseconds between measurements, and measurements per navigation solution.
    public var measurementPeriod: Int?
    public var navigationRate: Int?
    public var constellations: Set<Constellation>?
    public var output: OutputProtocols?
    /// Each UBX navigation message's rate on this port.
    public var messages: [String: Int] = [:]
    /// Each RTCM 3 message's rate on this port, by number; empty when the receiver has none.
    public var rtcmMessages: [Int: Int] = [:]
    public var dynamicModel: UInt8?
    public var timePulse: TimePulseReport?
    public var timingMode: TimingMode?
    /// How finely the receiver keeps a fixed position and a survey's accuracy.
    public var timingModeResolution = TimingMode.Resolution.fine
    /// The survey-in's progress, from a receiver with a timing mode that answered the poll.
    public var survey: SurveyProgress?

    /// A report of the receiver's identity alone, its settings to be filled in.
    public init(version: MonVER, protocolVersion: Double) {
        self.version = version
        self.protocolVersion = protocolVersion
    }

    /// The module (`MOD=ZED-F9P`) and firmware (`FWVER=HPG 1.32`) MON-VER names, if any.
    public var module: String? { version.extensions.first { $0.hasPrefix("MOD=") }.map { String($0.dropFirst(4)) } }
    public var firmware: String? { version.extensions.first { $0.hasPrefix("FWVER=") }.map { String($0.dropFirst(6)) } }

    /// The measurement rate in Hz.
    public var rate: Double? { measurementPeriod.flatMap { $0 > 0 ? 1000 / Double($0) : nil } }

    /// Where the receiver differs from `settings`, one line each (`--rate: 1 Hz, not 5 Hz`).
    public func differences(from settings: ReceiverSettings) -> [String] {
        comparisons(with: settings).map(\.line)
    }

    /// The part of `settings` the receiver does not have: what a conversation that saves
    /// nothing gives it, so that a setting it has is not written again (a survey-in's
    /// timing mode, written again, would begin the survey anew).
    public func unmet(_ settings: ReceiverSettings) -> ReceiverSettings {
        var unmet = ReceiverSettings()
        for difference in comparisons(with: settings) { difference.copy(settings, &unmet) }
        return unmet
    }

    /// Each setting of `settings` the receiver differs from: its line, and how to copy the
    /// setting from `settings` to another.
    private func comparisons(with settings: ReceiverSettings) -> [(line: String, copy: (ReceiverSettings, inout ReceiverSettings) -> Void)] {
        var found: [(line: String, copy: (ReceiverSettings, inout ReceiverSettings) -> Void)] = []
        func differs<Value>(_ setting: WritableKeyPath<ReceiverSettings, Value?>, _ line: String) {
            found.append((line, { $1[keyPath: setting] = $0[keyPath: setting] }))
        }
        if let wanted = settings.measurementPeriod, measurementPeriod != Int(wanted) {
            differs(\.rate, "rate: \(rate.map { "\(Self.number($0)) Hz" } ?? "unknown"), not \(Self.number(settings.rate ?? 0)) Hz")
        }
        if let wanted = settings.constellations, constellations != wanted {
            differs(\.constellations, "gnss: \(Self.list(constellations)), not \(Self.list(wanted))")
        }
        if let wanted = settings.output, output != wanted {
            differs(\.output, "output: \(output?.rawValue ?? "unknown"), not \(wanted.rawValue)")
        }
        // UBX out is the messages the daemon reads, at their rates: a port whose UBX is on
        // (as from the factory) may send none of them.
        if settings.output?.ubx == true {
            let off = OutputMessage.sent(byProtocol: protocolVersion).filter { messages[$0.name] != Int($0.rate) }
            if !off.isEmpty {
                let now = off.map { "\($0.name) \(messages[$0.name].map { $0 == 0 ? "off" : "every \($0)" } ?? "unknown")" }
                differs(\.output, "messages: \(now.joined(separator: ", ")), not \(off.map { "\($0.name) every \($0.rate)" }.joined(separator: ", "))")
            }
        }
        if let wanted = settings.baudRate, baudRate != wanted {
            differs(\.baudRate, "baud: \(baudRate.map(String.init) ?? "unknown"), not \(wanted)")
        }
        if let wanted = settings.dynamicModel, dynamicModel != wanted.code {
            differs(\.dynamicModel, "dynamic-model: \(dynamicModelName ?? "unknown"), not \(wanted.rawValue)")
        }
        if let wanted = settings.timePulse, timePulse?.matches(wanted) != true {
            differs(\.timePulse, "timepulse: \(timePulse?.description ?? "unknown"), not \(TimePulseReport(wanted).description)")
        }
        if let wanted = settings.timingMode, timingMode.map({ $0.isClose(to: wanted, at: timingModeResolution) }) != true {
            differs(\.timingMode, "timing mode: \(timingMode.map(Self.describe) ?? "unknown"), not \(Self.describe(wanted))")
        }
        if let wanted = settings.rtcm, RTCMOutput(rates: rtcmMessages) != wanted {
            differs(\.rtcm, "rtcm: \(rtcmDescription), not \(wanted.rawValue)")
        }
        return found
    }

    /// The RTCM messages on, with their rates (`1005 every 10, 1077 every 1`), or `off`.
    public var rtcmDescription: String {
        let on = rtcmMessages.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        return on.isEmpty ? "off" : on.map { "\($0.key) every \($0.value)" }.joined(separator: ", ")
    }

    public var dynamicModelName: String? {
        dynamicModel.map { code in DynamicModel(code: UInt64(code))?.rawValue ?? "model \(code)" }
    }

    /// The report as lines of `name: value` for a terminal.
    public var lines: [String] {
        var lines = [
            "receiver: \(module ?? "u-blox") (hardware \(version.hardware), software \(version.software)\(firmware.map { ", firmware \($0)" } ?? ""))",
            "protocol: \(Self.number(protocolVersion)) (\(protocolVersion >= 27 ? "configuration interface" : "legacy configuration messages"))",
        ]
        if let chipID { lines.append("chip: \(chipID)") }
        if let port { lines.append("port: \(port.rawValue)\(baudRate.map { " at \($0) bps" } ?? "")") }
        if let rate { lines.append("rate: \(Self.number(rate)) Hz (\(measurementPeriod ?? 0) ms, \(navigationRate ?? 1) measurement(s) per solution)") }
        if let constellations { lines.append("gnss: \(Self.list(constellations))") }
        if let output { lines.append("output: \(output.rawValue)") }
        if !messages.isEmpty {
            lines.append("messages: " + messages.sorted { $0.key < $1.key }.map { "\($0.key) every \($0.value)" }.joined(separator: ", "))
        }
        if let name = dynamicModelName { lines.append("dynamic model: \(name)") }
        if let timePulse { lines.append("time pulse: \(timePulse)") }
        if let timingMode { lines.append("timing mode: \(Self.describe(timingMode))") }
        if let survey { lines.append("survey: \(Self.describe(survey))") }
        if !rtcmMessages.isEmpty { lines.append("rtcm: \(rtcmDescription)") }
        return lines
    }

    static func describe(_ mode: TimingMode) -> String {
        switch mode {
        case .navigate: "navigating"
        case .surveyIn(let seconds, let metres): "survey-in for at least \(seconds) s, to \(number(metres)) m"
        case .fixed(let latitude, let longitude, let height): "fixed at \(number(latitude)), \(number(longitude)), \(number(height)) m"
        }
    }

    /// `61 s, mean within 4.8213 m, 61 observations, valid` (or `active`, or `stopped`).
    static func describe(_ survey: SurveyProgress) -> String {
        let state = survey.isValid ? "valid" : survey.isActive ? "active" : "stopped"
        return "\(survey.duration) s, mean within \(number((survey.accuracy * 1e4).rounded() / 1e4)) m, \(survey.observations) observations, \(state)"
    }

    static func list(_ systems: Set<Constellation>?) -> String {
        systems.map { $0.isEmpty ? "none" : $0.sorted().map(\.rawValue).joined(separator: ",") } ?? "unknown"
    }

    /// `5` for 5.0, `0.1` for 0.1: numbers as a user types them.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// The first time pulse as the receiver has it: microseconds, before and after a fix.
public struct TimePulseReport: Hashable, Sendable, CustomStringConvertible {
    public var enabled: Bool
    public var period: UInt32
    public var length: UInt32
    public var periodLocked: UInt32
    public var lengthLocked: UInt32

    public init(enabled: Bool, period: UInt32, length: UInt32, periodLocked: UInt32, lengthLocked: UInt32) {
        self.enabled = enabled
        self.period = period
        self.length = length
        self.periodLocked = periodLocked
        self.lengthLocked = lengthLocked
    }

    init(_ pulse: TimePulse) {
        let (period, length) = pulse.microseconds
        self.init(enabled: true, period: period, length: pulse.onlyWhenLocked ? 0 : length, periodLocked: period, lengthLocked: length)
    }

    func matches(_ pulse: TimePulse) -> Bool { self == TimePulseReport(pulse) }

    public var description: String {
        guard enabled else { return "off" }
        let locked = "every \(ReceiverReport.number(Double(periodLocked) / 1e6)) s, \(ReceiverReport.number(Double(lengthLocked) / 1e6)) s long"
        return length == 0 ? "\(locked), only with a fix" : locked
    }
}

extension TimingMode {
    /// How finely a receiver keeps a timing mode's position and accuracy.
    public enum Resolution: Sendable, Hashable {
        /// 1e-9° and 0.1 mm (CFG-TMODE3, the configuration interface).
        case fine
        /// 1e-7°, 1 cm, and 1 mm for a survey's accuracy (CFG-TMODE2).
        case coarse

        var degrees: Double { self == .fine ? 1e-9 : 1e-7 }
        var height: Double { self == .fine ? 1e-4 : 1e-2 }
        var accuracy: Double { self == .fine ? 1e-4 : 1e-3 }
    }

    /// Whether two modes are the same to `resolution`.
    func isClose(to other: TimingMode, at resolution: Resolution) -> Bool {
        switch (self, other) {
        case (.navigate, .navigate): true
        case (.surveyIn(let s1, let m1), .surveyIn(let s2, let m2)): s1 == s2 && abs(m1 - m2) < resolution.accuracy
        case (.fixed(let a1, let o1, let h1), .fixed(let a2, let o2, let h2)):
            abs(a1 - a2) < 2 * resolution.degrees && abs(o1 - o2) < 2 * resolution.degrees && abs(h1 - h2) < 2 * resolution.height
        default: false
        }
    }
}
