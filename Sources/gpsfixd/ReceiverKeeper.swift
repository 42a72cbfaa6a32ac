#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import GPSFixDevices
import GPSFixServer
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import UBXConfiguration

/// Keeps a u-blox receiver as its `[receiver]` table says: each time the device is opened,
/// or speaks again after a silence (a receiver that lost power comes back with what it
/// saved), the receiver is asked for its settings and, where they differ, given the
/// table's, in RAM and battery-backed RAM (flash only with `save`, as flash wears).
///
/// One conversation at a time, on SwiftNIO's blocking thread pool, through the device's
/// one writer and its reading (``DaemonReceiverLink``). What changed is logged once;
/// whether the receiver is as configured is the status line the doctor reads.
final class ReceiverKeeper: Sendable {
    let control: ReceiverControl
    let receiverPort: ReceiverPort
    let settings: ReceiverSettings
    let save: Bool
    private let logger: Logger
    var port: SerialPort { control.port }
    private let state = NIOLockedValueBox(State())

    private struct State {
        var running = false
        /// The device opened again while a conversation ran: run once more after it.
        var again = false
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
        NIOThreadPool.singleton.submit { [self] _ in
            repeat {
                state.withLockedValue { $0.again = false }
                converse()
            } while state.withLockedValue { state in
                state.running = state.again
                return state.again
            }
        }
    }

    /// One conversation: read, apply what differs, read again. It waits up to a minute for
    /// one through the control socket to end.
    private func converse() {
        let layers: ConfigurationLayers = save ? [.ram, .batteryBacked, .flash] : [.ram, .batteryBacked]
        let replies = control.replies
        var waited = 0
        while !replies.beginConversation() {
            guard waited < 600 else {
                state.withLockedValue { $0.status = "not configured: another conversation held the receiver for a minute" }
                return
            }
            usleep(100_000)
            waited += 1
        }
        defer { replies.endConversation() }
        do {
            let status = try replies.listening { () throws -> String in
                let link = DaemonReceiverLink(writer: control.writer, replies: replies, port: port)
                let conversation = ReceiverConversation(link: link, clock: ContinuousClock())
                let configurator = ReceiverConfigurator(conversation: conversation, port: receiverPort)
                let differences = try configurator.report().differences(from: settings)
                guard !differences.isEmpty else { return "as configured" }
                try configurator.apply(try configurator.plan(settings, layers: layers))
                let left = try configurator.report().differences(from: settings)
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
