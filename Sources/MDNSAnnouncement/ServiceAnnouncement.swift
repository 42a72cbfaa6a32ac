#if canImport(Glibc)
import Glibc
#endif
import ChildProcesses
import Logging

/// Announces a TCP service over mDNS (DNS-SD), so that geoclue, gps-share and marine
/// software find NMEA 0183 out without being told the address.
///
/// Avahi does the announcing: `avahi-publish-service` (Debian's avahi-utils) runs as a
/// child for as long as the daemon serves, and the service goes when it ends. It runs
/// with `--no-fail`: an avahi-daemon not running yet is waited for, and one that restarts
/// (an upgrade, a network change) is given the service again. Where the publisher is
/// missing, or ends at once, the daemon says so in its log and goes on.
///
/// The child gets the daemon's environment without its secrets (``ChildEnvironment``).
/// Every wait is a sleep on `clock`, which suspends the task: no thread of the
/// cooperative pool is held while avahi answers or the child ends.
public struct ServiceAnnouncement: Sendable {
    /// The announcing child; `nil` when none could be started.
    private let child: pid_t?

    public static let publisher = "/usr/bin/avahi-publish-service"
    /// How long the child is given to fail: it ends at once when it cannot announce at all.
    public static let settling = Duration.milliseconds(300)

    /// Whether the child runs: the service is announced.
    public var isAnnounced: Bool { child != nil }
    /// The announcing child's process, while it announces.
    public var processID: pid_t? { child }

    /// Announces `type` (`_nmea-0183._tcp`) on `port` under `name`, through `publisher`
    /// (avahi's, but for tests) run with `environment` (`NAME=value` entries).
    public init(
        name: String, type: String, port: Int, publisher: String = Self.publisher,
        environment: [String] = ChildEnvironment.current(), clock: any Clock<Duration> = ContinuousClock(), logger: Logger
    ) async {
        guard access(publisher, X_OK) == 0 else {
            logger.warning("not announced over mDNS: \(publisher) is missing (Debian: avahi-utils)")
            child = nil
            return
        }
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(publisher, ["--no-fail", name, type, String(port)], environment: environment)
        } catch {
            logger.warning("not announced over mDNS: \(publisher) could not be started: \(error)")
            child = nil
            return
        }
        try? await clock.sleep(for: Self.settling)
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            let how = status & 0x7F == 0 ? "with status \((status >> 8) & 0xFF)" : "on signal \(status & 0x7F)"
            logger.warning("not announced over mDNS: \(publisher) ended at once, \(how)")
            child = nil
            return
        }
        logger.info("announced over mDNS (avahi-daemon's, once it runs)", metadata: ["service": "\(type)", "name": "\(name)", "port": "\(port)"])
        child = pid
    }

    /// Withdraws the announcement: the child is asked to end, and given a second (in steps
    /// of 50 ms on `clock`) before it is killed, so the daemon's own stop never waits on it.
    public func withdraw(clock: any Clock<Duration> = ContinuousClock()) async {
        guard let child else { return }
        kill(child, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<20 where waitpid(child, &status, WNOHANG) == 0 { try? await clock.sleep(for: .milliseconds(50)) }
        if waitpid(child, &status, WNOHANG) == 0 {
            kill(child, SIGKILL)
            // Killed: it ends at once, and is reaped.
            waitpid(child, &status, 0)
        }
    }
}
