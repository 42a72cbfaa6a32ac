import ReceiverFraming
import UBX

/// The byte path to a receiver: a serial port the tool opened, or the daemon's control
/// socket while the daemon holds the port. Tests swap in a simulated receiver.
public protocol ReceiverLink: AnyObject {
    /// Sends one whole frame.
    func send(_ frame: [UInt8]) throws
    /// What the receiver sent within `timeout`; empty when it sent nothing.
    func receive(timeout: Duration) throws -> [UInt8]
    /// Switches the link to `bps`, after the receiver was told to switch to it.
    func changeSpeed(to bps: Int) throws
    /// The speed the link runs at; 0 when it has none (USB) or does not know it.
    var speed: Int { get }
}

/// Why a configuration conversation stopped.
public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The receiver sent no answer to `what` within the time allowed, after every try.
    case silent(String, attempts: Int)
    /// The receiver refused (ACK-NAK) the frame that carries `setting`.
    case refused(String)
    /// The receiver cannot do what is asked (a constellation it does not have, a speed on USB).
    case unsupported(String)
    /// The receiver answered, but not in a way its interface description allows.
    case malformed(String)
    /// The receiver did not switch to the new speed (the frame telling it to was lost, or
    /// it switched and came back after a power cycle): it answers at `answersAt`, where
    /// the link went back to.
    case speedNotTaken(Int, answersAt: Int)

    public var description: String {
        switch self {
        case .silent(let what, let attempts):
            "the receiver did not answer \(what) (\(attempts) \(attempts == 1 ? "try" : "tries")): is it a u-blox receiver, at this speed?"
        case .refused(let setting): "the receiver refused \(setting)"
        case .unsupported(let what): what
        case .malformed(let what): "the receiver's answer to \(what) makes no sense"
        case .speedNotTaken(let speed, let answersAt):
            "the receiver did not switch to \(speed) bps for --baud: it still answers at \(answersAt) bps, where the port stays"
        }
    }
}

/// Requests and their answers over a ``ReceiverLink``: each request waits for its answer
/// (a poll's reply, or ACK-ACK/ACK-NAK) for ``answerTimeout``, and is sent again up to
/// ``attempts`` times in all. Whatever else the receiver sends meanwhile (its navigation
/// messages, NMEA) is read and passed over, through a framer of bounded size.
public final class ReceiverConversation<C: Clock> where C.Duration == Duration {
    /// The bytes' path to the receiver.
    public let link: any ReceiverLink
    /// What the waits for answers are measured on.
    public let clock: C
    /// How long each request waits for its answer.
    public var answerTimeout: Duration
    /// How many times a request is sent before the receiver is taken for silent.
    public var attempts: Int
    private let framer = ReceiverFramer(maximumUBXPayload: 4096)
    /// UBX frames that arrived after an answer, not yet looked at.
    private var unread: [[UInt8]] = []

    public init(link: any ReceiverLink, clock: C, answerTimeout: Duration = .seconds(1), attempts: Int = 3) {
        self.link = link
        self.clock = clock
        self.answerTimeout = answerTimeout
        self.attempts = attempts
    }

    /// Sends `frame` and returns the payload of the first `answer` message that answers it:
    /// a poll that names what it asks (CFG-MSG's message, CFG-TP5's pulse, CFG-PRT's port)
    /// is answered by a reply that begins with the same; a CFG-VALGET, by one that carries
    /// its first key first.
    public func poll(_ frame: [UInt8], answer: UInt16, what: String) throws -> [UInt8] {
        let polled = Self.message(of: frame)
        let asked = Array(frame[6..<(frame.count - 2)])
        let reply = try request(frame, what: what) { received -> Result<[UInt8], ConfigurationError>? in
            if received.message == answer, Self.reply(Array(received.payload), answers: asked, of: answer) {
                return .success(Array(received.payload))
            }
            if Acknowledgement(received, of: polled) == .refused { return .failure(.refused(what)) }
            return nil
        }
        let payload = try reply.get()
        // A configuration poll is answered, then acknowledged: wait for that too, so that it
        // is not taken for the acknowledgement of a write that follows.
        if frame[2] == 0x06 { _ = try awaitAnswer(for: answerTimeout) { Acknowledgement($0, of: polled) } }
        return payload
    }

    /// Whether `reply` answers a poll whose payload was `asked`.
    private static func reply(_ reply: [UInt8], answers asked: [UInt8], of message: UInt16) -> Bool {
        guard !reply.isEmpty else { return false }  // a poll, echoed
        if message == ValueMessages.valueGet {
            return reply[0] == 1 && reply.count >= 8 && asked.count >= 8 && reply[4..<8] == asked[4..<8]
        }
        return reply.starts(with: asked)
    }

