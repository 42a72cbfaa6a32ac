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
/// later (killed by an operator or the OOM killer) is reaped and started again, after a
/// wait that doubles with each end, from ``firstRestartDelay`` to ``longestRestartDelay``
/// (the first again once one has run for ``steadyLife``), and logged once it has been.
///
/// The child gets the daemon's environment without its secrets (``ChildEnvironment``).
/// Every wait is a sleep on `clock`, which suspends the task: no thread of the
/// cooperative pool is held while avahi answers or the child ends. The child's end is
/// waited for by a thread of its own, blocked in `waitid` (no timer wakes the daemon to
/// look). A child is reaped, and its process ID forgotten, under the lock its signals are
/// sent under: no signal reaches a process that was given its number since.
public final class ServiceAnnouncement: Sendable {
    /// avahi's publisher.
    public static let publisher = "/usr/bin/avahi-publish-service"
    /// How long the child is given to fail: it ends at once when it cannot announce at all.
    public static let settling = Duration.milliseconds(300)
    /// The wait before a publisher that ended is started again.
    public static let firstRestartDelay = Duration.seconds(1)
    /// The longest wait, reached when publishers keep ending.
    public static let longestRestartDelay = Duration.seconds(64)
    /// A publisher that ran this long ended by mishap, not by a fault it will meet again:
    /// the next wait is the first one again.
    public static let steadyLife = Duration.seconds(600)

    private struct State {
        /// The announcing child, until it is reaped.
        var child: pid_t?
        /// No child is started from now on.
        var withdrawn = false
        /// The supervision has ended: it starts no child, and reaps none.
        var ended = false
    }

    /// The state the supervision and ``withdraw(clock:)`` share.
    private final class Shared: Sendable {
        let state = Mutex(State())
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
        let start = Start(publisher: publisher, arguments: ["--no-fail", name, type, String(port)], environment: environment, logger: logger)
        let shared = Shared()
        self.shared = shared
        guard access(publisher, X_OK) == 0 else {
            logger.warning("not announced over mDNS: \(publisher) is missing (Debian: avahi-utils)")
            supervision = nil
            return
        }
        guard let child = await start.run(in: shared, clock: clock) else {
            supervision = nil
            return
        }
        logger.info("announced over mDNS (avahi-daemon's, once it runs)", metadata: ["service": "\(type)", "name": "\(name)", "port": "\(port)"])
        supervision = Task { await Self.supervise(child, start: start, shared: shared, clock: clock) }
    }

    /// How the publisher is started, the first time and again.
    private struct Start: Sendable {
        let publisher: String
        let arguments: [String]
        let environment: [String]
        let logger: Logger

        /// Starts the publisher, unless withdrawn, and gives it ``settling`` to fail; its
        /// process, or `nil` (logged, but when withdrawn meanwhile).
        func run(in shared: Shared, clock: any Clock<Duration>) async -> pid_t? {
            let spawned = shared.state.withLock { state -> Result<pid_t, ChildProcess.SpawnError>? in
                guard !state.withdrawn else { return nil }
                do throws(ChildProcess.SpawnError) {
                    let pid = try ChildProcess.spawn(publisher, arguments, environment: environment)
                    state.child = pid
                    return .success(pid)
                } catch {
                    return .failure(error)
                }
            }
            switch spawned {
            case nil:
                return nil
            case .failure(let error):
                logger.warning("not announced over mDNS: \(publisher) could not be started: \(error)")
                return nil
            case .success(let pid):
                try? await clock.sleep(for: ServiceAnnouncement.settling)
                let (ended, withdrawn) = shared.state.withLock { state in
                    var status: Int32 = 0
                    guard waitpid(pid, &status, WNOHANG) == pid else { return (nil as Int32?, state.withdrawn) }
                    state.child = nil
                    return (status, state.withdrawn)
                }
                guard let ended else { return pid }
                if !withdrawn { logger.warning("not announced over mDNS: \(publisher) ended at once, \(describe(ended))") }
                return nil
            }
        }
    }

    /// Waits for each publisher's end, reaps it and starts the next, until withdrawn.
    private static func supervise(_ first: pid_t, start: Start, shared: Shared, clock: some Clock<Duration>) async {
        defer { shared.state.withLock { $0.ended = true } }
        var child = first
        var born = clock.now
        var delay = firstRestartDelay
        while true {
            guard await waitForEnd(of: child) else {
                // Left to withdraw(), which reaps it.
                start.logger.warning("the mDNS publisher is left unwatched: the system gives no thread to wait for its end")
                return
            }
            let status = shared.state.withLock { state in
                var status: Int32 = 0
                waitpid(child, &status, 0)
                state.child = nil
                return status
            }
            if born.duration(to: clock.now) >= steadyLife { delay = firstRestartDelay }
            // Logged once started again: a stop that reached the publisher too (a service
            // manager's, a terminal's Ctrl-C) withdraws the announcement meanwhile.
            try? await clock.sleep(for: delay)
            born = clock.now
            guard let next = await start.run(in: shared, clock: clock) else { return }
            start.logger.warning("the mDNS publisher ended \(describe(status)); started again after \(delay)")
            child = next
            delay = min(delay * 2, longestRestartDelay)
        }
    }

    /// Waits, on a thread of its own, until `child` has ended, and leaves it to be reaped:
    /// `true` then; `false` at once when the system gives no thread.
    private static func waitForEnd(of child: pid_t) async -> Bool {
        await withCheckedContinuation { continuation in
            let started = DeviceThread.start(named: "gpsfix-mdns") {
                var information = siginfo_t()
                while waitid(P_PID, id_t(child), &information, WEXITED | WNOWAIT) < 0, errno == EINTR {}
                continuation.resume(returning: true)
            }
            if !started { continuation.resume(returning: false) }
        }
    }

    private static func describe(_ status: Int32) -> String {
        status & 0x7F == 0 ? "with status \((status >> 8) & 0xFF)" : "on signal \(status & 0x7F)"
    }

    /// Withdraws the announcement: the child is asked to end, and given a second (in steps
    /// of 50 ms on `clock`; none when the calling task is cancelled) before it is killed,
    /// so the daemon's own stop never waits on it; none is started again.
    public func withdraw(clock: any Clock<Duration> = ContinuousClock()) async {
        guard let supervision else { return }
        shared.state.withLock { state in
            state.withdrawn = true
            if let child = state.child { kill(child, SIGTERM) }
        }
        // Wakes a supervision waiting to start the publisher again.
        supervision.cancel()
        for _ in 0..<20 where !shared.state.withLock({ $0.ended }) { try? await clock.sleep(for: .milliseconds(50)) }
        shared.state.withLock { state in
            if let child = state.child { kill(child, SIGKILL) }
        }
        await supervision.value
        // Reaped here only when no thread could wait for it: killed, it ends at once.
        shared.state.withLock { state in
            guard let child = state.child else { return }
            waitpid(child, nil, 0)
            state.child = nil
        }
    }
}
