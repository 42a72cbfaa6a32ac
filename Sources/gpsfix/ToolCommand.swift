import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// The tool's command line: what `gpsfix` runs.
public enum ToolCommand {
    /// Parses the process's arguments and runs the subcommand they name; exits with its
    /// status. As an asynchronous `main` does: a main-actor task starts the command, and
    /// `dispatchMain()` hands the main queue to libdispatch's threads.
    @MainActor
    public static func run() -> Never {
        Task {
            await GPSFixCommand.main()
            exit(EXIT_SUCCESS)
        }
        dispatchMain()
    }
}
