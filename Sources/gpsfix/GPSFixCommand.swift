import ArgumentParser

struct GPSFixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpsfix",
        abstract: "The companion tool of gpsfixd: watch and poll it, decode NMEA logs, replay them as a fake serial GPS, record a device.",
        version: "gpsfix \(BuildInfo.version) (\(BuildInfo.commit))",
        subcommands: [Decode.self, Replay.self, Record.self, Watch.self, Poll.self, NTRIP.self, UBXCommand.self, DoctorCommand.self]
    )

    /// How the tool names itself to casters.
    static let userAgent = "GPSFix/\(BuildInfo.version)"
}
