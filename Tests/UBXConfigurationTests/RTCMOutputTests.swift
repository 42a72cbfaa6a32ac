import GPSFixDevices
import TestSupport
import Testing
import UBXConfiguration

/// `--rtcm`: the messages a base station sends, set by intent on both generations.
@Suite("RTCM output of a base receiver", .serialized)
struct RTCMOutputTests {
    typealias Generation = SimulatedUBXReceiver.Generation

    @Test("rtcm is read as the other settings are, and kept in the canonical text")
    func parsing() throws {
        var settings = ReceiverSettings()
        try settings.set("rtcm", to: "msm7")
        #expect(settings.rtcm == .msm7)
        #expect(settings.canonicalText == "rtcm=msm7")
        #expect(throws: SettingError.self) { try settings.set("rtcm", to: "msm5") }
    }

    @Test("msm4 and msm7: 1005 and 1230 every 10 solutions, one MSM of each constellation every solution")
    func rates() {
        let msm7 = Dictionary(uniqueKeysWithValues: RTCMMessage.all.map { ($0.number, Int(RTCMOutput.msm7.rate(of: $0))) })
        #expect(msm7.filter { $0.value > 0 } == [1005: 10, 1077: 1, 1087: 1, 1097: 1, 1127: 1, 1230: 10])
        #expect(RTCMOutput(rates: msm7) == .msm7)
        #expect(RTCMOutput(rates: [:]) == .off)
        #expect(RTCMOutput(rates: [1005: 10]) == nil)
        #expect(RTCMMessage.all.map { $0.classAndID.1 } == [0x05, 0x4A, 0x4D, 0x54, 0x57, 0x5E, 0x61, 0x7C, 0x7F, 0xE6])
    }

    @Test("--rtcm msm7 is applied and shown; --rtcm off turns every message off", arguments: [Generation.generation9, .m8])
    func onThenOff(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try ReceiverConfiguratorTests.configurator(for: receiver)
        defer { link.close() }
        let msm7 = ReceiverSettings(rtcm: .msm7)
        #expect(try configurator.report().differences(from: msm7) == ["rtcm: off, not msm7"])
        try configurator.apply(try configurator.plan(msm7, layers: .ram))
        let on = try configurator.report()
        #expect(on.differences(from: msm7) == [])
        #expect(on.lines.contains("rtcm: 1005 every 10, 1077 every 1, 1087 every 1, 1097 every 1, 1127 every 1, 1230 every 10"))
        let off = ReceiverSettings(rtcm: .off)
        try configurator.apply(try configurator.plan(off, layers: .ram))
        let after = try configurator.report()
        #expect(after.differences(from: off) == [])
        #expect(after.lines.contains("rtcm: off"))
    }
}
