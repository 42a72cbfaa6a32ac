import ArgumentParser

@main
struct GPSFixCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpsfix",
        abstract: "The companion tool of gpsfixd: decode NMEA logs to gpsd JSON.",
        subcommands: [Decode.self]
    )
}
