import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A u-blox receiver modelled after u-blox's interface descriptions, behind a
/// pseudo-terminal, because no receiver is attached to the machines the tests run on.
///
/// It is written from the descriptions, not from GPSFix's configuration code, so that the
/// two can disagree: the ZED-F9P Interface Description (UBX-18010854) for the
/// configuration interface (CFG-VALSET, CFG-VALGET, the keys below) and the M8 receiver
/// description (UBX-13003221) for the legacy messages (CFG-PRT, -MSG, -RATE, -GNSS, -NAV5,
/// -TP5, -TMODE2, -CFG, -RST). What it models:
/// - MON-VER with the generation's protocol version, and SEC-UNIQID with a chip ID of
///   its own (each simulated receiver is a different chip);
/// - its configuration in RAM, battery-backed RAM and flash; a restart reloads RAM from
///   what was saved, so unsaved settings are lost, as on a receiver;
/// - ACK-ACK for what it applies and ACK-NAK for what it refuses: an unknown key (the
///   whole CFG-VALSET is refused), a measurement period under 50 ms, a dynamic model its
///   generation does not have (the M8 has none past airborne 4 g), any message its
///   generation does not have (an M8T's timing mode is CFG-TMODE2, not -TMODE3);
/// - UBX out only while the port's UBX output is on: its answers (acknowledgements, poll
///   replies) are UBX, so with UBX off they are not sent;
/// - a navigation solution every measurement period (NAV-PVT, NAV-DOP, NAV-SAT, NAV-EOE
///   at their rates, and GGA and RMC when NMEA is on), with iTOW advancing by the period;
/// - a base's output: the RTCM 3 message rates (CFG-MSGOUT-RTCM_3X keys, CFG-MSG of class
///   0xF5, which the M8 model takes as an M8P would) and real frames at them, and a
///   survey-in's progress (NAV-SVIN, TIM-SVIN) each solution while one is set;
/// - the port's speed: it reads the line's settings with `tcgetattr` (a pseudo-terminal
///   passes them through and ignores the speed), and while they differ from its own it
///   cannot read what comes and what it sends is noise, as a UART at the wrong speed.
///   After a speed change it acknowledges at the old speed, then switches. The host's line
///   is UART1, or UART2 (`hostPort`): each UART has a speed of its own (CFG-UART1-BAUDRATE,
///   CFG-UART2-BAUDRATE), so a change to the other one's is acknowledged and leaves the
///   line as it was. What it sends on the line follows UART1's output settings either way.
public final class SimulatedUBXReceiver: Sendable {
    public enum Generation: Sendable {
        /// A ZED-F9T speaking protocol 27.31: the configuration interface only.
        case generation9
        /// A NEO-M8T (timing firmware) speaking protocol 18.00: the legacy messages only,
        /// CFG-TMODE2 for its timing mode.
        case m8
    }

    /// The receiver's UART the host's line is wired to.
    public enum HostPort: Sendable {
        case uart1
        /// A generation 9 receiver's second UART, at 38400 bps from the factory.
        case uart2
    }

    /// The follower end's path, which the tool and the daemon open as a serial port.
    public let path: String
    public let generation: Generation
    private let engine: Engine

    /// Starts the receiver at its default speed (38400 bps for generation 9, 9600 for M8)
    /// and its factory configuration. A `silent` receiver never sends anything; one
    /// without `chipID` leaves SEC-UNIQID unanswered, as firmware without it does.
    public init(_ generation: Generation, silent: Bool = false, hostPort: HostPort = .uart1, chipID: Bool = true) throws {
        precondition(hostPort == .uart1 || generation == .generation9, "the M8 is modelled with UART1 only")
        var master: Int32 = -1
        var follower: Int32 = -1
        guard openpty(&master, &follower, nil, nil, nil) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        self.generation = generation
        path = String(cString: ttyname(follower))
        var attributes = termios()
        tcgetattr(follower, &attributes)
        cfmakeraw(&attributes)
        tcsetattr(follower, TCSANOW, &attributes)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        engine = Engine(master: master, follower: follower, state: ReceiverState(generation: generation, silent: silent, hostPort: hostPort, answersChipID: chipID))
    }

    /// Stops the receiver's thread and closes the pseudo-terminal.
    deinit { engine.stop() }

    /// Stops sending for `quiet` and loses what was not saved, then starts again from what
    /// was: a power cycle; with `batteryEmpty`, its battery-backed RAM is lost too.
    public func powerCycle(quiet: Duration = .milliseconds(300), batteryEmpty: Bool = false) {
        engine.state.withLock { state in
            if batteryEmpty { state.batteryBacked = [:] }
            state.restart(after: quiet)
        }
    }

    /// Falls silent for `quiet`, deaf too, and comes back with its settings as they were.
    public func pause(for quiet: Duration) {
        engine.state.withLock { $0.pause(for: quiet) }
    }

    /// Loses the next `count` frames sent to it, as a noisy line does: it neither reads
    /// nor answers them.
    public func loseFrames(_ count: Int) {
        engine.state.withLock { $0.framesToLose = count }
    }

    /// Loses the next `count` frames of `message` (class and id) with a payload of
    /// `length` bytes, as a line that drops one kind of frame now and then: a step of a
    /// conversation fails while the others go through.
    public func loseFrames(of message: UInt16, length: Int, count: Int) {
        engine.state.withLock { $0.messagesToLose[UInt32(message) << 16 | UInt32(length)] = count }
    }

    /// The setting `key` holds in RAM (the configuration interface's key IDs name every
    /// setting of the model, whatever the generation).
    public func setting(_ key: UInt32) -> UInt64? { engine.state.withLock { $0.ram[key] } }

