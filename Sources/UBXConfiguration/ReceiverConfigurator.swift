import UBX

/// One frame of a configuration, what it carries and how the receiver shows it took it.
public struct ConfigurationStep: Sendable {
    /// How the receiver shows that a step took.
    public enum Confirmation: Hashable, Sendable {
        /// ACK-ACK.
        case acknowledgement
        /// It answers at `bps` afterwards (its acknowledgement, at either speed, may be lost).
        case answersAt(Int)
        /// Nothing can confirm it (it turns off the UBX the receiver answers in): only a
        /// refusal, if one comes, fails it.
        case unacknowledged
    }

    /// The options this frame carries, to name in an error (`--rate, --gnss`).
    public var settings: String
    /// The whole UBX frame, as sent.
    public var frame: [UInt8]
    /// What shows that the receiver took it.
    public var confirmation: Confirmation

    /// Whether the frame writes the receiver's flash: CFG-CFG saving to it or clearing it
    /// (its device mask naming flash, or absent: every device), CFG-VALSET to its flash
    /// layer. Each copy sent is another write.
    var writesFlash: Bool {
        guard frame.count >= 8, frame[2] == 0x06 else { return false }
        let payload = frame[6..<(frame.count - 2)]
        switch frame[3] {
        case 0x09:
            guard payload.count >= 12 else { return false }
            let start = payload.startIndex
            let clearsOrSaves = payload[start..<(start + 8)].contains { $0 != 0 }
            let flash = payload.count < 13 || payload[start + 12] & 0x16 != 0
            return clearsOrSaves && flash
        case 0x8A: return payload.count >= 2 && payload[payload.startIndex + 1] & ConfigurationLayers.flash.rawValue != 0
        default: return false
        }
    }
}

/// How a receiver restarts: which of its navigation data it keeps, or its factory settings.
public enum ReceiverRestart: String, Sendable, CaseIterable {
    case hot, warm, cold, factory

    /// CFG-RST's navBbrMask: hot keeps everything, warm clears the ephemerides, cold all.
    var navigationDataCleared: UInt16 {
        switch self {
        case .hot: 0x0000
        case .warm: 0x0001
        case .cold, .factory: 0xFFFF
        }
    }
}

/// Configures a u-blox receiver by intent, over a ``ReceiverConversation``: finds its
/// generation by asking (MON-VER's protocol version), then writes what ``ReceiverSettings``
/// asks, with the configuration interface from protocol 27 on (one CFG-VALSET transaction)
/// or the legacy messages before it, in an order that keeps the port reachable (its
/// speed last).
public final class ReceiverConfigurator<C: Clock> where C.Duration == Duration {
    public let conversation: ReceiverConversation<C>
    /// The receiver's port the link reaches (the configuration interface names it; the
    /// legacy messages act on the port they arrive on).
    public let port: ReceiverPort
    /// What MON-VER said, once ``identify()`` ran.
    public private(set) var version: MonVER?
    /// What SEC-UNIQID said, once asked.
    private var chipAnswer: String??

    public init(conversation: ReceiverConversation<C>, port: ReceiverPort) {
        self.conversation = conversation
        self.port = port
    }

    /// Asks the receiver who it is (MON-VER, read-only).
    @discardableResult
    public func identify() throws -> MonVER {
        let payload = try conversation.poll(MonVER.message, length: 40, what: "MON-VER (who it is)")
        guard let version = decode(MonVER.message, payload, as: MonVER.init) else { throw ConfigurationError.malformed("MON-VER") }
        self.version = version
        return version
    }

    /// The protocol version MON-VER gave. u-blox 5 and 6 do not say it: theirs is their
    /// firmware's major version plus 6 (firmware 7.03 speaks protocol 13.03).
    public var protocolVersion: Double {
        if let stated = version?.protocolVersion { return stated }
        let firmware = version?.software.prefix { $0 == "." || $0.isNumber }
        return firmware.flatMap { Double($0) }.map { $0 + 6 } ?? 12
    }

    /// The chip's unique ID (SEC-UNIQID, read-only, asked once), from protocol 18 on (the
    /// M8's first with it); `nil` before, and from a receiver that refuses, does not answer
    /// or answers what is not the message, so that a firmware without it is still
    /// configured. Its keeper then tells it by MON-VER alone: the one time a receiver that
    /// has an ID does not say it, its table is saved to flash once more (under that
    /// identity, remembered like the others).
    public var chipID: String? {
        get throws {
            if let chipAnswer { return chipAnswer }
            if version == nil { try identify() }
            var answer: String?
            if protocolVersion >= 18 {
                do {
                    let payload = try conversation.poll(SecUniqueID.message, length: 9, what: UBXMessageName.of(SecUniqueID.message))
                    answer = decode(SecUniqueID.message, payload, as: SecUniqueID.init)?.hex
                } catch ConfigurationError.refused, ConfigurationError.silent, ConfigurationError.malformed {}
            }
            chipAnswer = .some(answer)
            return answer
        }
    }

    /// Whether the receiver has the configuration interface (CFG-VALSET, protocol 27 on).
    public var usesConfigurationInterface: Bool { protocolVersion >= 27 }

