import GPSFixDevices
import NIOCore

/// The serial receivers the daemon serves, each with its one writer (shared by NTRIP's
/// corrections and configuration) and its answers to configuration, taken from its reading.
struct WritableReceivers: Sendable {
    /// By device path.
    let controls: [String: ReceiverControl]

    /// One for each serial port among `sources`, each writer's queue bounded to `capacity`
    /// bytes, each on a loop of `group` (the daemon's one group).
    init(sources: [any ByteSource], capacity: Int, group: any EventLoopGroup) {
        var controls: [String: ReceiverControl] = [:]
        for case let port as SerialPort in sources {
            let writer = ReceiverWriter(eventLoop: group.next(), capacity: capacity, port: port)
            controls[port.name] = ReceiverControl(writer: writer, replies: ReceiverReplies(), port: port)
        }
        self.controls = controls
    }

    /// `device`'s; `nil` for a source that cannot be written (a file, gpsd).
    subscript(device: String) -> ReceiverControl? { controls[device] }
}
