// libFuzzer target: a u-blox receiver's answers to a whole configuration conversation.
// The configurator asks (MON-VER, CFG-VALGET of every key type, the legacy polls, writes
// that wait for ACK-ACK or ACK-NAK), and the input decides how the receiver answers each
// time it is listened to: silence, an acknowledgement or a refusal, a reply to what was
// asked with a payload of any length and any values, a CFG-VALGET reply with every key
// of the request and values from the input (or fewer keys, or other ones), a MON-VER with
// any protocol version, any frame of a configuration class, or raw bytes. Answers that
// checksum right reach the configurator's parsing; a recipe byte picks what goes wrong.
//
// Besides not trapping (overflow, an index past a payload), it checks that every
// conversation ends: the clock moves on with each silence, so a conversation that never
// gives up would run the input out and hang, which libFuzzer reports as a timeout.

import FuzzSupport
import ReceiverFraming
import UBXConfiguration

/// Reads the input as a recipe, byte after byte; zeros once it runs out.
final class Recipe {
    let bytes: UnsafeRawBufferPointer
    var index = 0
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    var isEmpty: Bool { index >= bytes.count }
    func next() -> UInt8 {
        defer { index += 1 }
        return index < bytes.count ? bytes[index] : 0
    }
    func take(_ count: Int) -> [UInt8] { (0..<count).map { _ in next() } }
}

/// A clock that moves only when told: each silence moves it past the wait.
struct StepClock: Clock {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }
    let time: TimeBox
    var now: Instant { Instant(offset: time.elapsed) }
    var minimumResolution: Duration { .zero }
    func sleep(until deadline: Instant, tolerance: Duration?) async throws { time.elapsed = deadline.offset }
}

final class TimeBox: @unchecked Sendable {
    var elapsed = Duration.zero
}

/// The receiver, answering from the recipe.
final class RecipeReceiver: ReceiverLink {
    let recipe: Recipe
    let time: TimeBox
    /// The last request: its class, id and payload.
    var request: (class: UInt8, id: UInt8, payload: [UInt8]) = (0, 0, [])

    init(recipe: Recipe, time: TimeBox) {
        self.recipe = recipe
        self.time = time
    }

    func send(_ frame: [UInt8]) throws {
        precondition(frame.withUnsafeBytes { UBXFrame(validating: $0) } != nil, "the configurator sent a broken frame")
        request = (frame[2], frame[3], Array(frame[6..<(frame.count - 2)]))
    }

    func receive(timeout: Duration) throws -> [UInt8] {
        // Every answer takes a millisecond: a conversation cannot go on for ever on answers.
        time.elapsed += .milliseconds(1)
        guard !recipe.isEmpty else {
            time.elapsed += timeout
            return []
        }
        let choice = recipe.next()
        var answer: [UInt8]
        switch choice % 10 {
        case 0:
            time.elapsed += timeout
            return []
        case 1: answer = frame(0x05, 0x01, [request.class, request.id])
        case 2: answer = frame(0x05, 0x00, [request.class, request.id])
        case 3: answer = frame(request.class, request.id, request.payload + recipe.take(length()))
        case 4: answer = valueReply()
        case 5: answer = monitorVersion()
        case 6: answer = frame([0x05, 0x06, 0x0A][Int(recipe.next() % 3)], recipe.next(), recipe.take(length()))
        case 7: answer = recipe.take(length())
        case 8: answer = frame(request.class, request.id, recipe.take(length()))
        default:
            answer = frame(request.class, request.id, request.payload + recipe.take(length()))
            answer += frame(0x05, 0x01, [request.class, request.id])
        }
        // Sometimes the answer breaks: a wrong checksum, or cut short.
        let damage = recipe.next()
        if damage == 0xFF, !answer.isEmpty { answer[answer.count - 1] &+= 1 }
        if damage == 0xFE { answer.removeLast(answer.count / 2) }
        return answer
    }

    /// The speed the configurator last set: a receiver over a serial line starts at 9600.
    private(set) var speed = 9600

    func changeSpeed(to bps: Int) throws { speed = bps }

    /// Mostly the lengths the messages have, sometimes far past them.
    private func length() -> Int {
        let byte = recipe.next()
        return byte < 200 ? Int(byte) : Int(byte - 200) * 64
    }

    private func frame(_ messageClass: UInt8, _ id: UInt8, _ payload: [UInt8]) -> [UInt8] {
        UBXFrame.encode(messageClass: messageClass, id: id, payload: Array(payload.prefix(8192)))
    }

