import ArgumentParser

@main
struct GPSFixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpsfix",
        abstract: "The companion tool of gpsfixd: watch and poll it, decode NMEA logs, replay them as a fake serial GPS, record a device.",
        subcommands: [Decode.self, Replay.self, Record.self, Watch.self, Poll.self, NTRIP.self]
    )
}
