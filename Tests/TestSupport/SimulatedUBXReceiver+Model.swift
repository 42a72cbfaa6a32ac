import Foundation

/// What a simulated receiver answers: bytes at the current speed, or a switch to a new one.
enum ReceiverAnswer {
    case bytes([UInt8])
    case speed(Int)
}

/// The receiver's configuration and its handling of each configuration message, by
/// generation. Every setting is kept under the configuration interface's key ID (u-blox
/// names every setting of the model so); message rates of an M8 under their class and id.
struct ReceiverState {
    let generation: SimulatedUBXReceiver.Generation
    let silent: Bool
    /// The chip's unique ID (UBX-SEC-UNIQID's five bytes): every simulated receiver is a
    /// chip of its own, as every real one is.
    let chipID: UInt64
    /// Whether it answers SEC-UNIQID (firmware without it leaves the poll unanswered).
    let answersChipID: Bool
    /// The key of the host's line's speed: UART1's or UART2's.
    let lineSpeed: UInt32
    var ram: [UInt32: UInt64]
    var batteryBacked: [UInt32: UInt64] = [:]
    var flash: [UInt32: UInt64] = [:]
    var speed: Int
    var acknowledged = 0
    var refused = 0
    /// UBX frames received while powered, and writes to flash (each erases and writes a
    /// sector on a real receiver: flash wears).
    var framesReceived = 0
    var flashWrites = 0
    /// Frames received by message (class and id), then by payload length: a poll and a
    /// write of the same message differ in length.
    var framesByMessage: [UInt16: [Int: Int]] = [:]
    /// Frames still to be lost on the line before the receiver reads one again.
    var framesToLose = 0
    /// Frames of one message and payload length (the message in the high 16 bits) still to
    /// be lost, by kind.
    var messagesToLose: [UInt32: Int] = [:]
    private var staged: [(UInt32, UInt64)]?
    private var quietUntil = ContinuousClock.now
    private var measurement = 0
    private(set) var timeOfWeek: UInt32 = 36_000_000  // Sunday 10:00 GPS time
    var survey = Survey()

    // The configuration interface's keys (ZED-F9T, protocol 27.31), by ID.
    static let measurementRate: UInt32 = 0x3021_0001, navigationRate: UInt32 = 0x3021_0002
    static let uart1Speed: UInt32 = 0x4052_0001, uart2Speed: UInt32 = 0x4053_0001, uart1UBX: UInt32 = 0x1074_0001, uart1NMEA: UInt32 = 0x1074_0002
    static let dynamicModel: UInt32 = 0x2011_0021
    static let systems: [(gnssID: UInt8, key: UInt32)] = [
        (0, 0x1031_001F), (1, 0x1031_0020), (2, 0x1031_0021), (3, 0x1031_0022), (5, 0x1031_0024), (6, 0x1031_0025),
    ]
    static let pulseEnabled: UInt32 = 0x1005_0007, pulseUsesLocked: UInt32 = 0x1005_0009
    static let pulsePeriod: UInt32 = 0x4005_0002, pulsePeriodLocked: UInt32 = 0x4005_0003
    static let pulseLength: UInt32 = 0x4005_0004, pulseLengthLocked: UInt32 = 0x4005_0005
    static let timingMode: UInt32 = 0x2003_0001
    /// Output rates on UART1 of NAV-PVT, NAV-DOP, NAV-SAT, NAV-TIMELS and NAV-EOE, by class and id.
    static let outputKeys: [UInt16: UInt32] = [
        0x0107: 0x2091_0007, 0x0104: 0x2091_0039, 0x0135: 0x2091_0016, 0x0126: 0x2091_0061, 0x0161: 0x2091_0160,
    ]