    /// The frames that apply `settings` (and with flash among `layers`, keep them over a
    /// power cycle), in the order they go; `saving`, when given, is what goes to flash in
    /// place of `settings` (a whole table, of which `settings` is what differs: a legacy
    /// receiver saves all it runs anyway). Legacy receivers are polled (read-only) for the
    /// parts a message sets beside the asked ones.
    public func plan(_ settings: ReceiverSettings, layers: ConfigurationLayers, saving: ReceiverSettings? = nil) throws
        -> [ConfigurationStep]
    {
        if version == nil { try identify() }
        return if usesConfigurationInterface {
            // Nothing to set but a save: what runs in RAM is saved whole (CFG-CFG).
            settings.isEmpty && saving == nil && layers.contains(.flash)
                ? [ConfigurationStep(settings: "--save", frame: LegacyMessages.save(toFlash: true), confirmation: .acknowledgement)]
                : try ConfigurationPlan.valueSteps(settings, saving: saving, port: port, layers: layers)
        } else {
            try LegacyPlan(conversation: conversation, protocolVersion: protocolVersion).steps(settings, layers: layers)
        }
    }

    /// How long the acknowledgement of a write to flash is awaited: erasing and writing it
    /// takes a receiver up to a few seconds, during which it answers nothing.
    static var flashWriteTime: Duration { .seconds(5) }

    /// Sends `steps` in order, each confirmed before the next; stops at the first refusal
    /// or silence, naming the settings of that step. A step that writes flash is sent once,
    /// `beforeWritingFlash` called just before it: what is counted as a write to flash is
    /// what reached the line.
    public func apply(_ steps: [ConfigurationStep], beforeWritingFlash: () -> Void = {}) throws {
        for step in steps {
            if step.writesFlash { beforeWritingFlash() }
            switch step.confirmation {
            case .acknowledgement where step.writesFlash:
                try writeFlash(step.frame, setting: step.settings)
            case .acknowledgement:
                try conversation.write(step.frame, setting: step.settings)
            case .answersAt(let speed):
                try changeSpeed(with: step, to: speed)
            case .unacknowledged:
                try once {
                    do {
                        try conversation.write(step.frame, setting: step.settings)
                    } catch ConfigurationError.silent {
                        // As expected: the receiver answers in UBX no longer.
                    }
                }
            }
        }
    }

    /// Restarts the receiver; returns once it answers again. A factory restart first
    /// clears and reloads every saved setting (CFG-CFG, acknowledged).
    public func restart(_ kind: ReceiverRestart) throws {
        if kind == .factory {
            try writeFlash(LegacyMessages.restoreDefaults, setting: "--factory")
        }
        // A controlled software reset (resetMode 1): the receiver sends no acknowledgement.
        try conversation.send(LegacyMessages.restart(navBbrMask: kind.navigationDataCleared, resetMode: 0x01))
        try conversation.drain(for: .milliseconds(500))
        try identify()
    }

    private func changeSpeed(with step: ConfigurationStep, to speed: Int) throws {
        let previous = conversation.link.speed
        // The acknowledgement comes at the old speed or the new one, or is lost in the
        // switch; a refusal comes before the switch. Sent once: a second copy would reach
        // a receiver already at the new speed as noise.
        try once {
            do {
                try conversation.write(step.frame, setting: step.settings)
            } catch ConfigurationError.silent {
                // Either way, the receiver must answer at the new speed.
            }
        }
        try conversation.link.changeSpeed(to: speed)
        try conversation.drain(for: .milliseconds(100))
        do {
            try identify()
        } catch ConfigurationError.silent {
            let silent = ConfigurationError.silent("at \(speed) bps after \(step.settings)", attempts: conversation.attempts)
            // The switch may never have reached the receiver (the frame lost on the line):
            // one that answers at the old speed still has the link back there, rather than
            // deaf to it. One that answers at neither has the link at the speed it was told.
            guard previous > 0, previous != speed else { throw silent }
            try conversation.link.changeSpeed(to: previous)
            try conversation.drain(for: .milliseconds(100))
            if (try? identify()) != nil { throw ConfigurationError.speedNotTaken(speed, answersAt: previous) }
            try conversation.link.changeSpeed(to: speed)
            throw silent
        }
    }

    /// Sends `frame`, which writes flash, once, and waits as long as a flash write takes
    /// for its acknowledgement: a second copy would be a second write.
    private func writeFlash(_ frame: [UInt8], setting: String) throws {
        try once(waiting: Self.flashWriteTime) { try conversation.write(frame, setting: setting) }
    }

    /// Runs `body` with every request sent once only, its answer awaited for `waiting` when
    /// that is longer than the conversation's wait.
    private func once(waiting: Duration? = nil, _ body: () throws -> Void) throws {
        let (attempts, answerTimeout) = (conversation.attempts, conversation.answerTimeout)
        conversation.attempts = 1
        if let waiting { conversation.answerTimeout = max(answerTimeout, waiting) }
        defer { (conversation.attempts, conversation.answerTimeout) = (attempts, answerTimeout) }
        try body()
    }
}