    /// Sends `frame` and waits for its acknowledgement; a refusal names `setting`.
    public func write(_ frame: [UInt8], setting: String) throws {
        let message = Self.message(of: frame)
        let answer = try request(frame, what: setting) { Acknowledgement($0, of: message) }
        if answer == .refused { throw ConfigurationError.refused(setting) }
    }

    /// Sends `frame` without waiting for anything (a reset, which is not acknowledged).
    public func send(_ frame: [UInt8]) throws {
        try link.send(frame)
    }

    /// Reads for up to `duration`, dropping what comes: what a receiver sent before a
    /// speed change is noise after it.
    public func drain(for duration: Duration) throws {
        _ = try awaitAnswer(for: duration) { _ in Optional<Void>.none }
        framer.reset()
        unread.removeAll()
    }

    /// Sends `frame` until `match` finds its answer, ``attempts`` times at most. Frames read
    /// before it was sent are not its answers; after a second copy was answered, the
    /// answer to the other copy is waited for and dropped, so that it is not taken for the
    /// answer to the next request.
    private func request<Answer>(_ frame: [UInt8], what: String, match: (UBXFrame) -> Answer?) throws -> Answer {
        unread.removeAll()
        for attempt in 0..<attempts {
            try link.send(frame)
            if let answer = try awaitAnswer(for: answerTimeout, match: match) {
                if attempt > 0 { _ = try awaitAnswer(for: answerTimeout, match: match) }
                return answer
            }
        }
        throw ConfigurationError.silent(what, attempts: attempts)
    }

    /// The first answer `match` finds among the frames read before and not yet looked at,
    /// then in what arrives within `duration`.
    private func awaitAnswer<Answer>(for duration: Duration, match: (UBXFrame) -> Answer?) throws -> Answer? {
        while !unread.isEmpty {
            let frame = unread.removeFirst()
            if let answer = frame.withUnsafeBytes({ UBXFrame(validating: $0).flatMap(match) }) { return answer }
        }
        let deadline = clock.now.advanced(by: duration)
        var found: Answer?
        while found == nil {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { break }
            let bytes = try link.receive(timeout: left)
            bytes.withUnsafeBytes { chunk in
                framer.feed(chunk) { frame in
                    guard case .ubx(let ubx) = frame else { return }
                    if found == nil {
                        found = match(ubx)
                    } else if unread.count < Self.unreadLimit {
                        // Read with the answer, in the same chunk: the next request's, perhaps.
                        unread.append(Array(ubx.bytes))
                    }
                }
            }
        }
        return found
    }

    /// How many UBX frames read after an answer are kept for the next request (a receiver
    /// sends an acknowledgement or two after an answer, and its navigation messages).
    private static var unreadLimit: Int { 16 }

    private static func message(of frame: [UInt8]) -> UInt16 { UInt16(frame[2]) << 8 | UInt16(frame[3]) }
}

/// Decodes a payload that ``ReceiverConversation/poll(_:answer:what:)`` returned with one
/// of the `UBX` module's messages, which read whole frames.
func decode<Message>(_ message: UInt16, _ payload: [UInt8], as decode: (UBXFrame) -> Message?) -> Message? {
    let bytes = UBXFrame.encode(messageClass: UInt8(message >> 8), id: UInt8(message & 0xFF), payload: payload)
    return bytes.withUnsafeBytes { UBXFrame(validating: $0).flatMap(decode) }
}

extension ReceiverConversation {
    /// The current payload of legacy `message` (polled with `payload`), at least `length`
    /// bytes long.
    func poll(_ message: UInt16, length: Int, what: String, payload: [UInt8] = []) throws -> [UInt8] {
        let reply = try poll(LegacyMessages.frame(message, payload), answer: message, what: what)
        guard reply.count >= length else { throw ConfigurationError.malformed(what) }
        return reply
    }

    /// The same; `nil` when the receiver refuses the poll (it lacks the feature).
    func optionalPoll(_ message: UInt16, length: Int, what: String, payload: [UInt8] = []) throws -> [UInt8]? {
        do {
            return try poll(message, length: length, what: what, payload: payload)
        } catch ConfigurationError.refused {
            return nil
        }
    }

    /// The legacy timing-mode message the receiver answers and its payload: CFG-TMODE3
    /// (protocol 20 on, high-precision and base receivers), else CFG-TMODE2 (timing
    /// receivers: LEA-6T, NEO-M8T); `nil` for a receiver with neither.
    func timingModeMessage() throws -> (message: UInt16, payload: [UInt8])? {
        if let current = try optionalPoll(LegacyMessages.timingMode3, length: 40, what: "CFG-TMODE3") {
            return (LegacyMessages.timingMode3, current)
        }
        return try optionalPoll(LegacyMessages.timingMode2, length: 28, what: "CFG-TMODE2").map { (LegacyMessages.timingMode2, $0) }
    }
}