    /// A CFG-VALGET reply: version 1, the layer, and each key asked with a value of the
    /// size its id says (the recipe may drop keys, add others, or give any value).
    private func valueReply() -> [UInt8] {
        var payload: [UInt8] = [1, recipe.next() % 8, 0, 0]
        let asked = request.payload.count >= 4 ? Array(request.payload.dropFirst(4)) : []
        var keys = stride(from: 0, to: asked.count - 3, by: 4).map { Array(asked[$0..<($0 + 4)]) }
        let shape = recipe.next()
        if shape & 1 != 0, !keys.isEmpty { keys.removeLast(Int(shape >> 1) % keys.count) }
        if shape & 2 != 0 { keys.append(recipe.take(4)) }
        for key in keys {
            let sizeCode = key[3] >> 4 & 0x07
            let size = [0, 1, 1, 2, 4, 8, 0, 0][Int(sizeCode)]
            payload += key + recipe.take(size)
        }
        return frame(0x06, 0x8B, payload)
    }

    /// MON-VER: software, hardware, and extensions, one of them a protocol version.
    private func monitorVersion() -> [UInt8] {
        let versions = ["PROTVER=13.03", "PROTVER=18.00", "PROTVER=27.31", "PROTVER=34.10", "PROTVER 14.00", "PROTVER=", "PROTVER=9e99"]
        var payload = text("ROM SPG 5.10 (7b202e)", 30) + text("00190000", 10)
        for _ in 0..<Int(recipe.next() % 4) {
            let byte = recipe.next()
            payload += text(byte < 128 ? versions[Int(byte) % versions.count] : String(decoding: recipe.take(12), as: UTF8.self), 30)
        }
        return frame(0x0A, 0x04, payload)
    }

    private func text(_ string: String, _ width: Int) -> [UInt8] {
        let bytes = Array(string.utf8.prefix(width))
        return bytes + [UInt8](repeating: 0, count: width - bytes.count)
    }
}

/// Settings the recipe picks: each setting present or not, at its extremes.
func settings(_ recipe: Recipe) -> ReceiverSettings {
    let choice = recipe.next()
    var settings = ReceiverSettings()
    if choice & 0x01 != 0 { settings.rate = [0.016, 1, 5, 50][Int(recipe.next() % 4)] }
    if choice & 0x02 != 0 { settings.constellations = [.gps, .galileo, .navic] }
    if choice & 0x04 != 0 { settings.output = [.ubx, .nmea, .both][Int(recipe.next() % 3)] }
    if choice & 0x08 != 0 { settings.baudRate = ReceiverSettings.speeds[Int(recipe.next()) % ReceiverSettings.speeds.count] }
    if choice & 0x10 != 0 { settings.dynamicModel = DynamicModel.allCases[Int(recipe.next()) % DynamicModel.allCases.count] }
    if choice & 0x20 != 0 { settings.timePulse = TimePulse(period: 1, length: 0.1, onlyWhenLocked: true) }
    if choice & 0x40 != 0 { settings.timingMode = .surveyIn(seconds: 31_536_000, metres: 1000) }
    if choice & 0x80 != 0 { settings.timingMode = .fixed(latitude: -90, longitude: 180, height: 100_000) }
    return settings
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigurator(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let recipe = Recipe(UnsafeRawBufferPointer(start: start, count: count))
    let time = TimeBox()
    let wanted = settings(recipe)
    let port: ReceiverPort = [.uart1, .uart2, .usb][Int(recipe.next() % 3)]
    let conversation = ReceiverConversation(link: RecipeReceiver(recipe: recipe, time: time), clock: StepClock(time: time))
    let configurator = ReceiverConfigurator(conversation: conversation, port: port)
    if let report = try? configurator.report() {
        _ = report.differences(from: wanted)
        _ = report.lines
    }
    if let steps = try? configurator.plan(wanted, layers: [.ram, .batteryBacked, .flash]) {
        for step in steps { _ = step.description }
        try? configurator.apply(steps)
    }
    if recipe.next() & 1 != 0 { try? configurator.restart(.hot) }
    return 0
}

/// The entry point SwiftPM links this executable under.
@_cdecl("FuzzConfigurator_main")
public func fuzzConfiguratorMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzConfigurator(UnsafeRawPointer(data), size) }
}
