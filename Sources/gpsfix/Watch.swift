import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `gpsfix watch`: the daemon's reports as they come.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
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
        let human = !json && !nmea && isatty(STDOUT_FILENO) == 1
        var fixes = 0
        while let line = connection.nextLine() {
            let isFix = line.contains(#""class":"TPV""#)
            if human {
                if let text = CompactView.describe(line) { writeLine(text) }
            } else if !line.contains(#""class":"VERSION""#) {
                writeLine(line)
            }
            if isFix {
                fixes += 1
                if let count, fixes >= count { return }
            }
        }
    }
}

/// `gpsfix poll`: the latest fix and sky view of every device, once.
struct Poll: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the daemon's latest reports (gpsd's POLL).")

    @OptionGroup var address: DaemonAddress

    func run() throws {
        let connection = try DaemonConnection(address)
        try connection.send("?POLL;\n")
        while let line = connection.nextLine() {
            if line.contains(#""class":"POLL""#) || line.contains(#""class":"ERROR""#) {
                writeLine(line)
                return
            }
        }
        throw ExitCode.failure
    }
}

/// The human view of `gpsfix watch`: one line per fix, one per sky view.
enum CompactView {
    static func describe(_ line: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let reportClass = object["class"] as? String
        else { return nil }
        func number(_ key: String, _ format: String) -> String {
            (object[key] as? NSNumber).map { String(format: format, $0.doubleValue) } ?? "-"
        }
        switch reportClass {
        case "TPV":
            let mode = ["unknown", "no fix", "2D", "3D"][min(3, max(0, object["mode"] as? Int ?? 0))]
            return "\(object["time"] as? String ?? "(no time)")  \(mode)  lat \(number("lat", "%.7f"))  lon \(number("lon", "%.7f"))"
                + "  alt \(number("altMSL", "%.1f")) m  speed \(number("speed", "%.2f")) m/s  track \(number("track", "%.1f"))"
        case "SKY":
            guard object["satellites"] != nil else { return nil }
            return "    satellites \(object["uSat"] as? Int ?? 0)/\(object["nSat"] as? Int ?? 0) used"
                + "  hdop \(number("hdop", "%.2f"))  pdop \(number("pdop", "%.2f"))"
        case "DEVICE":
            return "device \(object["path"] as? String ?? "?")  online \(object["online"] as? Bool ?? false)"
        case "ERROR":
            return "error: \(object["message"] as? String ?? "")"
        default:
            return nil
        }
    }
}

/// Writes a line to standard output at once (unbuffered, so a pipe sees each report as it comes).
func writeLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
