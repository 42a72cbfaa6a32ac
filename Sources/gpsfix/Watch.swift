import ArgumentParser
import GPSFix
import GPSFixDoctor
import ReceiverFraming

#if canImport(Glibc)
import Glibc
#endif

/// `gpsfix watch`: the daemon's reports as they come.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Stream the daemon's reports: JSON lines, or a compact view on a terminal.")

    @OptionGroup var address: DaemonAddress

    @Option(help: "Stop after this many fixes (TPV reports).")
    var count: Int?

    @Flag(help: "Print JSON lines even on a terminal.")
    var json = false

    @Flag(help: "Ask for the NMEA sentences as received instead of reports.")
    var nmea = false

    func run() throws {
        let connection = try DaemonConnection(address)
        try connection.send(nmea ? #"?WATCH={"enable":true,"nmea":true}"# + "\n" : #"?WATCH={"enable":true,"json":true}"# + "\n")
        let terminal = isatty(STDOUT_FILENO) == 1
        let human = !json && !nmea && terminal
        var fixes = 0
        // A daemon greets a client at once (VERSION); a socket that takes connections while
        // nothing serves it (systemd's, with the daemon failed) does not leave us waiting.
        var greetingDeadline: ContinuousClock.Instant? = .now + .seconds(Poll.answerTimeout)
        while let line = try connection.nextLine(before: greetingDeadline) {
            greetingDeadline = nil
            let isFix = line.contains(#""class":"TPV""#)
            if human {
                if let text = CompactView.describe(line) { try writeLine(text) }
            } else if !line.contains(#""class":"VERSION""#) {
                try writeLine(terminal ? line.withoutControlCharacters : line)
            }
            if isFix {
                fixes += 1
                if let count, fixes >= count { return }
            }
        }
        if let greetingDeadline, ContinuousClock.now >= greetingDeadline {
            throw ConnectionError("no answer from the daemon within \(Poll.answerTimeout) seconds")
        }
        throw ConnectionError("the daemon closed the connection" + (count.map { " after \(fixes) of \($0) fixes" } ?? ""))
    }
}

/// `gpsfix poll`: the latest fix and sky view of every device, once.
struct Poll: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poll",
        abstract: "Print the daemon's latest reports (gpsd's POLL).")

    @OptionGroup var address: DaemonAddress

    /// How long the daemon has to answer, in seconds.
    static let answerTimeout = 10

    func run() throws {
        let connection = try DaemonConnection(address)
        try connection.send("?POLL;\n")
        // A daemon answers at once; one whose event loop is stuck does not leave us waiting.
        let deadline = ContinuousClock.now + .seconds(Self.answerTimeout)
        while let line = try connection.nextLine(before: deadline) {
            if line.contains(#""class":"POLL""#) || line.contains(#""class":"ERROR""#) {
                try writeLine(isatty(STDOUT_FILENO) == 1 ? line.withoutControlCharacters : line)
                return
            }
        }
        throw ConnectionError(
            ContinuousClock.now < deadline ? "the daemon closed the connection before answering ?POLL" : "no answer to ?POLL within \(Self.answerTimeout) seconds")
    }
}

/// The human view of `gpsfix watch`: one line per fix, one per sky view.
enum CompactView {
    static func describe(_ line: String) -> String? {
        guard let report = DaemonReport(line: line) else { return nil }
        func number(_ value: Double?, _ decimals: Int) -> String {
            value.map { FixedPoint.string($0, decimals: decimals) } ?? "-"
        }
        func text(_ value: String?) -> String? { value?.withoutControlCharacters }
        switch report.class {
        case "TPV":
            let mode = ["unknown", "no fix", "2D", "3D"][min(3, max(0, report.mode ?? 0))]
            return "\(text(report.time) ?? "(no time)")  \(mode)  lat \(number(report.lat, 7))  lon \(number(report.lon, 7))"
                + "  alt \(number(report.altMSL, 1)) m  speed \(number(report.speed, 2)) m/s  track \(number(report.track, 1))"
        case "SKY":
            guard report.satellites != nil else { return nil }
            return "    satellites \(report.uSat ?? 0)/\(report.nSat ?? 0) used"
                + "  hdop \(number(report.hdop, 2))  pdop \(number(report.pdop, 2))"
        case "DEVICE":
            return "device \(text(report.path) ?? "?")  online \(report.online ?? false)"
        case "ERROR":
            return "error: \(text(report.message) ?? "")"
        default:
            return nil
        }
    }
}
