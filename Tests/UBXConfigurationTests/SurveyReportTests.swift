import GPSFixDevices
import TestSupport
import Testing
import UBXConfiguration

/// The survey-in's progress in `gpsfix ubx show`, polled once.
@Suite("Survey-in progress in the report", .serialized)
struct SurveyReportTests {
    @Test("a survey-in under way is reported with its duration, accuracy and observations", arguments: [SimulatedUBXReceiver.Generation.generation9, .m8])
    func surveyUnderWay(_ generation: SimulatedUBXReceiver.Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try ReceiverConfiguratorTests.configurator(for: receiver)
        defer { link.close() }
        #expect(try configurator.report().survey == nil, "no survey-in asked for: none polled")
        let settings = ReceiverSettings(timingMode: .surveyIn(seconds: 60, metres: 5))
        try configurator.apply(try configurator.plan(settings, layers: .ram))
        let survey = try #require(try configurator.report().survey)
        #expect(survey.isActive && !survey.isValid)
        #expect(survey.accuracy > 5 && survey.accuracy <= 20)
        #expect(try configurator.report().lines.contains { $0.hasPrefix("survey: ") && $0.hasSuffix("active") })
    }
}
