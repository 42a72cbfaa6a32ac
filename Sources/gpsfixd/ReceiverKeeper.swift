import Dispatch
import GPSFix
import GPSFixDevices
import Logging
import NIOConcurrencyHelpers
import UBXConfiguration

/// Keeps a u-blox receiver as its `[receiver]` table says: each time the device is opened,
/// or speaks again after a silence (a receiver that lost power comes back with what it
/// saved), the receiver is asked for its settings and, where they differ, given the
/// table's, in RAM and battery-backed RAM (flash only with `save`, as flash wears).
///
/// One conversation at a time, on a queue of its own (it blocks on the receiver's
/// answers), through the device's one writer and its reading (``DaemonReceiverLink``).
/// When `gpsfix ubx` holds the receiver, the keeper's turn comes when that conversation
/// ends. What changed is logged once; whether the receiver is as configured is the status
/// line the doctor reads.
final class ReceiverKeeper: Sendable {
    let control: ReceiverControl
    let receiverPort: ReceiverPort
    let settings: ReceiverSettings
    let save: Bool
    private let logger: Logger
    private let queue: DispatchQueue
    var port: SerialPort { control.port }
    private let state = NIOLockedValueBox(State())

    private struct State {
        var running = false
        /// The device opened again while a conversation ran: run once more after it.
        var again = false
        /// Another conversation held the receiver: start when it ends.
        var waiting = false
        var status = "not yet configured"
        /// The last failure logged, so an unchanged one is not logged again.
        var lastFailure: String?
    }

    init(control: ReceiverControl, receiverPort: ReceiverPort, settings: ReceiverSettings, save: Bool, logger: Logger) {
        self.control = control
        self.receiverPort = receiverPort
        self.settings = settings
        self.save = save
        self.logger = logger
        queue = DispatchQueue(label: "receiver keeper \(control.port.path)")
        control.replies.onConversationEnded { [weak self] in self?.turnCame() }
    }

    /// A conversation ended: if the keeper found the receiver taken, its turn has come.
    private func turnCame() {
        let waited = state.withLockedValue { state in
            defer { state.waiting = false }
            return state.waiting
        }
        if waited { start() }
    }

    /// `receiver /dev/ttyACM0: as configured`, or what differs, or why it could not be.
    var status: String { "\(port.path): " + state.withLockedValue { $0.status } }

    /// Takes the device's events: an opening or a return from silence starts a conversation.
    func take(_ event: DeviceEvent) {
        switch event.kind {
        case .activated, .recovered, .resumed: start()
        default: break
        }
    }

    private func start() {
        let idle = state.withLockedValue { state -> Bool in
            if state.running { state.again = true }
            defer { state.running = true }
            return !state.running
        }
        guard idle else { return }
        queue.async { [self] in
            repeat {
                state.withLockedValue { $0.again = false }
                guard control.replies.beginConversation() else {
                    // Another holds the receiver: our turn comes when it ends.
                    control.replies.onConversationEnded { [weak self] in self?.start() }
                    state.withLockedValue { $0.running = false }
                    return
                }
                converse()
                control.replies.endConversation()
            } while state.withLockedValue { state in
                state.running = state.again
                return state.again
            }
        }
    }

    /// One conversation: read, apply what differs, read again. A receiver told to send NMEA
    /// only answers no UBX afterwards: it is given the table, not read back.
    private func converse() {
        let layers: ConfigurationLayers = save ? [.ram, .batteryBacked, .flash] : [.ram, .batteryBacked]
        let replies = control.replies
        let silencing = settings.output == .nmea
        do {
            let status = try replies.listening { () throws -> String in
                let conversation = ReceiverConversation(link: DaemonReceiverLink(control: control), clock: ContinuousClock())
                let configurator = ReceiverConfigurator(conversation: conversation, port: receiverPort)
                let differences: [String]
                do {
                    differences = try configurator.report().differences(from: settings)
                } catch UBXConfiguration.ConfigurationError.silent where silencing {
                    return "sends no UBX (output = nmea), so it cannot be read back"
                }
                guard !differences.isEmpty else { return "as configured" }
                try configurator.apply(try configurator.plan(settings, layers: layers))
                let left = silencing ? [] : try configurator.report().differences(from: settings)
                logger.info(
                    "receiver configured as its table says: \(differences.joined(separator: "; "))",
                    metadata: ["device": "\(port.path)"])
                return left.isEmpty ? "as configured" : "differs from its table: \(left.joined(separator: "; "))"
            }
            state.withLockedValue { state in
                state.status = status
                state.lastFailure = nil
            }
        } catch {
            let failure = "\(error)"
            let isNew = state.withLockedValue { state -> Bool in
                state.status = "not configured as its table says: \(failure)"
                defer { state.lastFailure = failure }
                return state.lastFailure != failure
            }
            if isNew { logger.warning("receiver not configured as its table says: \(failure)", metadata: ["device": "\(port.path)"]) }
        }
    }
}
