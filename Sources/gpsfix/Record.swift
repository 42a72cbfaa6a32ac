import ArgumentParser
import Glibc
import GPSFix
import GPSFixDevices
import StopSignals
import Synchronization

/// `gpsfix record`: a device's raw bytes to a log that `decode`, `replay` and `file:` read back.
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a device's raw bytes to a log, with a # header (device, speed, date).")

    @Argument(help: "The device: /dev/ttyUSB0, or gpsd://HOST:PORT.")
    var device: String

    @Option(name: .shortAndLong, help: "The log to write.")
    var output: String

    @Option(help: "Stop after this many seconds (default: until interrupted).")
    var duration: Double?

    @Option(help: "Serial speed; found by autobaud when not given.")
    var speed: Int?

    func validate() throws {
        // A year at most: a number of milliseconds the clock can count.
        if let duration, !(0.001...31_536_000).contains(duration) {
            throw ValidationError("--duration \(duration): give 0.001 to 31536000 seconds (a year)")
        }
    }

    func run() async throws {
        // Taken first: an interrupt ends the recording as its duration does, the log
        // flushed to disk and checked, rather than killing the tool mid-write.
        let stopSignals = try StopSignals()
        guard let name = DeviceName(device) else { throw ValidationError("'\(device)' is not a device") }
        let source = name.source(settings: SerialSettings(speed: speed))
        // Opened, not emptied: a log already there is replaced only when the device gives
        // its first bytes, so a device that cannot be read (a name mistyped) costs no
        // recording; a log made here and never written is removed.
        let created = access(output, F_OK) != 0  // a link to a log not made yet too
        let file = open(output, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw FileError(description: "cannot write \(output): \(String(cString: strerror(errno)))") }
        defer { close(file) }
        // The file made here: the log, or the one a link leads to.
        let made = created ? realpath(output, nil).map { pointer in defer { free(pointer) }; return String(cString: pointer) } : nil
        // The chunks are written on the reading thread, as they are read: a disk slower
        // than the device holds the device back, and nothing queues. A write that fails
        // stops the recording, with its reason.
        let failure = Mutex<RecordingError?>(nil)
        let recording = Mutex<Task<Void, any Error>?>(nil)
        let headerWritten = Atomic<Bool>(false)
        let reading = Task {
            try await source.chunks().forEach(onReadingThread: { chunk in
                guard failure.withLock({ $0 == nil }) else { return }
                do throws(RecordingError) {
                    if !headerWritten.exchange(true, ordering: .relaxed) {
                        try Self.empty(file)
                        try Self.write(Array(Self.header(device: device, speed: source.line?.bps ?? speed).utf8), to: file)
                    }
                    try Self.write(chunk.bytes, to: file)
                } catch {
                    failure.withLock { $0 = error }
                    recording.withLock { $0 }?.cancel()
                }
            })
        }
        recording.withLock { $0 = reading }
        if failure.withLock({ $0 != nil }) { reading.cancel() }
        // The duration or a stop signal ends the recording, unless a failure has ended it first.
        let timer = duration.map { duration in
            Task {
                try? await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
                reading.cancel()
            }
        }
        let stopping = Task {
            _ = await stopSignals.first()
            reading.cancel()
        }
        defer {
            timer?.cancel()
            stopping.cancel()
        }
        // A device that cannot be opened, or fails, is an error, not an empty log.
        do {
            try await reading.value
        } catch is CancellationError {
        } catch {
            if let made, !headerWritten.load(ordering: .relaxed) { unlink(made) }
            throw RecordingError(description: "recording \(device) failed: \(error)")
        }
        if let failed = failure.withLock({ $0 }) { throw failed }
        // The recording ended before the device sent a byte: an empty log, as asked for.
        if !headerWritten.load(ordering: .relaxed) { try Self.empty(file) }
        // Write-back errors (a USB stick pulled, NFS) show here, not in the writes.
        if fsync(file) != 0, case let error = errno, error != EINVAL {
            throw RecordingError(description: "cannot write \(output): \(String(cString: strerror(error)))")
        }
    }

    /// Empties the log at `file`, which is then written from its start; a pipe or a device
    /// (EINVAL) has nothing to empty.
    static func empty(_ file: Int32) throws(RecordingError) {
        guard ftruncate(file, 0) == 0 || errno == EINVAL else {
            throw RecordingError(description: "cannot empty the log: \(String(cString: strerror(errno)))")
        }
    }

    /// Why a recording stopped; printed as it is.
    struct RecordingError: Error, CustomStringConvertible {
        let description: String
    }

    /// All of `bytes` into `file`.
    static func write(_ bytes: some Collection<UInt8>, to file: Int32) throws(RecordingError) {
        guard writeAll(bytes, to: file) else { throw RecordingError(description: "cannot write: \(String(cString: strerror(errno)))") }
    }

    /// gpsfake's header: `# Date:` (UTC, from `now`, seconds since 1970) gives the century
    /// when the log is read back.
    static func header(device: String, speed: Int?, now: time_t = time(nil)) -> String {
        var seconds = now, parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int32, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(value).count)) + String(value) }
        let date = "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))"
        return """
            # Name: recorded by gpsfix record
            # Device: \(device)
            # Speed: \(speed.map(String.init) ?? "unknown")
            # Date: \(date)
            #

            """
    }
}
