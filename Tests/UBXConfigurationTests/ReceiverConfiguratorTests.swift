import Foundation
import GPSFixDevices
import ReceiverFraming
import TestSupport
import Testing
@testable import UBXConfiguration

/// The configurator against a receiver modelled from u-blox's descriptions, through a
/// pseudo-terminal: one of each generation.
@Suite("Configuring a u-blox receiver", .serialized)
struct ReceiverConfiguratorTests {
    typealias Generation = SimulatedUBXReceiver.Generation

    static func configurator(for receiver: SimulatedUBXReceiver) throws -> (ReceiverConfigurator<ContinuousClock>, SerialReceiverLink) {
        let link = try SerialReceiverLink(path: receiver.path, speed: receiver.speed)
        let conversation = ReceiverConversation(link: link, clock: ContinuousClock(), answerTimeout: .milliseconds(500))
        return (ReceiverConfigurator(conversation: conversation, port: .uart1), link)
    }

    static let everything = ReceiverSettings(
        rate: 5, constellations: [.gps, .galileo], output: .ubx, dynamicModel: .stationary,
        timePulse: TimePulse(period: 1, length: 0.2, onlyWhenLocked: true), timingMode: .surveyIn(seconds: 300, metres: 2))

    @Test("every setting is applied, acknowledged, and read back as asked", arguments: [Generation.generation9, .m8])
    func appliesAndReadsBack(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        let version = try configurator.identify()
        #expect(configurator.usesConfigurationInterface == (generation == .generation9), "\(version.extensions)")
        let before = try configurator.report()
        #expect(before.differences(from: Self.everything).count == 7)
        try configurator.apply(try configurator.plan(Self.everything, layers: .ram))
        let after = try configurator.report()
        #expect(after.differences(from: Self.everything) == [])
        #expect(before.chipID == String(format: "%010llx", receiver.chipID) && after.chipID == before.chipID)
        #expect(after.messages["NAV-PVT"] == 1 && after.messages["NAV-SAT"] == 1)
        // The leap second's announcement, which the time service passes on to the clock.
        #expect(after.messages["NAV-TIMELS"] == 255)
        #expect(receiver.setting(0x2091_0061) == 255)
        #expect(receiver.setting(0x3021_0001) == 200)
    }

    @Test("output = both on a receiver that sends both protocols but none of the messages read (the factory's): they differ, and are turned on", arguments: [Generation.generation9, .m8])
    func outputTurnsMessagesOn(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        let both = ReceiverSettings(output: .both)
        let before = try configurator.report()
        #expect(before.output == .both)
        let differences = before.differences(from: both)
        #expect(differences.count == 1 && differences.first?.hasPrefix("messages: NAV-PVT off") == true, "\(differences)")
        try configurator.apply(try configurator.plan(both, layers: .ram))
        #expect(try configurator.report().differences(from: both) == [])
        #expect(receiver.setting(0x2091_0061) == 255, "NAV-TIMELS, the leap second's announcement")
    }

    @Test("a receiver that leaves SEC-UNIQID unanswered (firmware without it) is reported all the same, with no chip ID")
    func noChipID() throws {
        let receiver = try SimulatedUBXReceiver(.generation9, chipID: false)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        let report = try configurator.report()
        #expect(report.chipID == nil && report.measurementPeriod == 1000)
        // Asked once per configurator, not at each report.
        _ = try configurator.report()
        #expect(receiver.framesReceived(0x2703, length: 0) == configurator.conversation.attempts)
    }

    @Test("a fixed position survives the trip to the receiver and back to 1e-9° and 0.1 mm", arguments: [Generation.generation9, .m8])
    func fixedPosition(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        let settings = ReceiverSettings(timingMode: .fixed(latitude: -33.856784312, longitude: 151.215297653, height: 42.3071))
        try configurator.apply(try configurator.plan(settings, layers: .ram))
        #expect(try configurator.report().differences(from: settings) == [])
    }

