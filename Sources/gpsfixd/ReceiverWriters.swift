import GPSFixDevices
import NIOPosix

/// The one writer of each serial receiver the daemon serves, shared by everything that
/// writes to it: NTRIP's corrections and the receiver's configuration.
struct ReceiverWriters: Sendable {
    private let writers: [String: ReceiverWriter]

    /// A writer for each serial port among `sources`, each queue bounded to `capacity` bytes.
    init(sources: [any ByteSource], capacity: Int) {
        var writers: [String: ReceiverWriter] = [:]
        for case let port as SerialPort in sources {
            writers[port.name] = ReceiverWriter(
                eventLoop: MultiThreadedEventLoopGroup.singleton.any(), capacity: capacity,
                openReceiver: { port.duplicateOpenDescriptor() })
        }
        self.writers = writers
    }

    /// The writer of `device`; `nil` for a source that cannot be written (a file, gpsd).
    subscript(device: String) -> ReceiverWriter? { writers[device] }
}
