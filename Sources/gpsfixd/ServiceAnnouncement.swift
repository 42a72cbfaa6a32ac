#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Announces a TCP service over mDNS (DNS-SD), so that geoclue, gps-share and marine
/// software find NMEA 0183 out without being told the address.
///
/// Avahi does the announcing: `avahi-publish-service` (Debian's avahi-utils) runs as a
/// child for as long as the daemon serves, and the service goes when it ends. Where it is
/// missing, or avahi-daemon does not run, the daemon says so in its log and goes on.
struct ServiceAnnouncement {
    /// The announcing child; `nil` when none could be started.
    private let child: pid_t?

    static let publisher = "/usr/bin/avahi-publish-service"

    /// Announces `type` (`_nmea-0183._tcp`) on `port` under `name`.
    init(name: String, type: String, port: Int, logger: Logger) {
        guard access(Self.publisher, X_OK) == 0 else {
            logger.warning("not announced over mDNS: \(Self.publisher) is missing (Debian: avahi-utils)")
            child = nil
            return
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // The child starts with no signal blocked and every handler at its default: the
        // daemon's threads block SIGTERM (ServiceLifecycle takes it), and a child that
        // inherited that would never hear the withdrawal.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let words: [String] = [Self.publisher, name, type, String(port)]
        let arguments = words.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, Self.publisher, &actions, &attributes, arguments, environ) == 0 else {
            logger.warning("not announced over mDNS: \(Self.publisher) could not be started")
            child = nil
            return
        }
        // It ends at once when avahi-daemon does not answer.
        usleep(300_000)
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            logger.warning("not announced over mDNS: avahi-daemon does not answer (is it running?)")
            child = nil
            return
        }
        logger.info("announced over mDNS", metadata: ["service": "\(type)", "name": "\(name)", "port": "\(port)"])
        child = pid
    }

    /// Withdraws the announcement.
    func withdraw() {
        guard let child else { return }
        kill(child, SIGTERM)
        var status: Int32 = 0
        // A second at most, then for certain: the daemon's own stop never waits on it.
        for _ in 0..<20 where waitpid(child, &status, WNOHANG) == 0 { usleep(50_000) }
        if waitpid(child, &status, WNOHANG) == 0 {
            kill(child, SIGKILL)
            waitpid(child, &status, 0)
        }
    }
}
