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

    /// Connects to the daemon at `path` and asks for `device`; `nil` when no daemon listens
    /// there. Throws when the daemon refuses (another conversation, a user not allowed).
    static func connect(path: String, device: String) throws -> DaemonControlLink? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        let link = DaemonControlLink(descriptor: descriptor)
        // A daemon that refuses this user says why, and closes: read that first.
        try? link.write(ControlMessage(type: UInt8(ascii: "H"), payload: Array(device.utf8)))
        link.speed = try link.expectOK()
        return link
    }

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
    private func expectOK() throws -> Int {
        while let message = try read(timeout: .seconds(5)) {
            switch message.type {
            case UInt8(ascii: "O"): return message.number ?? 0
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
            let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&ready, 1, max(1, milliseconds)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw Refusal(description: "the daemon closed its control socket") }
            pending += buffer[0..<count]
        }
    }
}
