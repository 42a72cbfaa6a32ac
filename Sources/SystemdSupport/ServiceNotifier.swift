#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Tells the service manager how the daemon is doing: the seam to systemd, so tests can
/// give the daemon a fake and check what it says.
public protocol ServiceNotifier: Sendable {
    /// Sends one notification, such as `READY=1` or `STATUS=3D fix`.
    func notify(_ state: String)
}

/// The real notifier: sd_notify's protocol, a datagram to the socket in `$NOTIFY_SOCKET`
/// (a path, or an abstract name written with a leading `@`). Silent when the variable is
/// not set, as when the daemon is not run by systemd.
public struct SystemdNotifier: ServiceNotifier {
    private let address: String?

    /// A notifier for `$NOTIFY_SOCKET` of `environment`.
    public init(environment: [String: String]) {
        address = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether a service manager listens: when none does, the daemon need not keep it
    /// informed, and spends no wake-ups on it.
    public var isActive: Bool { address != nil }

    public func notify(_ state: String) {
        guard let address else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var server = sockaddr_un()
        server.sun_family = sa_family_t(AF_UNIX)
        var path = Array(address.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        guard path.count < MemoryLayout.size(ofValue: server.sun_path) else { return }
        withUnsafeMutableBytes(of: &server.sun_path) { $0.copyBytes(from: path) }
        // An abstract name's length is exact; a path's includes its terminating zero.
        let length = MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1)
        let message = Array(state.utf8)
        // The daemon's event loop sends these: a status or a ping a service manager too busy
        // to take is dropped (the next one follows within a second), READY and STOPPING wait.
        let periodic = state.hasPrefix("STATUS=") || state.hasPrefix("WATCHDOG=")
        let waiting = periodic ? Int32(MSG_DONTWAIT) : 0
        _ = withUnsafePointer(to: &server) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                message.withUnsafeBytes {
                    sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | waiting, address, socklen_t(length))
                }
            }
        }
    }
}

/// The systemd environment of a daemon: its watchdog interval and its passed sockets.
public struct ServiceEnvironment: Sendable {
    /// How often systemd expects `WATCHDOG=1`, from `$WATCHDOG_USEC` (when it is for us).
    public var watchdogInterval: Duration?
    /// Listening sockets passed by socket activation (`$LISTEN_FDS`, from descriptor 3).
    public var listenDescriptors: [Int32]
    /// The most sockets taken from socket activation: far more than a unit passes, far
    /// fewer than would overflow a descriptor number.
    static let maximumListenDescriptors: Int32 = 1024

    /// Reads `environment` as systemd sets it for process `pid`.
    public init(environment: [String: String], pid: Int32 = getpid()) {
        func forUs(_ key: String) -> Bool { environment[key].flatMap { Int32($0) }.map { $0 == pid } ?? true }
        if let microseconds = environment["WATCHDOG_USEC"].flatMap(Int64.init), microseconds > 0, forUs("WATCHDOG_PID") {
            watchdogInterval = .microseconds(microseconds)
        } else {
            watchdogInterval = nil
        }
        // More than a process can hold is no count systemd gives: none are taken.
        if let count = environment["LISTEN_FDS"].flatMap(Int32.init), (1...Self.maximumListenDescriptors).contains(count),
            environment["LISTEN_PID"].flatMap(Int32.init) == pid
        {
            listenDescriptors = Array(3..<(3 + count))
        } else {
            listenDescriptors = []
        }
    }
}

/// A notifier whose `STOPPING=1` is the last word: what a reporter still winding down sends
/// after it (a `WATCHDOG=1`, a `STATUS=`) is dropped, so a stop said at its start is not
/// followed by signs of a service that carries on.
public final class StoppingLastNotifier: ServiceNotifier {
    private let base: any ServiceNotifier
    private let stopping = Mutex(false)

    public init(_ base: any ServiceNotifier) {
        self.base = base
    }

    public func notify(_ state: String) {
        // Sent under the lock: a notification let through goes before STOPPING=1.
        stopping.withLock { stopping in
            guard !stopping else { return }
            if state == "STOPPING=1" { stopping = true }
            base.notify(state)
        }
    }
}
