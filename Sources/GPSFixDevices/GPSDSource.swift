import CLibGPS
#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import ReceiverFraming
import ServiceAddress
import Synchronization

/// A running gpsd as a byte source: one of its devices' raw NMEA.
///
/// libgps connects (waited for as long as ``connectTimeout``, then again at the next
/// opening; abandoned as soon as the consumer stops) and sends the watch (`WATCH_ENABLE |
/// WATCH_NMEA | WATCH_DEVICE`); gpsd's answer is read until its WATCH (an ERROR in its
/// place refuses the source), and from then on the connection's bytes are read like a
/// device's descriptor, on the server's event loop when a ``reactor`` is given, so that a
/// gpsd upstream goes through the very same framer and assembler as a serial port, and is
/// held back for a lagging client the same way (gpsd buffers for a slow client and, past
/// its limit, drops it; the source then reconnects).
///
/// Each upstream device is a source of its own: without a device in its name, the source
/// asks gpsd for its devices and watches the only one; with several it refuses, naming
/// them, since their sentences interleaved would make one nonsense track. When gpsd goes
/// away or refuses, the reading throws, and the provider reports the device lost and
/// reconnects with its backoff (up to a minute after a refusal).
public struct GPSDSource: ByteSource {
    public let host: String
    public let port: Int
    /// gpsd's device to watch; its only one when `nil`.
    public let device: String?
    /// The device's name, as ``DeviceName`` reads it back (an IPv6 host in brackets).
    public var name: String { DeviceName.gpsd(host: host, port: port, device: device).description }
    /// gpsd buffers for a slow client.
    public var canWait: Bool { true }
    /// Reads the connection on this reactor's thread (the server's event loop) when
    /// given; on a thread of its own otherwise.
    public var reactor: (any DescriptorReactor)?

    /// How long an opening waits for libgps to find gpsd's host and connect before it
    /// reports the device unreachable (a host that drops packets would hold it for the
    /// kernel's two minutes); the next opening waits for the same connect.
    public var connectTimeout = Duration.seconds(10)
    /// The connect under way, which an opening after a timeout waits for again.
    private let connecting = GPSDConnecting()
    /// How long gpsd may take to answer a request before the connection is given up.
    static let answerTimeout = Duration.seconds(5)
    /// The longest line of gpsd's kept while waiting for an answer: gpsd writes none past
    /// its response buffer (`GPS_JSON_RESPONSE_MAX`, 10 KiB in recent releases), so a longer
    /// one is not gpsd's, and the source is refused rather than read on.
    static let maximumAnswerLine = 16 * 1024

    public init(host: String, port: Int = 2947, device: String? = nil) {
        self.host = host
        self.port = port
        self.device = device
    }

    public func chunks() -> ByteChunks {
        let host = host, port = String(port), device = device, name = name, timeout = connectTimeout, connecting = connecting
        return FileDescriptorReader.chunks(
            path: name, atEndOfFile: { .vanished(path: name) }, reading: .init(reactor: reactor, canWait: true)
        ) { reading throws(DeviceError) in
            let connection = try connecting.connect(host: host, port: port, name: name, within: timeout, stop: reading)
            do throws(DeviceError) {
                let rest = try connection.watch(device: device, stop: reading)
                return (connection.descriptor, rest, { connection.close() })
            } catch {
                connection.close()
                throw error
            }
        }
    }
}

/// The connection libgps is making for a source, shared by the source's copies. `gps_open`
/// looks the host up and connects in blocking calls that nothing interrupts: to a host
/// that drops packets, for the kernel's two minutes. So it runs on a thread of its own,
/// and an opening waits for it only as long as the timeout and the consumer allow. An
/// opening that times out leaves it under way, and the next opening waits for the same
/// connect rather than starting another: one connect at a time per source, however long
/// it takes, and a link slower to connect than the timeout still gets there. A consumer
/// that stops abandons it: the connecting thread closes what it gets.
private final class GPSDConnecting: Sendable {
    private let underWay = Mutex<PendingConnection?>(nil)

