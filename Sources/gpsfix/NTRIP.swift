import ArgumentParser
import Glibc
import GPSFix
import GPSFixNTRIP
import OutputFormats
import ReceiverFraming
import ServiceAddress

/// `gpsfix ntrip`: an NTRIP caster's mountpoints.
struct NTRIP: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ntrip",
        abstract: "Ask an NTRIP caster what it offers.",
        subcommands: [SourceTableCommand.self]
    )
}

/// `gpsfix ntrip sourcetable URL`: the mountpoints, the nearest first when given a position.
struct SourceTableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sourcetable",
        abstract: "List a caster's mountpoints with their formats, the nearest first with --near.",
        discussion: "A password, when the caster wants one for its table, comes from GPSFIX_NTRIP_PASSWORD (or the URL)."
    )

    @Argument(help: "The caster: ntrip://[USER@]HOST[:PORT] or ntrips://... (a mountpoint in it is ignored).")
    var url: String

    @Option(help: "LAT,LON: sort the mountpoints by their distance from here (--near=-33.9,151.2 when the first is negative).")
    var near: String?

    @Option(help: "The certificate authorities for ntrips:// (a PEM file).")
    var ca: String?

    @Option(help: "Seconds to wait for the table.")
    var timeout: Double = 10

    func validate() throws {
        do { _ = try NTRIPCaster(url: url) } catch { throw ValidationError("\(error)") }
        _ = try position()
        guard (0.001...3600).contains(timeout) else { throw ValidationError("--timeout \(timeout): give 0.001 to 3600 seconds") }
    }

    private func position() throws -> (latitude: Double, longitude: Double)? {
        guard let near else { return nil }
        do {
            let position = try PositionReport(parsing: near, allowingAltitude: false)
            return (position.latitude, position.longitude)
        } catch {
            throw ValidationError("--near '\(near)': \(error); give LAT,LON in degrees, as 52.37,4.89")
        }
    }

    func run() async throws {
        ServiceAddress.hidePasswordsInCommandLine()
        let caster = try NTRIPCaster(url: url).with(password: getenv("GPSFIX_NTRIP_PASSWORD").map { String(cString: $0) })
        let table: SourceTable
        do {
            table = try await SourceTable.fetch(
                from: caster, userAgent: GPSFixCommand.userAgent, certificateAuthorities: ca, timeout: .milliseconds(Int64(timeout * 1000)))
        } catch {
            // Not a usage error: the caster could not be asked (status 1, without the usage).
            throw ConnectionError("\(caster.description): \(error)")
        }
        let here = try position()
        try writeLine(["MOUNT", "FORMAT", "MESSAGES", "SYSTEMS", "COUNTRY", "LAT", "LON", "GGA", "AUTH"].joined(separator: "\t") + (here == nil ? "" : "\tKM"))
        for (stream, kilometres) in table.sorted(near: here) {
            var columns = [
                stream.mountpoint, stream.format, stream.formatDetails, stream.navigationSystems, stream.country,
                stream.latitude.map { String($0) } ?? "", stream.longitude.map { String($0) } ?? "",
                stream.wantsPosition ? "yes" : "no", stream.authentication,
            ]
            if here != nil { columns.append(kilometres.map { FixedPoint.string($0, decimals: 0) } ?? "") }
            // The caster's words: no tab of theirs makes a column, no escape reaches the terminal.
            try writeLine(columns.map(\.withoutControlCharacters).joined(separator: "\t"))
        }
    }
}
