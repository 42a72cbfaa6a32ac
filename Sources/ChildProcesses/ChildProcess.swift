#if canImport(Glibc)
import Glibc
#endif

/// A child process, started the one way the daemon, the tool and the tests start theirs.
///
/// A child inherits nothing of its parent's it was not given: no descriptor but its three
/// standard streams (a library's socket opened without close-on-exec, or a test's
/// pseudo-terminal, held by a child would keep a hang-up or an end of stream from ever
/// happening), no secret of its environment (``ChildEnvironment``), no blocked signal,
/// and the signals a parent ignores or catches at their defaults (the daemon ignores
/// SIGPIPE; a child that inherited an ignored stop signal would never hear its stop).
public enum ChildProcess {
    /// Where one of a child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or emptied, readable by its owner only.
        case file(String)
        /// A descriptor of the parent's (a pipe's end), which the child gets a copy of.
        case descriptor(Int32)
    }

    /// Why a child could not be started: what `posix_spawn` said.
    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String

        init(code: Int32) { description = String(cString: strerror(code)) }
        init(description: String) { self.description = description }
    }

    /// The signals a child gets back at their defaults.
    static let defaultSignals = [SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2]

    /// Starts `executable` with `arguments` and `environment` (`NAME=value` entries; the
    /// parent's own without its secrets when `nil`, ``ChildEnvironment/current()``), its
    /// standard input, output and error on `input`, `output` and `error`; its process ID.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String]? = nil,
        input: Stream = .null, output: Stream = .null, error: Stream = .null
    ) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .descriptor(let parent): posix_spawn_file_actions_adddup2(&actions, parent, descriptor)
            }
        }
        guard let addCloseFrom else {
            throw SpawnError(description: "the C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later has)")
        }
        let added = addCloseFrom(&actions, 3)
        guard added == 0 else { throw SpawnError(code: added) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ChildEnvironment.current()).map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(code: result) }
        return pid
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 on: Debian 12 and later), which
/// its header declares to GNU C only; `nil` where the C library lacks it.
private let addCloseFrom = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
    unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}