    /// libgps's connection to `host`, waited for as long as `timeout` unless `stop` ends
    /// the reading first.
    func connect(
        host: String, port: String, name: String, within timeout: Duration, stop: DeviceReading
    ) throws(DeviceError) -> Connection {
        let pending = try underWay.withLock { current throws(DeviceError) -> PendingConnection in
            if let current { return current }
            let started = try PendingConnection.start { () throws(DeviceError) in try Connection(host: host, port: port, name: name) }
            current = started
            return started
        }
        // Forgotten once taken or abandoned; only this one, not another begun since.
        func forget() { underWay.withLock { if $0 === pending { $0 = nil } } }
        if let outcome = pending.outcome(waitingUntil: ContinuousClock.now + timeout, stop: stop) {
            forget()
            return try outcome.get()
        }
        guard stop.isStopped else { throw .unreachable(path: name, message: "no connection to gpsd within \(timeout)") }
        pending.abandon()
        forget()
        throw .unreachable(path: name, message: "stopped while connecting")
    }
}

/// One `gps_open` on a thread of its own, and its outcome, taken by one opening or dropped.
private final class PendingConnection: Sendable {
    private enum State {
        case connecting
        case ended(Result<Connection, DeviceError>)
        /// Taken, or abandoned: the connecting thread drops what it gets.
        case done
    }

    private let state = Mutex(State.connecting)
    /// Signalled when the connecting thread has ended; stays so.
    private let ended: WakeupPipe

    private init(ended: WakeupPipe) {
        self.ended = ended
    }

    /// Runs `connect` on a thread of its own.
    static func start(_ connect: @escaping @Sendable () throws(DeviceError) -> Connection) throws(DeviceError) -> PendingConnection {
        let pending = PendingConnection(ended: try WakeupPipe())
        let started = DeviceThread.start(named: "gpsfix-connect") {
            pending.end(Result { () throws(DeviceError) in try connect() })
        }
        guard started else { throw .system(path: "gpsd", call: "pthread_create", errno: EAGAIN) }
        return pending
    }

    /// The outcome, taken, once the thread has ended by `deadline` and before `stop`;
    /// `nil` while it is still connecting.
    func outcome(waitingUntil deadline: ContinuousClock.Instant, stop: DeviceReading) -> Result<Connection, DeviceError>? {
        while !stop.isStopped, ContinuousClock.now < deadline {
            if ended.isSignalled(within: min(deadline - ContinuousClock.now, .milliseconds(100))) { break }
        }
        return state.withLock { state in
            guard case .ended(let outcome) = state else { return nil }
            state = .done
            return outcome
        }
    }

    /// No one will take the outcome: an outcome already there goes now, a later one when
    /// the thread ends (a connection closes as it goes).
    func abandon() {
        state.withLock { $0 = .done }
    }

    private func end(_ outcome: Result<Connection, DeviceError>) {
        let kept = state.withLock { state -> Bool in
            guard case .connecting = state else { return false }
            state = .ended(outcome)
            return true
        }
        if kept { ended.signal() }
    }
}

/// One libgps connection to gpsd, closed once; its block freed with it.
private final class Connection: @unchecked Sendable {
    private let library: LibGPS
    /// libgps's state: a block larger than any libgps's `gps_data_t` (`CLibGPS/shim.h`).
    private let data: UnsafeMutablePointer<gps_data_t>
    private var isOpen = true
    let name: String
    var descriptor: Int32 { data.pointee.gps_fd }

