#if canImport(Glibc)
import Glibc
#endif
import UBXConfiguration

/// A receiver's serial port held open for a configuration conversation: exclusively and in
/// raw mode, as the daemon holds it, at a speed the conversation may change. The port's
/// settings are restored when the link closes.
public final class SerialReceiverLink: ReceiverLink {
    public let path: String
    private var port: SerialPort
    private var descriptor: Int32
    private let original: termios

    /// Opens `path` at `speed` bits per second.
    public init(path: String, speed: Int) throws(DeviceError) {
        self.path = path
        port = SerialPort(path: path, settings: SerialSettings(speed: speed))
        (descriptor, original) = try port.open()
    }

    /// Opens `path` at the line its receiver is found talking at, kept open from the
    /// search (``SerialPort/openFindingSpeed(stopped:)``); `nil` when no setting gives frames.
    public init?(findingSpeedOf path: String) throws(DeviceError) {
        let searched = SerialPort(path: path)
        guard let (opened, found) = try searched.openFindingSpeed(stopped: { false }) else { return nil }
        self.path = path
        var settings = SerialSettings()
        settings.take(found.line)
        port = SerialPort(path: path, settings: settings)
        (descriptor, original) = opened
    }

    deinit { close() }

    /// Restores the port's settings and closes it; later calls do nothing.
    public func close() {
        guard descriptor >= 0 else { return }
        try? Termios.set(original, on: descriptor, path: path)
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// The speed the link runs at.
    public var speed: Int { port.settings.speed ?? 0 }

    public func send(_ frame: [UInt8]) throws {
        var sent = 0
        while sent < frame.count {
            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            guard poll(&ready, 1, 2000) > 0 else { throw DeviceError.from(errno: ETIMEDOUT, path: path, call: "write") }
            let count = frame[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno != EAGAIN, errno != EINTR { throw DeviceError.from(errno: errno, path: path, call: "write") }
            sent += max(0, count)
        }
    }

    public func receive(timeout: Duration) throws -> [UInt8] {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, timeout.pollTimeout) > 0 else { return [] }
        guard ready.revents & Int16(POLLIN) != 0 else {
            throw DeviceError.from(errno: ready.revents & Int16(POLLHUP) != 0 ? ENXIO : EIO, path: path, call: "poll")
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0, errno != EAGAIN, errno != EINTR { throw DeviceError.from(errno: errno, path: path, call: "read") }
        return Array(buffer.prefix(max(0, count)))
    }

    public func changeSpeed(to bps: Int) throws {
        tcdrain(descriptor)
        port.settings.speed = bps
        try Termios.apply(port.settings, to: descriptor, path: path)
    }
}