    static func defaults(_ generation: SimulatedUBXReceiver.Generation) -> [UInt32: UInt64] {
        var values: [UInt32: UInt64] = [
            measurementRate: 1000, navigationRate: 1, 0x2021_0003: 1, uart1Speed: generation == .m8 ? 9600 : 38400,
            uart2Speed: 38400,
            uart1UBX: 1, uart1NMEA: 1, 0x1073_0001: 1, 0x1073_0002: 1, 0x1078_0001: 1, 0x1078_0002: 1, dynamicModel: 0,
            pulseEnabled: 1, 0x2005_0023: 0, 0x2005_0030: 1, pulseUsesLocked: 1, 0x1005_000A: 1, 0x1005_000B: 1, pulsePeriod: 1_000_000,
            pulsePeriodLocked: 1_000_000, pulseLength: 0, pulseLengthLocked: 100_000, timingMode: 0, 0x2003_0002: 0,
            0x4003_0009: 0, 0x4003_000A: 0, 0x4003_000B: 0, 0x2003_000C: 0, 0x2003_000D: 0, 0x2003_000E: 0,
            0x4003_000F: 0, 0x4003_0010: 0, 0x4003_0011: 0,
        ]
        for (_, key) in systems { values[key] = 1 }
        if generation == .m8 { values[0x1031_0021] = 0 }  // an M8 ships without Galileo
        for (_, key) in outputKeys { values[key] = 0 }
        for (_, key) in rtcmKeys { values[key] = 0 }
        return values
    }

    init(generation: SimulatedUBXReceiver.Generation, silent: Bool, hostPort: SimulatedUBXReceiver.HostPort, answersChipID: Bool) {
        self.generation = generation
        self.silent = silent
        self.answersChipID = answersChipID
        chipID = Self.chipsMade.withLock { made in
            made += 1
            return 0x01_2345_0000 + made
        }
        lineSpeed = hostPort == .uart1 ? Self.uart1Speed : Self.uart2Speed
        ram = Self.defaults(generation)
        speed = Int(ram[lineSpeed]!)
    }

    /// How many receivers were made, for their chips' IDs.
    private static let chipsMade = Locked<UInt64>(0)

    var measurementPeriod: Duration { .milliseconds(Int(ram[Self.measurementRate] ?? 1000)) }

    /// Says nothing and hears nothing for `quiet`, keeping its settings (a cable or hub
    /// that drops out for a moment).
    mutating func pause(for quiet: Duration) {
        quietUntil = ContinuousClock.now.advanced(by: quiet)
    }

    /// Starts again from what was saved, quiet for `quiet`.
    mutating func restart(after quiet: Duration) {
        ram = Self.defaults(generation).merging(flash) { $1 }.merging(batteryBacked) { $1 }
        speed = Int(ram[lineSpeed]!)
        staged = nil
        quietUntil = ContinuousClock.now.advanced(by: quiet)
    }

    // MARK: Answers

    mutating func handle(_ frame: (messageClass: UInt8, id: UInt8, payload: [UInt8])) -> [ReceiverAnswer] {
        guard !silent, ContinuousClock.now >= quietUntil else { return [] }
        guard framesToLose == 0 else {
            framesToLose -= 1
            return []
        }
        let (messageClass, id, payload) = frame
        let kind = UInt32(messageClass) << 24 | UInt32(id) << 16 | UInt32(payload.count)
        if let left = messagesToLose[kind], left > 0 {
            messagesToLose[kind] = left - 1
            return []
        }
        framesReceived += 1
        framesByMessage[UInt16(messageClass) << 8 | UInt16(id), default: [:]][payload.count, default: 0] += 1
        if messageClass == 0x0A, id == 0x04, payload.isEmpty { return [.bytes(ubx(version()))] }
        // UBX-SEC-UNIQID (F9, and M8 from protocol 18): version 1, three reserved bytes,
        // the five bytes of the chip's ID.
        if messageClass == 0x27, id == 0x03, payload.isEmpty, answersChipID {
            return [.bytes(ubx(UBXWire.frame(0x27, 0x03, [1, 0, 0, 0] + (0..<5).map { UInt8(truncatingIfNeeded: chipID >> (8 * (4 - $0))) })))]
        }
        if let answer = surveyPoll(messageClass, id, payload) { return answer }
        guard messageClass == 0x06 else { return [] }
        switch (generation, id) {
        case (_, 0x04):
            restart(after: .milliseconds(300))  // CFG-RST: not acknowledged
            return []
        case (_, 0x09): return configuration(payload)
        case (.generation9, 0x8A): return valueSet(payload)
        case (.generation9, 0x8B): return valueGet(payload)
        case (.m8, _): return legacy(id, payload)
        default: return [nak(id)]
        }
    }

