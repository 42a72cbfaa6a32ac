import GPSFix
import GPSFixMetrics
@testable import GPSFixServer
import Testing
import UBX

/// A base's survey-in as gauges, per device.
@Suite("Survey metrics")
struct SurveyMetricsTests {
    @Test("a survey reported: its duration, accuracy, observations, valid and active; none reported: no survey gauges")
    func survey() {
        var counters = DeviceCounters()
        counters.survey = SurveyProgress(
            duration: 61, meanX: 0, meanY: 0, meanZ: 0, accuracy: 4.8213, observations: 61, isValid: true, isActive: false)
        let clients = ServerSnapshot.Clients(
            connected: 0, accepted: 0, cutOff: 0, reportsSent: 0, reportsDropped: 0, requestsRefused: 0, connections: 0, idleClosed: 0,
            evicted: 0, refusedAtCap: 0)
        let base = ServerSnapshot.Device(path: "/dev/ttyACM0", online: true, counters: counters)
        let rover = ServerSnapshot.Device(path: "/dev/ttyACM1", online: true, counters: DeviceCounters())
        let collector = MetricsCollector()
        collector.record(ServerSnapshot(clients: clients, devices: [base, rover]))
        let samples = MetricsTests.samples(collector.exposition())
        #expect(samples[#"gpsfix_survey_duration_seconds{device="/dev/ttyACM0"}"#] == 61)
        #expect(samples[#"gpsfix_survey_accuracy_metres{device="/dev/ttyACM0"}"#] == 4.8213)
        #expect(samples[#"gpsfix_survey_observations{device="/dev/ttyACM0"}"#] == 61)
        #expect(samples[#"gpsfix_survey_valid{device="/dev/ttyACM0"}"#] == 1)
        #expect(samples[#"gpsfix_survey_active{device="/dev/ttyACM0"}"#] == 0)
        #expect(!samples.keys.contains { $0.hasPrefix("gpsfix_survey") && $0.contains("ttyACM1") })
        #expect(base.isBaseReady && !rover.isBaseReady)
    }

    @Test("a base whose device went offline (unplugged, powered off) is not ready, whatever it reported before")
    func offlineBaseIsNotReady() {
        var counters = DeviceCounters()
        counters.survey = SurveyProgress(
            duration: 61, meanX: 0, meanY: 0, meanZ: 0, accuracy: 4.8213, observations: 61, isValid: true, isActive: false)
        let surveyed = ServerSnapshot.Device(path: "/dev/ttyACM0", online: false, counters: counters)
        var fixed = ServerSnapshot.Device(path: "/dev/ttyACM1", online: false, counters: DeviceCounters())
        fixed.status = .surveyedTime
        #expect(!surveyed.isBaseReady && !fixed.isBaseReady)
        fixed.online = true
        #expect(fixed.isBaseReady)
    }
}
