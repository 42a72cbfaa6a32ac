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
///
/// The child gets the daemon's environment without its secrets (``ChildEnvironment``).
/// Every wait is a sleep on `clock`, which suspends the task: no thread of the
/// cooperative pool is held while avahi answers or the child ends.
public struct ServiceAnnouncement: Sendable {
    /// The announcing child; `nil` when none could be started.
    private let child: pid_t?

    public static let publisher = "/usr/bin/avahi-publish-service"
    /// How long the child is given to fail: it ends at once when avahi-daemon does not answer.
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
        guard let pid = Self.spawn(publisher, [name, type, String(port)], environment: environment) else {
            logger.warning("not announced over mDNS: \(publisher) could not be started")
            child = nil
            return
        }
        try? await clock.sleep(for: Self.settling)
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            logger.warning("not announced over mDNS: avahi-daemon does not answer (is it running?)")
            child = nil
            return
        }
        logger.info("announced over mDNS", metadata: ["service": "\(type)", "name": "\(name)", "port": "\(port)"])
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

    /// Starts `executable` with `arguments`, standard streams on /dev/null and no other
    /// descriptor (a library's socket opened without close-on-exec stays the daemon's), no
    /// signal blocked and every handler at its default (the daemon ignores SIGTERM, SIGINT
    /// and SIGHUP, which it reads from dispatch sources, and a child that inherited that
    /// would never hear the withdrawal), and `environment`; its pid, or `nil`.
    static func spawn(_ executable: String, _ arguments: [String], environment: [String]) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        guard addCloseFrom?(&actions, 3) == 0 else { return nil }
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
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, &attributes, argv, envp) == 0 else { return nil }
        return pid
    }
}

/// The environment a child of the daemon runs with: the daemon's, without its secrets.
///
/// The daemon takes its passwords from `GPSFIX_MQTT_PASSWORD`, `GPSFIX_NTRIP_PASSWORD` and
/// the like; a child has no use for them, and anything it passes them on to (a crash
/// report, a log of its environment, `/proc/PID/environ` read by its own user) would
/// leak them. Every `GPSFIX_` variable is left out, and every variable whose name says
/// it holds a secret (`PASSWORD`, `SECRET`, `TOKEN`, `CREDENTIAL`, in any case).
public enum ChildEnvironment {
    /// `variables` (`NAME=value` entries) without the secrets.
    public static func withoutSecrets(_ variables: [String]) -> [String] {
        variables.filter { entry in
            let name = entry.prefix { $0 != "=" }.uppercased()
            return !name.hasPrefix("GPSFIX_") && !["PASSWORD", "SECRET", "TOKEN", "CREDENTIAL"].contains { name.contains($0) }
        }
    }

    /// The process's environment now, without its secrets.
    public static func current() -> [String] {
        var variables: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            variables.append(String(cString: pointer))
            entry += 1
        }
        return withoutSecrets(variables)
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 on: Debian 12 and later), which
/// its header declares to GNU C only.
private let addCloseFrom = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
    unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}