    /// The chip's unique ID, as SEC-UNIQID gives it (five bytes).
    public var chipID: UInt64 { engine.state.withLock { $0.chipID } }

    /// The speed the receiver's port runs at.
    public var speed: Int { engine.state.withLock { $0.speed } }

    /// How many UBX frames it took in while powered, and how often it wrote its flash.
    public var traffic: (framesReceived: Int, flashWrites: Int) { engine.state.withLock { ($0.framesReceived, $0.flashWrites) } }

    /// How many frames of `message` (class and id) with a payload of `length` bytes it took in.
    public func framesReceived(_ message: UInt16, length: Int) -> Int {
        engine.state.withLock { $0.framesByMessage[message]?[length] ?? 0 }
    }

    /// How many configuration messages it acknowledged and refused.
    public var acknowledgements: (acknowledged: Int, refused: Int) { engine.state.withLock { ($0.acknowledged, $0.refused) } }
}

/// The receiver's thread: it reads what the port brings, answers, and sends a navigation
/// solution each measurement period. It holds nothing of the receiver's owner, so that
/// dropping the receiver stops it.
private final class Engine: @unchecked Sendable {
    let master: Int32
    let follower: Int32
    let state: Locked<ReceiverState>
    private let running = Locked(true)
    private let finished = Locked(false)
    private var input: [UInt8] = []

    init(master: Int32, follower: Int32, state: ReceiverState) {
        self.master = master
        self.follower = follower
        self.state = Locked(state)
        let thread = Thread { self.run() }
        thread.name = "simulated u-blox receiver"
        thread.start()
    }

    func stop() {
        running.withLock { $0 = false }
        while !finished.withLock({ $0 }) { usleep(1000) }
        close(master)
        close(follower)
    }

    private func run() {
        defer { finished.withLock { $0 = true } }
        var nextSolution = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 4096)
        while running.withLock({ $0 }) {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            let wait = max(0, min(20, ContinuousClock.now.duration(to: nextSolution).milliseconds))
            if poll(&descriptor, 1, Int32(wait)) > 0, descriptor.revents & Int16(POLLIN) != 0 {
                let count = read(master, &buffer, buffer.count)
                if count > 0 { received(Array(buffer[0..<count])) }
            }
            if ContinuousClock.now >= nextSolution {
                let (bytes, period) = state.withLock { state in (state.solution(), state.measurementPeriod) }
                send(bytes)
                nextSolution = nextSolution.advanced(by: period)
                if ContinuousClock.now > nextSolution { nextSolution = ContinuousClock.now.advanced(by: period) }
            }
        }
    }

    /// Whether the line is set to the receiver's speed (a pseudo-terminal's master reports
    /// its follower's settings).
    private var lineMatches: Bool {
        var attributes = termios()
        guard tcgetattr(master, &attributes) == 0 else { return false }
        return Int(exactly: Self.bitsPerSecond(cfgetospeed(&attributes)) ?? 0) == state.withLock { $0.speed }
    }

    private func received(_ bytes: [UInt8]) {
        guard lineMatches else { return }  // framing errors: nothing readable arrives
        input += bytes
        while let frame = UBXWire.nextFrame(in: &input) {
            let answers = state.withLock { $0.handle(frame) }
            for answer in answers {
                switch answer {
                case .bytes(let bytes): send(bytes)
                case .speed(let speed):
                    tcdrain(master)
                    state.withLock { $0.speed = speed }
                }
            }
        }
        if input.count > 8192 { input.removeFirst(input.count - 8192) }
    }

    private func send(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        // At the wrong speed the far end reads noise; a full buffer (nobody reading) drops,
        // as a UART with nobody listening does.
        let sent = lineMatches ? bytes : bytes.map { $0 ^ 0x5A }
        _ = sent.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    static func bitsPerSecond(_ speed: speed_t) -> Int? {
        let table: [(speed_t, Int)] = [
            (speed_t(B4800), 4800), (speed_t(B9600), 9600), (speed_t(B19200), 19200), (speed_t(B38400), 38400),
            (speed_t(B57600), 57600), (speed_t(B115200), 115_200), (speed_t(B230400), 230_400),
            (speed_t(B460800), 460_800), (speed_t(B921600), 921_600),
        ]
        return table.first { $0.0 == speed }?.1
    }
}

/// UBX framing, as the interface descriptions define it: `B5 62`, class, id, a
/// little-endian length, the payload, and the 8-bit Fletcher checksum over class to payload.
enum UBXWire {
    static func frame(_ messageClass: UInt8, _ id: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let body = [messageClass, id, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
        var a: UInt8 = 0
        var b: UInt8 = 0
        for byte in body {
            a &+= byte
            b &+= a
        }
        return [0xB5, 0x62] + body + [a, b]
    }

    /// Takes the first whole, checksummed frame out of `input`: class, id and payload.
    static func nextFrame(in input: inout [UInt8]) -> (messageClass: UInt8, id: UInt8, payload: [UInt8])? {
        while true {
            guard let start = input.indices.first(where: { input[$0] == 0xB5 && $0 + 1 < input.count && input[$0 + 1] == 0x62 }) else {
                if input.last != 0xB5 { input.removeAll() }
                return nil
            }
            input.removeFirst(start)
            guard input.count >= 8 else { return nil }
            let length = Int(input[4]) | Int(input[5]) << 8
            guard input.count >= length + 8 else { return nil }
            let candidate = Array(input[0..<(length + 8)])
            if frame(candidate[2], candidate[3], Array(candidate[6..<(6 + length)])) == candidate {
                input.removeFirst(length + 8)
                return (candidate[2], candidate[3], Array(candidate[6..<(6 + length)]))
            }
            input.removeFirst(1)
        }
    }
}

extension Duration {
    fileprivate var milliseconds: Int { Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000) }
}
