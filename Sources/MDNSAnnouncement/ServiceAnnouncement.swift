#if canImport(Glibc)
import Glibc
#endif
import ChildProcesses
import GPSFixDevices
import Logging
import Synchronization

/// Announces a TCP service over mDNS (DNS-SD), so that geoclue, gps-share and marine
/// software find NMEA 0183 out without being told the address.
///
/// Avahi does the announcing: `avahi-publish-service` (Debian's avahi-utils) runs as a
/// child for as long as the daemon serves, and the service goes when it ends. It runs
/// with `--no-fail`: an avahi-daemon not running yet is waited for, and one that restarts
/// (an upgrade, a network change) is given the service again. Where the publisher is
/// missing, or ends at once, the daemon says so in its log and goes on. One that ends
/// later (killed by an operator or the OOM killer) is reaped, logged and started again,
/// after a wait that doubles with each quick end, from ``firstRestartDelay`` to
/// ``longestRestartDelay``: a publisher that keeps failing costs a start a minute.
///
/// The child gets the daemon's environment without its secrets (``ChildEnvironment``).
/// Every wait is a sleep on `clock`, which suspends the task: no thread of the
/// cooperative pool is held while avahi answers or the child ends. The child's end is
/// waited for by a thread of its own, blocked in `waitpid` (no timer wakes the daemon to
/// look).
public final class ServiceAnnouncement: Sendable {
    /// avahi's publisher.
    public static let publisher = "/usr/bin/avahi-publish-service"
    /// How long the child is given to fail: it ends at once when it cannot announce at all.
    public static let settling = Duration.milliseconds(300)
    /// The wait before a publisher that ended is started again.
    public static let firstRestartDelay = Duration.seconds(1)
    /// The longest wait, reached when publishers keep ending soon after they start.
    public static let longestRestartDelay = Duration.seconds(64)
    /// A publisher that ran this long ended by mishap, not by a fault it will meet again:
    /// the next wait is the first one again.
    static let steadyLife = Duration.seconds(600)

    private struct State {
        /// The announcing child, while one runs.
        var child: pid_t?
        var withdrawn = false
        /// The supervision has ended: no child runs, none will be started.
        var ended = false
    }

    /// The state the supervision and ``withdraw(clock:)`` share.
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    private let shared: Shared
    /// Waits for the child's end and starts it again; `nil` when none could be started.
    private let supervision: Task<Void, Never>?

    /// Whether the child runs: the service is announced.
    public var isAnnounced: Bool { processID != nil }
    /// The announcing child's process, while it announces.
    public var processID: pid_t? { shared.state.withLock { $0.child } }

    /// Announces `type` (`_nmea-0183._tcp`) on `port` under `name`, through `publisher`
    /// (avahi's, but for tests) run with `environment` (`NAME=value` entries).
    public init(
        name: String, type: String, port: Int, publisher: String = ServiceAnnouncement.publisher,
        environment: [String] = ChildEnvironment.current(), clock: any Clock<Duration> = ContinuousClock(), logger: Logger
    ) async {
        let arguments = ["--no-fail", name, type, String(port)]
        guard let child = await Self.start(publisher, arguments, environment: environment, clock: clock, logger: logger) else {
            shared = Shared(State(child: nil, ended: true))
            supervision = nil
            return
        }
        logger.info("announced over mDNS (avahi-daemon's, once it runs)", metadata: ["service": "\(type)", "name": "\(name)", "port": "\(port)"])
        let shared = Shared(State(child: child))
        self.shared = shared
        supervision = Task {
            defer { shared.state.withLock { $0.ended = true } }
            var delay = Self.firstRestartDelay
            var child = child
            while true {
                let started = ContinuousClock.now
                guard let status = await Self.end(of: child) else {
                    // Left to withdraw(), which kills it.
                    logger.warning("the mDNS publisher is left unwatched: the system gives no thread to wait for its end")
                    return
                }
                guard shared.state.withLock({ state in
                    state.child = nil
                    return !state.withdrawn
                }) else { return }
                if started.duration(to: .now) >= Self.steadyLife { delay = Self.firstRestartDelay }
                logger.warning("the mDNS publisher ended \(Self.describe(status)); starting it again in \(delay)")
                try? await clock.sleep(for: delay)
                delay = min(delay * 2, Self.longestRestartDelay)
                let restarted = shared.state.withLock { state -> Result<pid_t, ChildProcess.SpawnError>? in
                    guard !state.withdrawn else { return nil }
                    let spawned = Result { () throws(ChildProcess.SpawnError) -> pid_t in
                        try ChildProcess.spawn(publisher, arguments, environment: environment)
                    }
                    state.child = try? spawned.get()
                    return spawned
                }
                switch restarted {
                case nil: return
                case .success(let pid): child = pid
                case .failure(let error):
                    logger.warning("not announced over mDNS: \(publisher) could not be started again: \(error)")
                    return
                }
            }
        }
    }

    /// Starts the publisher and gives it ``settling`` to fail; its process, or `nil` (logged).
    private static func start(
        _ publisher: String, _ arguments: [String], environment: [String], clock: any Clock<Duration>, logger: Logger
    ) async -> pid_t? {
        guard access(publisher, X_OK) == 0 else {
            logger.warning("not announced over mDNS: \(publisher) is missing (Debian: avahi-utils)")
            return nil
        }
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(publisher, arguments, environment: environment)
        } catch {
            logger.warning("not announced over mDNS: \(publisher) could not be started: \(error)")
            return nil
        }
        try? await clock.sleep(for: Self.settling)
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            logger.warning("not announced over mDNS: \(publisher) ended at once, \(describe(status))")
            return nil
        }
        return pid
    }

    /// The child's wait status once it has ended and been reaped, waited for on a thread
    /// of its own; `nil` (the child not reaped) when the system gives no thread.
    private static func end(of child: pid_t) async -> Int32? {
        await withCheckedContinuation { continuation in
            let started = DeviceThread.start(named: "gpsfix-mdns") {
                var status: Int32 = 0
                while waitpid(child, &status, 0) < 0, errno == EINTR {}
                continuation.resume(returning: status)
            }
            if !started { continuation.resume(returning: nil) }
        }
    }

    private static func describe(_ status: Int32) -> String {
        status & 0x7F == 0 ? "with status \((status >> 8) & 0xFF)" : "on signal \(status & 0x7F)"
    }

    /// Withdraws the announcement: the child is asked to end, and given a second (in steps
    /// of 50 ms on `clock`) before it is killed, so the daemon's own stop never waits on it;
    /// none is started again.
    public func withdraw(clock: any Clock<Duration> = ContinuousClock()) async {
        guard let supervision else { return }
        let child = shared.state.withLock { state in
            state.withdrawn = true
            return state.child
        }
        // Wakes a supervision waiting to start the publisher again.
        supervision.cancel()
        if let child { kill(child, SIGTERM) }
        for _ in 0..<20 where !shared.state.withLock({ $0.ended }) { try? await clock.sleep(for: .milliseconds(50)) }
        if let child = shared.state.withLock({ $0.ended ? nil : $0.child }) {
            // Killed: it ends at once, and its thread reaps it.
            kill(child, SIGKILL)
        }
        await supervision.value
    }
}
