import GPSDProtocol
import UBXConfiguration

extension ReceiverReport {
    /// The report as one JSON object, for scripts: what `gpsfix ubx show --json` prints.
    var json: [UInt8] {
        var writer = JSONWriter(objectWithCapacity: 1024)
        writer.field("module", orNull: module)
        writer.field("hardware", string: version.hardware)
        writer.field("software", string: version.software)
        writer.field("firmware", orNull: firmware)
        writer.field("protocol", protocolVersion, decimals: 2)
        writer.field("chip", orNull: chipID)
        writer.field("port", orNull: port?.rawValue)
        writer.field("baud", orNull: baudRate)
        writer.field("rate", rate, decimals: 3)
        writer.field("measurementPeriod", orNull: measurementPeriod)
        writer.field("navigationRate", orNull: navigationRate)
        if let constellations {
            writer.nested("gnss", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { list in
                for system in constellations.sorted() { list.element(string: system.rawValue) }
            }
        }
        writer.field("output", orNull: output?.rawValue)
        writer.nested("messages", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { list in
            for (name, rate) in messages.sorted(by: { $0.key < $1.key }) {
                list.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { entry in
                    entry.field("message", string: name)
                    entry.field("rate", rate)
                }
            }
        }
        if let survey {
            writer.nested("survey", open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { fields in
                fields.field("duration", Int(survey.duration))
                fields.field("accuracy", survey.accuracy, decimals: 4)
                fields.field("observations", Int(survey.observations))
                fields.field("valid", survey.isValid)
                fields.field("active", survey.isActive)
            }
        }
        if !rtcmMessages.isEmpty {
            writer.nested("rtcm", open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { list in
                for (number, rate) in rtcmMessages.sorted(by: { $0.key < $1.key }) where rate > 0 {
                    list.nested(nil, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { entry in
                        entry.field("message", number)
                        entry.field("rate", rate)
                    }
                }
            }
        }
        writer.field("dynamicModel", orNull: dynamicModelName)
        if let timePulse {
            writer.nested("timePulse", open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { pulse in
                pulse.field("enabled", timePulse.enabled)
                pulse.field("period", Double(timePulse.periodLocked) / 1e6, decimals: 6)
                pulse.field("length", Double(timePulse.lengthLocked) / 1e6, decimals: 6)
                pulse.field("lengthWithoutFix", Double(timePulse.length) / 1e6, decimals: 6)
            }
        }
        if let timingMode {
            writer.nested("timingMode", open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { mode in
                switch timingMode {
                case .navigate: mode.field("mode", string: "navigate")
                case .surveyIn(let seconds, let metres):
                    mode.field("mode", string: "survey-in")
                    mode.field("seconds", Int(seconds))
                    mode.field("metres", metres, decimals: 4)
                case .fixed(let latitude, let longitude, let height):
                    mode.field("mode", string: "fixed")
                    mode.field("latitude", latitude, decimals: 9)
                    mode.field("longitude", longitude, decimals: 9)
                    mode.field("height", height, decimals: 4)
                }
            }
        }
        return writer.finish()
    }
}
