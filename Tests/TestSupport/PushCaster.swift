import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A caster that takes pushed streams, for the tests of `gpsfixd --ntrip-server`: NTRIP
/// 1.0's `SOURCE password /MOUNT` (answered `ICY 200 OK`, or RTKLIB's `ERROR - Bad
/// Password` / `ERROR - Bad Mountpoint`) and 2.0's `POST /MOUNT` with Basic
/// authentication (answered `HTTP/1.1 200 OK`, or 401). It keeps every request's head and
/// the bytes that followed, and can be stopped (every connection closed) and started again
/// on the same port, as a restarted caster is. str2str's own caster takes no source.
public final class PushCaster: @unchecked Sendable {
    /// How a source may name the mountpoint in NTRIP 1.0's `SOURCE`.
    public enum MountpointForm: Sendable {
        case withSlash
        /// `MOUNT`, as some casters want it.
        case bare
    }

    /// One connection: its request's head, and what the source sent after it.
    public struct Stream: Sendable {
        /// When its head was read whole.
        public var arrived: ContinuousClock.Instant
        public var head: String
        public var accepted: Bool
        public var body: [UInt8]

        /// The body's chunks, for NTRIP 2.0 (only those whole); `nil` when the body is not
        /// chunked as HTTP/1.1 says.
        public var chunks: [[UInt8]]? {
            var chunks: [[UInt8]] = []
            var index = 0
            while let lineEnd = body[index...].firstIndex(of: 10) {
                guard lineEnd > index, body[lineEnd - 1] == 13,
                    let size = Int(String(decoding: body[index..<(lineEnd - 1)], as: UTF8.self), radix: 16)
                else { return nil }
                let start = lineEnd + 1
                guard start + size + 2 <= body.count else { break }
                guard body[start + size] == 13, body[start + size + 1] == 10 else { return nil }
                chunks.append(Array(body[start..<(start + size)]))
                index = start + size + 2
            }
            return chunks
        }

        /// What the source sent: the body, without NTRIP 2.0's chunking.
        public var payload: [UInt8] { head.hasPrefix("POST") ? (chunks ?? []).flatMap { $0 } : body }
    }

    public private(set) var port: Int
    private let mountpoint: String
    private let user: String
    private let password: String
    private let form: MountpointForm
    /// Whether it reads a stream it accepted; one that does not stands for a caster that
    /// hung, whose kernel takes only its small receive buffer's worth.
    private let readsStreams: Bool
    /// Bytes a second it reads of a stream, when it reads slowly (a congested uplink).
    private let readRate: Int?
    private let lock = NSLock()
    private var listener: Int32 = -1
    private var connections: Set<Int32> = []
    private var recorded: [Stream] = []

    /// Listens on loopback, on `port` (0: one the system picks, kept for restarts).
    public init(
        mountpoint: String, user: String = "base", password: String, form: MountpointForm = .withSlash, port: Int = 0,
        readsStreams: Bool = true, readRate: Int? = nil
    ) throws {
        self.mountpoint = mountpoint
        self.user = user
        self.password = password
        self.form = form
        self.readsStreams = readsStreams
        self.readRate = readRate
        self.port = port
        try start()
    }

    deinit { stop() }

    /// Every connection so far, in the order they came.
    public var streams: [Stream] { lock.withLock { recorded } }

    /// Listens again on the same port.
    public func start() throws {
        let (listener, bound) = try LoopbackListener.open(port: port)
        port = bound
        if readRate != nil {
            // Segments as small as a wide-area line's (loopback's are 64 KiB): the window
            // reopens a little at a time as it reads, so the source's writes never stop for
            // long, as over a congested uplink.
            var segment: Int32 = 1400
            setsockopt(listener, Int32(IPPROTO_TCP), TCP_MAXSEG, &segment, socklen_t(MemoryLayout<Int32>.size))
        }
        if !readsStreams || readRate != nil {
            // Inherited by each connection, so the window it offers is small from the start.
            var size: Int32 = 4096
            setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        lock.withLock { self.listener = listener }
        Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }  // the listener was shut down
                lock.withLock { _ = connections.insert(client) }
                Thread { [self] in serve(client) }.start()
            }
        }.start()
    }

    /// Stops listening and closes every connection, as a caster that stops does.
    public func stop() {
        lock.withLock {
            if listener >= 0 {
                shutdown(listener, Int32(SHUT_RDWR))
                close(listener)
                listener = -1
            }
            for connection in connections { shutdown(connection, Int32(SHUT_RDWR)) }
        }
    }

    private func serve(_ client: Int32) {
        defer {
            lock.withLock { _ = connections.remove(client) }
            close(client)
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var index: Int?
        while index == nil {
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0, received.count < 16 * 1024 else { return }
            received += buffer[0..<count]
            index = (0..<max(0, received.count - 3)).first { received[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10]) }
        }
        let head = String(decoding: received[..<index!], as: UTF8.self)
        let answer = self.answer(to: head)
        let accepted = answer.hasPrefix("ICY 200") || answer.hasPrefix("HTTP/1.1 200")
        let number = lock.withLock {
            recorded.append(
                Stream(arrived: .now, head: head, accepted: accepted, body: accepted ? Array(received[(index! + 4)...]) : []))
            return recorded.count - 1
        }
        _ = Array(answer.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard accepted else { return }
        if !readsStreams {
            // Waits, reading nothing, until the source closes or the caster is stopped.
            var watched = pollfd(fd: client, events: 0x2000, revents: 0)  // POLLRDHUP, which Glibc's module leaves out
            while poll(&watched, 1, -1) < 0 && errno == EINTR {}
            return
        }
        // A tenth of the rate every tenth of a second, when it reads slowly.
        let step = readRate.map { max(1, $0 / 10) } ?? buffer.count
        while true {
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, min(step, $0.count)) }
            guard count > 0 else { return }
            lock.withLock { recorded[number].body += buffer[0..<count] }
            if readRate != nil { usleep(100_000) }
        }
    }

    /// The answer to a request's head, as a caster gives it.
    private func answer(to head: String) -> String {
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        if parts.first == "SOURCE", parts.count == 3 {
            guard parts[1] == password else { return "ERROR - Bad Password\r\n" }
            let wanted = form == .withSlash ? "/\(mountpoint)" : mountpoint
            return parts[2] == wanted ? "ICY 200 OK\r\n" : "ERROR - Bad Mountpoint\r\n"
        }
        if parts.first == "POST", parts.count == 3, parts[1] == "/\(mountpoint)" {
            let credentials = Data("\(user):\(password)".utf8).base64EncodedString()
            guard lines.contains("Authorization: Basic \(credentials)") else { return "HTTP/1.1 401 Unauthorized\r\n\r\n" }
            return "HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\n\r\n"
        }
        return "HTTP/1.1 400 Bad Request\r\n\r\n"
    }
}