    mutating func ack(_ id: UInt8) -> ReceiverAnswer {
        acknowledged += 1
        return .bytes(ubx(UBXWire.frame(0x05, 0x01, [0x06, id])))
    }

    mutating func nak(_ id: UInt8) -> ReceiverAnswer {
        refused += 1
        return .bytes(ubx(UBXWire.frame(0x05, 0x00, [0x06, id])))
    }

    /// `frame` when the port sends UBX; nothing when its UBX output is off.
    func ubx(_ frame: [UInt8]) -> [UInt8] { ram[Self.uart1UBX] == 1 ? frame : [] }

    private func version() -> [UInt8] {
        func field(_ text: String, _ length: Int) -> [UInt8] { Array(text.utf8.prefix(length - 1)) + Array(repeating: 0, count: length - min(text.utf8.count, length - 1)) }
        let (software, hardware, extensions) = switch generation {
        case .generation9: ("EXT CORE 1.00 (3fda8e)", "00190000", ["ROM BASE 0x118B2060", "FWVER=TIM 2.20", "PROTVER=27.31", "MOD=ZED-F9T"])
        case .m8: ("ROM CORE 3.01 (107888)", "00080000", ["FWVER=TIM 1.10", "PROTVER=18.00", "MOD=NEO-M8T-0", "GPS;GLO;GAL;BDS", "SBAS;IMES;QZSS"])
        }
        return UBXWire.frame(0x0A, 0x04, field(software, 30) + field(hardware, 10) + extensions.flatMap { field($0, 30) })
    }

    /// Whether `values` make a configuration the receiver can run: a measurement period of
    /// at least 50 ms, a dynamic model it has, a serial speed.
    func isValid(_ values: [UInt32: UInt64]) -> Bool {
        let models: ClosedRange<UInt64> = generation == .m8 ? 0...8 : 0...10
        return (values[Self.measurementRate] ?? 1000) >= 50 && models.contains(values[Self.dynamicModel] ?? 0)
            && values[Self.dynamicModel] != 1
            && [Self.uart1Speed, Self.uart2Speed].allSatisfy { Self.speeds.contains(values[$0] ?? 0) }
    }

    static let speeds: Set<UInt64> = [4800, 9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600]

    /// Applies `values` to RAM when valid: ACK, then a speed change if the port's changed.
    /// The acknowledgement goes out under the old configuration (at the old speed, and
    /// only if UBX was on).
    mutating func apply(_ values: [UInt32: UInt64], id: UInt8) -> [ReceiverAnswer] {
        let next = ram.merging(values) { $1 }
        guard isValid(next) else { return [nak(id)] }
        let acknowledgement = ack(id)
        ram = next
        let newSpeed = Int(ram[lineSpeed]!)
        return newSpeed == speed ? [acknowledgement] : [acknowledgement, .speed(newSpeed)]
    }

    // MARK: Configuration interface

    private mutating func valueSet(_ payload: [UInt8]) -> [ReceiverAnswer] {
        guard payload.count >= 4, let items = Self.items(payload[4...]), payload[1] & 0x07 != 0 else {
            staged = nil
            return [nak(0x8A)]
        }
        let layers = payload[1]
        var toApply = items
        if payload[0] == 1 {
            switch payload[2] {
            case 0: break
            case 1:
                staged = items
                return [ack(0x8A)]
            case 2:
                guard staged != nil else { return [nak(0x8A)] }
                staged! += items
                return [ack(0x8A)]
            case 3:
                guard let begun = staged else { return [nak(0x8A)] }
                toApply = begun + items
                staged = nil
            default: return [nak(0x8A)]
            }
        }
        let values = Dictionary(toApply, uniquingKeysWith: { $1 })
        if layers & 0x02 != 0 { batteryBacked.merge(values) { $1 } }
        if layers & 0x04 != 0 {
            flash.merge(values) { $1 }
            flashWrites += 1
        }
        if layers & 0x01 != 0 { return apply(values, id: 0x8A) }
        return [ack(0x8A)]
    }

