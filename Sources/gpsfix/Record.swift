import ArgumentParser
import Foundation
import GPSFix
import GPSFixDevices

/// `gpsfix record`: a device's raw bytes to a log that `decode`, `replay` and `file:` read back.
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a device's raw bytes to a log, with a # header (device, speed, date).")

    @Argument(help: "The device: /dev/ttyUSB0, or gpsd://HOST:PORT.")
    var device: String

    @Option(name: .shortAndLong, help: "The log to write.")
    var output: String

    @Option(help: "Stop after this many seconds (default: until interrupted).")
    var duration: Double?

    @Option(help: "Serial speed; found by autobaud when not given.")
    var speed: Int?

    func run() async throws {
        guard let name = DeviceName(device) else { throw ValidationError("'\(device)' is not a device") }
        let source = name.source(settings: SerialSettings(speed: speed))
        guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
            throw ValidationError("cannot write \(output)")
        }
        defer { try? file.close() }
        let recording = Task {
            var headerWritten = false
            for try await chunk in source.chunks() {
                if !headerWritten {
                    headerWritten = true
                    try file.write(contentsOf: Data(Self.header(device: device, speed: source.line?.bps ?? speed).utf8))
                }
                try file.write(contentsOf: chunk.bytes)
            }
        }
        if let duration {
            try? await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
            recording.cancel()
        }
        // A device that cannot be opened, or fails, is an error, not an empty log.
        do {
            try await recording.value
        } catch is CancellationError {
        } catch {
            throw RecordingError(description: "recording \(device) failed: \(error)")
        }
    }

    /// Why a recording stopped; printed as it is.
    struct RecordingError: Error, CustomStringConvertible {
        let description: String
    }

    /// gpsfake's header: `# Date:` gives the century when the log is read back.
    static func header(device: String, speed: Int?, now: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return """
            # Name: recorded by gpsfix record
            # Device: \(device)
            # Speed: \(speed.map(String.init) ?? "unknown")
            # Date: \(formatter.string(from: now))
            #

            """
    }
}
