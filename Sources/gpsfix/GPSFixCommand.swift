import ArgumentParser

@main
struct GPSFixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpsfix",
        abstract: "The companion tool of gpsfixd: decode NMEA logs, replay them as a fake serial GPS.",
        subcommands: [Decode.self, Replay.self]
    )
}
