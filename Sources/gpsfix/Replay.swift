import ArgumentParser
import Glibc
import GPSFix
import GPSFixDevices
import ProcessTable
import StopSignals

/// `gpsfix replay`: a recorded log played into a pseudo-terminal, a fake serial GPS.
struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay an NMEA log through a pseudo-terminal, as a fake serial GPS.",
        discussion: """
            Prints the pseudo-terminal's path; any program that reads a serial GPS (gpsfixd, \
            gpsd) can open it. Cycles are paced by the sentences' own UTC times, one per \
            second at real time, like gpsfake.
            """
    )

    /// The largest log replayed: it is held in memory, planned cycle by cycle (some three
    /// copies of it), so that a loop can play it again.
    static let maximumLogBytes = 256 << 20

    @Argument(help: "The NMEA log to play.")
    var log: String

    @Option(help: "Also make this path a symbolic link to the pseudo-terminal; removed when the replay ends or is stopped (Ctrl-C, SIGTERM, SIGHUP).")
    var link: String?

    @Option(help: "Play N times faster than real time.")
    var speed: Double = 1

    @Flag(help: "Play at real time (the default; the same as --speed 1).")
    var realtime = false

    @Flag(help: "Write the whole log without pausing.")
    var asFastAsPossible = false

    @Flag(help: "Start again from the beginning at the end of the log.")
    var loop = false

    @Flag(help: "Rewrite each cycle's times and dates to the wall clock as it is written (checksums recomputed), so the replay looks like a live receiver; times keep increasing across --loop.")
    var retime = false

    @Option(help: "Save every byte a reader writes to the pseudo-terminal (what a daemon sends the receiver: RTK corrections) in this file.")
    var written: String?

    func validate() throws {
        guard (0.001...1_000_000).contains(speed) else { throw ValidationError("--speed \(speed): give 0.001 to 1000000") }
        guard !(realtime && asFastAsPossible) else { throw ValidationError("--realtime and --as-fast-as-possible exclude each other") }
    }

    func run() async throws {
        // Taken before the link is made: a stop ends the replay and removes the link, which
        // left behind would lead a reader to the next terminal given the same number.
        let stopSignals = try StopSignals()
        // A standard output whose reader has gone then fails the write of the terminal's
        // path, an error after which the link is removed, rather than ending the replay at
        // once with its link left.
        signal(SIGPIPE, SIG_IGN)
        // Held whole (a loop replays it again): a file, and one that fits.
        var status = stat()
        if stat(log, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            throw FileError(description: "\(log) is not a file: replay reads a log (gpsfix record makes one from a device)")
        }
        let loaded = Result { () throws(DeviceError) in try FileSource(path: log).load(maximumBytes: Self.maximumLogBytes) }
        if case .failure(.refused) = loaded {
            throw FileError(description: "\(log) is over \(Self.maximumLogBytes >> 20) MiB: replay holds a log in memory; cut it (split -C)")
        }
        let capture = try loaded.get()
        let replayer = Replayer(log: capture, speed: asFastAsPossible ? nil : realtime ? 1 : speed)
        guard !replayer.isEmpty else { throw FileError(description: "\(log) holds no NMEA sentence to replay") }
        let terminal = try PseudoTerminal()
        if let link {
            // Only a link is replaced (one a replay before left): anything else at the path
            // is someone's file.
            var status = stat()
            if lstat(link, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFLNK else { throw FileError(description: "--link \(link) exists and is not a link: not replaced") }
                unlink(link)
            }
            guard symlink(terminal.path, link) == 0 else {
                throw FileError(description: "--link \(link) cannot be made: \(String(cString: strerror(errno)))")
            }
        }
        // The link goes before the terminal closes, however the replay ends; not when
        // something else has been put in its place since.
        defer {
            if let link, SmallFile.linkTarget(at: link) == terminal.path { unlink(link) }
            withExtendedLifetime(terminal) {}
        }
        var copy: (file: Int32, running: WrittenCopy)?
        if let written {
            let file = open(written, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard file >= 0 else { throw FileError(description: "--written \(written) cannot be opened: \(String(cString: strerror(errno)))") }
            copy = (file, terminal.copyWritten(to: file))
        }
        defer {
            if let copy {
                copy.running.stop()
                close(copy.file)
            }
        }
        try writeLine(terminal.path)
        try await withThrowingTaskGroup { group in
            group.addTask {
                try await replayer.play(into: terminal, loop: loop, retime: retime)
                // Give a reader time to drain the pty before it closes.
                try await Task.sleep(for: .milliseconds(500))
            }
            group.addTask { _ = await stopSignals.first() }
            try await group.next()
            group.cancelAll()
        }
        if let copy, let written {
            // Ended without every byte the reader wrote: not a success.
            guard copy.running.stop() else {
                throw FileError(description: "--written \(written): its writes still blocked \(WrittenCopy.stopWait) after the replay: bytes may be lost")
            }
            if let failure = copy.running.failure {
                throw FileError(description: "--written \(written): bytes were lost: \(String(cString: strerror(failure)))")
            }
        }
    }
}
