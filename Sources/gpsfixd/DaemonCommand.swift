import NIOCore
import TasksOnEventLoop

/// The daemon's command line: what `gpsfixd` runs.
public enum DaemonCommand {
    /// Parses the process's arguments and the configuration file, and serves until stopped;
    /// exits with the daemon's status.
    ///
    /// Synchronous, on the main thread: the daemon's tasks are given to the event loop
    /// before the first of them starts.
    @MainActor
    public static func run() -> Never {
        // One SwiftNIO loop, not one per core: the listeners, clients and devices are all
        // bound to the server's loop, so a second loop would serve only the outgoing
        // connections (receivers' writers, NTRIP servers, Traccar's uploads), whose work
        // never blocks and whose TLS handshakes are a few milliseconds once. SwiftNIO's
        // blocking pool keeps its thread per core: a caster's password checks (bcrypt, up
        // to a second each) must not queue behind a demo's pty write.
        NIOSingletons.groupLoopCountSuggestion = 1
        // The daemon's tasks run on that loop too, not on libdispatch's worker threads: a
        // task's work is a few microseconds between waits, and libdispatch, once its first
        // worker starts, wakes a monitor thread every second for good (a sixth of the
        // daemon's CPU at 1 Hz). The tasks' sleeps are the loop's timers (`EventLoopClock`),
        // for the same reason.
        _ = TasksOnEventLoop.install()
        TasksOnEventLoop.runMain { await GPSFixDaemon.main() }
    }
}