    private mutating func valueGet(_ payload: [UInt8]) -> [ReceiverAnswer] {
        let keys = stride(from: 4, to: payload.count - 3, by: 4).map { offset in
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(payload[offset + $1]) << UInt32($1 * 8) }
        }
        guard payload.count >= 8, payload.count % 4 == 0, payload[0] == 0, keys.count <= 64, keys.allSatisfy({ ram[$0] != nil })
        else { return [nak(0x8B)] }
        let layer: [UInt32: UInt64] = switch payload[1] {
        case 0: ram
        case 1: batteryBacked
        case 2: flash
        default: Self.defaults(generation)
        }
        var reply: [UInt8] = [1, payload[1], 0, 0]
        for key in keys {
            guard let value = layer[key] else { continue }
            reply += Self.littleEndian(UInt64(key), 4) + Self.littleEndian(value, Self.size(of: key))
        }
        return [.bytes(ubx(UBXWire.frame(0x06, 0x8B, reply))), ack(0x8B)]
    }

    /// Key and value pairs, each value of the size the key's bits 28–30 give; `nil` when
    /// a key is unknown to this receiver or the pairs do not fill the payload.
    private func items(_ bytes: ArraySlice<UInt8>) -> [(UInt32, UInt64)]? { Self.items(bytes, known: ram) }

    static func items(_ bytes: ArraySlice<UInt8>, known: [UInt32: UInt64]? = nil) -> [(UInt32, UInt64)]? {
        var items: [(UInt32, UInt64)] = []
        var offset = bytes.startIndex
        while offset + 4 <= bytes.endIndex {
            let key = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32($1 * 8) }
            let size = Self.size(of: key)
            guard size > 0, offset + 4 + size <= bytes.endIndex else { return nil }
            let value = (0..<size).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + 4 + $1]) << UInt64($1 * 8) }
            items.append((key, value))
            offset += 4 + size
        }
        return offset == bytes.endIndex ? items : nil
    }

    static func size(of key: UInt32) -> Int { [0, 1, 1, 2, 4, 8, 0, 0][Int(key >> 28 & 7)] }

    static func littleEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64($0 * 8)) }
    }

    /// CFG-CFG: clear, then save, then load, in the devices the mask names (both without one).
    private mutating func configuration(_ payload: [UInt8]) -> [ReceiverAnswer] {
        guard payload.count == 12 || payload.count == 13 else { return [nak(0x09)] }
        let word = { (offset: Int) in (0..<4).reduce(UInt32(0)) { $0 | UInt32(payload[offset + $1]) << UInt32($1 * 8) } }
        let devices = payload.count == 13 ? payload[12] : 0x03
        if word(0) != 0 {
            if devices & 0x01 != 0 { batteryBacked = [:] }
            if devices & 0x02 != 0 { flash = [:] }
        }
        if word(4) != 0 {
            if devices & 0x01 != 0 { batteryBacked = ram }
            if devices & 0x02 != 0 {
                flash = ram
                flashWrites += 1
            }
        }
        if word(8) != 0 {
            return apply(Self.defaults(generation).merging(flash) { $1 }.merging(batteryBacked) { $1 }, id: 0x09)
        }
        return [ack(0x09)]
    }

    // MARK: Navigation output

    /// The next measurement's output: a navigation solution's messages every
    /// navigation-rate measurements.
    mutating func solution() -> [UInt8] {
        guard !silent, ContinuousClock.now >= quietUntil else { return [] }
        measurement += 1
        timeOfWeek &+= UInt32(ram[Self.measurementRate] ?? 1000)
        advanceSurvey(by: Int(ram[Self.measurementRate] ?? 1000))
        let every = max(1, Int(ram[Self.navigationRate] ?? 1))
        guard measurement % every == 0 else { return [] }
        let solution = measurement / every
        var bytes: [UInt8] = []
        if ram[Self.uart1UBX] == 1 {
            for (message, payload) in navigationMessages() {
                // A survey's progress is of the solution: before its end (NAV-EOE).
                if message == 0x0161, ram[Self.timingMode] == 1 { bytes += surveyMessage() }
                let rate = Int(outputRate(of: message))
                if rate > 0, solution % rate == 0 { bytes += UBXWire.frame(UInt8(message >> 8), UInt8(message & 0xFF), payload) }
            }
        }
        if ram[Self.uart1NMEA] == 1 { bytes += nmea() }
        bytes += rtcmFrames(atSolution: solution)
        return bytes
    }
}
