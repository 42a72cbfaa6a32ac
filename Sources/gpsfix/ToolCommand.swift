import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// The tool's command line: what `gpsfix` runs.
public enum ToolCommand {
    /// Parses the process's arguments and runs the subcommand they name; exits with its
    /// status. As an asynchronous `main` does: the command runs on the main actor, which
    /// libdispatch's main queue serves once the main thread has handed it over.
    @MainActor
    public static func run() -> Never {
        Task {
            await GPSFixCommand.main()
            exit(EXIT_SUCCESS)
        }
        dispatchMain()
    }
}