    init(host: String, port: String, name: String) throws(DeviceError) {
        self.name = name
        library = try LibGPS.shared.get()
        data = UnsafeMutableRawPointer.allocate(byteCount: Int(CLIBGPS_DATA_BYTES), alignment: MemoryLayout<gps_data_t>.alignment)
            .bindMemory(to: gps_data_t.self, capacity: 1)
        guard library.open(host, port, data) == 0 else {
            let error = errno
            isOpen = false
            // Unable to connect, libgps sets errno to a code of its own.
            guard error >= 0 else { throw .unreachable(path: name, message: "no connection to gpsd (libgps: \(library.text(ofError: error)))") }
            throw .system(path: name, call: "gps_open", errno: error)
        }
        // A libgps of a layout this build does not know would put gpsd's socket elsewhere:
        // refuse it rather than read whatever descriptor stands where the socket should be.
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue) else {
            close()
            throw .refused(path: name, message: "libgps gave no socket to gpsd: its gps_data_t is not laid out as this build's gps.h says")
        }
        // gpsd sends nothing while its receiver is silent, and is sent nothing: a gpsd host
        // gone without a word would otherwise hold the source open, silent, for good.
        TCPKeepalive.standard.enable(on: descriptor)
    }

    deinit {
        close()
        UnsafeMutableRawPointer(data).deallocate()
    }

    /// Settles the device (the only one gpsd has, when none is named), asks for its raw
    /// sentences and reads gpsd's answer; returns what gpsd sent after it.
    func watch(device: String?, stop: DeviceReading) throws(DeviceError) -> [UInt8] {
        var answers = Answers(descriptor: descriptor, name: name, stop: stop)
        var watched = device
        if watched == nil {
            try answers.send("?DEVICES;\n")
            let paths = try answers.await(class: "DEVICES").devicePaths
            // No device yet (its receiver unplugged, gpsd starting) passes: looked for again
            // soon. Several stay several until gpsd's operator acts.
            guard !paths.isEmpty else { throw .unreachable(path: name, message: "gpsd has no device yet") }
            guard paths.count == 1 else {
                // The upstream's words, as an error and the log show them.
                let paths = paths.map { $0.printable(limit: 100) }
                throw .refused(
                    path: name, message: "gpsd has \(paths.count) devices (\(paths.joined(separator: ", "))): name one, as \(name)\(paths[0])")
            }
            watched = paths[0]
        }
        var path = Array((watched ?? "").utf8CString)
        let flags = UInt32(WATCH_ENABLE | WATCH_NMEA | WATCH_DEVICE)
        guard path.withUnsafeMutableBytes({ library.stream(data, flags, $0.baseAddress) }) == 0 else {
            throw .system(path: name, call: "gps_stream", errno: errno)
        }
        _ = try answers.await(class: "WATCH")
        return answers.unread
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        _ = library.close(data)
    }
}

/// gpsd's answers on a connection, read line by line with a deadline.
private struct Answers {
    let descriptor: Int32
    let name: String
    let stop: DeviceReading
    /// Bytes read but not yet taken as an answer.
    private(set) var unread: [UInt8] = []

    init(descriptor: Int32, name: String, stop: DeviceReading) {
        self.descriptor = descriptor
        self.name = name
        self.stop = stop
    }

    func send(_ request: String) throws(DeviceError) {
        let bytes = Array(request.utf8)
        guard Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            throw .vanished(path: name)
        }
    }

    /// Reads until an answer of `class` arrives and returns its line; gpsd's ERROR
    /// instead refuses the source, and so does a line longer than
    /// ``GPSDSource/maximumAnswerLine``; no answer within ``GPSDSource/answerTimeout``
    /// gives it up.
    mutating func await(class wanted: String) throws(DeviceError) -> String {
        let deadline = ContinuousClock.now + GPSDSource.answerTimeout
        while true {
            while let newline = unread.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: unread[..<newline], as: UTF8.self).trimmingCharacters(in: "\r")
                unread.removeSubrange(...newline)
                if line.hasPrefix("{\"class\":\"ERROR\"") {
                    // gpsd's "No such device as PATH": the receiver named is not there yet.
                    let message = line.printable(limit: 200)
                    throw line.contains("No such device") ? .unreachable(path: name, message: message) : .refused(path: name, message: message)
                }
                if line.hasPrefix("{\"class\":\"\(wanted)\"") { return line }
            }
            guard unread.count <= GPSDSource.maximumAnswerLine else {
                throw .refused(
                    path: name, message: "a line of over \(GPSDSource.maximumAnswerLine) bytes, longer than gpsd writes: is it gpsd?")
            }
            guard !stop.isStopped, ContinuousClock.now < deadline else {
                throw .unreachable(path: name, message: "no \(wanted) answer within \(GPSDSource.answerTimeout)")
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var block = [UInt8](repeating: 0, count: 4096)
            let count = block.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { throw .vanished(path: name) }
            unread += block[0..<count]
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in characters: Character) -> String {
        var text = Substring(self)
        while text.last == characters { text.removeLast() }
        return String(text)
    }

    /// The `path` of every device in a DEVICES answer.
    fileprivate var devicePaths: [String] {
        split(separator: "\"path\":\"", omittingEmptySubsequences: false).dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }
}
