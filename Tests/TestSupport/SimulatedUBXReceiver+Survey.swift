import Foundation

/// A survey-in as u-blox's descriptions tell it: while the timing mode is survey-in
/// (CFG-TMODE-MODE 1, or CFG-TMODE2's mode 1), the receiver averages one position a
/// measurement, its mean's accuracy falling from 20 m toward half the limit; the survey is
/// valid, and stops, once the minimum duration has passed with the accuracy under the
/// limit. Its progress goes out each solution while the mode is survey-in, and answers a
/// poll at any time: NAV-SVIN from
/// generation 9 (ZED-F9P interface description, UBX-18010854), TIM-SVIN from the M8T
/// (u-blox M8 receiver description, UBX-13003221).
extension ReceiverState {
    /// The mean's accuracy at the start, in 0.1 mm.
    static let surveyStartAccuracy: Double = 200_000
    /// The survey's mean, ECEF in cm: where the solutions stand.
    static let surveyMean = (x: 402_514_012, y: 11_470_250, z: 493_000_199)

    /// Advances the survey by one measurement of `period` milliseconds; a timing mode other
    /// than survey-in ends it.
    mutating func advanceSurvey(by period: Int) {
        guard ram[Self.timingMode] == 1 else {
            survey = Survey()
            return
        }
        guard !survey.valid else { return }
        survey.milliseconds += period
        survey.observations += 1
        let limit = Double(ram[0x4003_0011] ?? 0)
        let seconds = survey.milliseconds / 1000
        survey.accuracy = limit / 2 + (Self.surveyStartAccuracy - limit / 2) * pow(0.8, Double(seconds))
        survey.valid = seconds >= Int(ram[0x4003_0010] ?? 0) && survey.accuracy < limit
    }

    /// The survey's progress message (all zeros but the accuracy when no survey-in was
    /// asked for).
    func surveyMessage() -> [UInt8] {
        let seconds = survey.milliseconds / 1000
        let mean = Self.surveyMean
        let accuracy = UInt64(survey.accuracy.rounded())
        let fields = Fields()
        switch generation {
        case .generation9:
            fields.put(0, 4).put(timeOfWeek, 4).put(seconds, 4).put(mean.x, 4).put(mean.y, 4).put(mean.z, 4).put(0, 4)
            fields.put(accuracy, 4).put(survey.observations, 4).put(survey.valid ? 1 : 0, 1).put(survey.valid ? 0 : 1, 1).put(0, 2)
            return UBXWire.frame(0x01, 0x3B, fields.bytes)
        case .m8:
            let millimetres = accuracy / 10
            fields.put(seconds, 4).put(mean.x, 4).put(mean.y, 4).put(mean.z, 4).put(millimetres * millimetres, 4)
            fields.put(survey.observations, 4).put(survey.valid ? 1 : 0, 1).put(survey.valid ? 0 : 1, 1).put(0, 2)
            return UBXWire.frame(0x0D, 0x04, fields.bytes)
        }
    }

    /// Answers a poll of NAV-SVIN (generation 9) or TIM-SVIN (M8T); `nil` for any other frame.
    func surveyPoll(_ messageClass: UInt8, _ id: UInt8, _ payload: [UInt8]) -> [ReceiverAnswer]? {
        guard payload.isEmpty else { return nil }
        switch (generation, messageClass, id) {
        case (.generation9, 0x01, 0x3B), (.m8, 0x0D, 0x04): return [.bytes(ubx(surveyMessage()))]
        default: return nil
        }
    }
}

/// A survey-in under way: time, observations, the mean's accuracy (0.1 mm), and whether
/// it is done.
struct Survey {
    var milliseconds = 0
    var observations = 0
    var accuracy = ReceiverState.surveyStartAccuracy
    var valid = false
}
