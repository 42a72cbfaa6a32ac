#if canImport(Glibc)
import Glibc
#endif
import GPSFixDevices
import UBXConfiguration

/// The path to a receiver the daemon holds: its control socket (see the daemon's
/// `--control-socket`). Frames go to the daemon, which writes them through the receiver's
/// one writer; the receiver's answers come back the same way.
final class DaemonControlLink: ReceiverLink {
    /// Why the daemon would not take the conversation.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    private var descriptor: Int32
    private var pending: [UInt8] = []
    /// The port's speed as the daemon reads it.
    private(set) var speed: Int

    /// The control socket exists but this user may not use it (it is the daemon's user's
    /// and root's).
    struct Denied: Error {
        let path: String
    }

    /// Connects to the daemon at `path` and asks for `device`, then, if the daemon does not
    /// know it by that name, for the device its links resolve to (the daemon compares
    /// names only: it resolved its own at start); `nil` when no daemon listens there or it
    /// serves neither. Throws ``Denied`` when this user may not connect, ``Refusal`` when
    /// the daemon refuses (another conversation, a port not open).
    static func connect(path: String, device: String) throws -> DaemonControlLink? {
        if let link = try connect(path: path, asking: device) { return link }
        guard let resolved = SerialPort.resolved(device), resolved != device else { return nil }
        return try connect(path: path, asking: resolved)
    }

    private static func connect(path: String, asking device: String) throws -> DaemonControlLink? {
        let descriptor: Int32
        do {
            descriptor = try UnixSocket.connect(path: path)
        } catch {
            if error.code == EACCES || error.code == EPERM { throw Denied(path: path) }
            return nil
        }
        // A daemon that stops answering cannot hang the tool.
        setSendTimeout(of: descriptor, seconds: 5)
        let link = DaemonControlLink(descriptor: descriptor)
        // A daemon that refuses this user says why, and closes: read that first.
        try? link.write(ControlMessage(type: UInt8(ascii: "H"), payload: Array(device.utf8)))
        do {
            link.speed = try link.expectOK()
        } catch is NotServed {
            return nil
        }
        return link
    }

    /// The daemon does not serve the device asked for.
    private struct NotServed: Error {}

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        speed = 0
    }

    deinit { close() }

    /// Ends the conversation; later calls do nothing.
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    func send(_ frame: [UInt8]) throws {
        try write(ControlMessage(type: UInt8(ascii: "F"), payload: frame))
    }

    func receive(timeout: Duration) throws -> [UInt8] {
        guard let message = try read(timeout: timeout) else { return [] }
        if message.type == UInt8(ascii: "E") { throw Refusal(description: String(decoding: message.payload, as: UTF8.self)) }
        return message.type == UInt8(ascii: "F") ? message.payload : []
    }

    func changeSpeed(to bps: Int) throws {
        try write(.speed(bps))
        speed = try expectOK()
    }

    /// Waits for the daemon's `O` (passing over the receiver's frames meanwhile); its speed.
    /// After a `W` (another conversation holds the receiver), for as long as a turn lasts.
    private func expectOK() throws -> Int {
        var timeout = Duration.seconds(5)
        while let message = try read(timeout: timeout) {
            switch message.type {
            case UInt8(ascii: "O"): return message.number ?? 0
            // The daemon's turn limit, and a margin for the answer's way.
            case UInt8(ascii: "W"): timeout = .seconds((message.number ?? 60) + 5)
            case UInt8(ascii: "N"): throw NotServed()
            case UInt8(ascii: "E"): throw Refusal(description: "the daemon: " + String(decoding: message.payload, as: UTF8.self))
            default: continue
            }
        }
        throw Refusal(description: "the daemon did not answer on its control socket")
    }

    private func write(_ message: ControlMessage) throws {
        let bytes = message.bytes
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Refusal(description: "the daemon closed its control socket") }
            sent += count
        }
    }

    /// The next whole message within `timeout`; `nil` when none came.
    private func read(timeout: Duration) throws -> ControlMessage? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if let message = ControlMessage.take(from: &pending) { return message }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, left.pollTimeout) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw Refusal(description: "the daemon closed its control socket") }
            pending += buffer[0..<count]
        }
    }
}
