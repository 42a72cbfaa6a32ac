/// The daemon's command line: what `gpsfixd` runs.
public enum DaemonCommand {
    /// Parses the process's arguments and the configuration file, and serves until stopped;
    /// exits with the daemon's status.
    public static func main() async { await GPSFixDaemon.main() }
}