    @Test("protocol 27: a fixed position the receiver holds in ECEF is not reported as one at 0, 0, 0")
    func fixedInECEFNotReported() throws {
        let receiver = try SimulatedUBXReceiver(.generation9)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        // CFG-TMODE-MODE fixed, CFG-TMODE-POS_TYPE ECEF, as another tool may leave it.
        let items = [ConfigurationItem(ConfigurationKeys.timingMode, 2), ConfigurationItem(ConfigurationKeys.timingPositionType, 0)]
        let frame = try #require(ValueMessages.set(items, in: .ram).first)
        try configurator.apply([ConfigurationStep(settings: "--fixed-position", frame: frame, confirmation: .acknowledgement)])
        let report = try configurator.report()
        #expect(report.timingMode == nil, "\(report.lines)")
        let table = ReceiverSettings(timingMode: .fixed(latitude: 52.37, longitude: 4.89, height: 10))
        #expect(report.differences(from: table) == ["timing mode: unknown, not fixed at 52.37, 4.89, 10 m"])
    }

    @Test("protocol 27: a refused setting is named, and nothing of its transaction is applied")
    func refusedTransaction() throws {
        let receiver = try SimulatedUBXReceiver(.generation9)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        // 40 Hz is a 25 ms measurement period: faster than the receiver can measure.
        let settings = ReceiverSettings(rate: 40, dynamicModel: .automotive)
        #expect(throws: ConfigurationError.refused("--rate, --dynamic-model")) {
            try configurator.apply(try configurator.plan(settings, layers: .ram))
        }
        #expect(receiver.setting(0x3021_0001) == 1000)
        #expect(receiver.setting(0x2011_0021) == 0, "the dynamic model went in although the transaction was refused")
    }

    @Test("legacy: the refused message is named; the parts before it stay applied, those after are not sent")
    func refusedLegacyStep() throws {
        let receiver = try SimulatedUBXReceiver(.m8)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        // An M8 has no motorbike model; its rate comes first and is taken.
        let settings = ReceiverSettings(rate: 2, dynamicModel: .bike, timePulse: TimePulse(period: 1, length: 0.3, onlyWhenLocked: false))
        #expect(throws: ConfigurationError.refused("--dynamic-model")) {
            try configurator.apply(try configurator.plan(settings, layers: .ram))
        }
        #expect(receiver.setting(0x3021_0001) == 500)
        #expect(receiver.setting(0x4005_0005) == 100_000, "the time pulse was sent after the refusal")
    }

    @Test("UBX off on the port the tool talks through: sent last, unconfirmed, and the receiver then answers no more", arguments: [Generation.generation9, .m8])
    func nmeaOnly(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        let steps = try configurator.plan(ReceiverSettings(rate: 2, output: .nmea, baudRate: 57600), layers: [.ram, .batteryBacked])
        #expect(steps.last?.confirmation == .unacknowledged)
        try configurator.apply(steps)
        #expect(receiver.setting(0x1074_0001) == 0 && receiver.setting(0x1074_0002) == 1 && receiver.speed == 57600)
        #expect(receiver.setting(0x3021_0001) == 500)
        #expect(throws: ConfigurationError.self) { try configurator.identify() }
    }

    @Test("a receiver that never answers ends the conversation with a clear error, after three tries")
    func silence() throws {
        let receiver = try SimulatedUBXReceiver(.generation9, silent: true)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        #expect(throws: ConfigurationError.silent("MON-VER (who it is)", attempts: 3)) { try configurator.identify() }
    }

    @Test("a new port speed: the receiver switches, the link follows, and it answers there", arguments: [Generation.generation9, .m8])
    func speedChange(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        try configurator.apply(try configurator.plan(ReceiverSettings(rate: 2, baudRate: 115_200), layers: .ram))
        #expect(receiver.speed == 115_200 && link.speed == 115_200)
        #expect(try configurator.report().measurementPeriod == 500)
    }

    @Test("a speed change lost on the line: the link goes back to the speed the receiver still answers at, and says so", arguments: [Generation.generation9, .m8])
    func speedNotTaken(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let original = receiver.speed
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        let steps = try configurator.plan(ReceiverSettings(baudRate: 115_200), layers: .ram)
        receiver.loseFrames(1)
        #expect(throws: ConfigurationError.speedNotTaken(115_200, answersAt: original)) { try configurator.apply(steps) }
        #expect(receiver.speed == original && link.speed == original)
        try configurator.identify()  // at the speed the link went back to
    }

    /// A receiver behind a scripted link: it acknowledges configuration or not, and
    /// answers MON-VER only while the link runs at `answersAt` (never when `nil`).
    final class SpeedScript: ReceiverLink {
        let clock = ManualClock()
        private(set) var speed: Int
        let acknowledges: Bool
        let answersAt: Int?
        private var outbox: [UInt8] = []

        init(speed: Int, acknowledges: Bool, answersAt: Int?) {
            self.speed = speed
            self.acknowledges = acknowledges
            self.answersAt = answersAt
        }

        func send(_ frame: [UInt8]) throws {
            if (frame[2], frame[3]) == (0x0A, 0x04) {
                let text = { (value: String, length: Int) in Array(value.utf8) + Array(repeating: UInt8(0), count: length - value.utf8.count) }
                let version = text("ROM SPG 5.10", 30) + text("00190000", 10) + text("PROTVER=34.10", 30)
                if speed == answersAt { outbox += UBXFrame.encode(messageClass: 0x0A, id: 0x04, payload: version) }
            } else if acknowledges {
                outbox += UBXFrame.encode(messageClass: 0x05, id: 0x01, payload: [frame[2], frame[3]])
            }
        }

        func receive(timeout: Duration) throws -> [UInt8] {
            defer { outbox.removeAll() }
            if outbox.isEmpty { clock.advance(by: timeout) }
            return outbox
        }

        func changeSpeed(to bps: Int) throws { speed = bps }
    }

    @Test(
        "a receiver answering at neither speed after a switch, acknowledged or not: the link ends at the new speed, and the error says silent",
        arguments: [true, false])
    func speedSilentAfterSwitch(_ acknowledges: Bool) throws {
        let link = SpeedScript(speed: 38400, acknowledges: acknowledges, answersAt: nil)
        let configurator = ReceiverConfigurator(conversation: ReceiverConversation(link: link, clock: link.clock), port: .uart1)
        let frame = try #require(ValueMessages.set([ConfigurationItem(ConfigurationKeys.baudRate(.uart1)!, 115_200)], in: .ram).first)
        let step = ConfigurationStep(settings: "--baud", frame: frame, confirmation: .answersAt(115_200))
        #expect(throws: ConfigurationError.silent("at 115200 bps after --baud", attempts: 3)) { try configurator.apply([step]) }
        #expect(link.speed == 115_200)
    }

    @Test("protocol 27: a new speed is switched to in RAM, then kept in battery-backed RAM once the receiver answers there, and so kept over a power cycle")
    func speedKeptOnceAnswered() throws {
        let receiver = try SimulatedUBXReceiver(.generation9)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        let steps = try configurator.plan(ReceiverSettings(baudRate: 115_200), layers: [.ram, .batteryBacked])
        // CFG-VALSET's second payload byte names the layers written.
        #expect(steps.map(\.confirmation) == [.answersAt(115_200), .acknowledgement])
        #expect(steps.map { $0.frame[7] } == [ConfigurationLayers.ram.rawValue, ConfigurationLayers.batteryBacked.rawValue])
        try configurator.apply(steps)
        receiver.powerCycle()
        try waitUntil("the receiver back") { receiver.speed == 115_200 && (try? configurator.identify()) != nil }
    }

    @Test("a save with a new speed and NMEA alone writes flash once, and all of it is there after the battery ran out", arguments: [Generation.generation9, .m8])
    func savesInOneFlashWrite(_ generation: Generation) throws {
        // Protocol 27's plan is the one that wrote flash per step; the legacy plan's single
        // CFG-CFG is held to the same promise.
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        try configurator.apply(try configurator.plan(ReceiverSettings(rate: 2, output: .nmea, baudRate: 57600), layers: [.ram, .batteryBacked, .flash]))
        #expect(receiver.traffic.flashWrites == 1)
        receiver.powerCycle(batteryEmpty: true)
        #expect(receiver.speed == 57600)
        #expect(receiver.setting(0x3021_0001) == 500)
        #expect(receiver.setting(0x1074_0001) == 0 && receiver.setting(0x1074_0002) == 1)
    }

    @Test("saved settings survive a power cycle; unsaved ones are lost", arguments: [Generation.generation9, .m8])
    func saving(_ generation: Generation) throws {
        let receiver = try SimulatedUBXReceiver(generation)
        let (configurator, link) = try Self.configurator(for: receiver)
        defer { link.close() }
        try configurator.apply(try configurator.plan(ReceiverSettings(rate: 2), layers: [.ram, .batteryBacked, .flash]))
        try configurator.apply(try configurator.plan(ReceiverSettings(dynamicModel: .sea), layers: .ram))
        try configurator.restart(.hot)
        let report = try configurator.report()
        #expect(report.measurementPeriod == 500)
        #expect(report.dynamicModel == DynamicModel.portable.code)
    }
}
