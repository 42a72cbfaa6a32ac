/// The tool's command line: what `gpsfix` runs.
public enum ToolCommand {
    /// Parses the process's arguments and runs the subcommand they name; exits with its status.
    public static func main() async { await GPSFixCommand.main() }
}
