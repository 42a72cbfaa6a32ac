#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import Synchronization

/// A pseudo-terminal: the mock serial port.
///
/// Whatever is written to the master comes out of the slave, which any program opens by
/// its path exactly as it opens a real serial port, termios calls included (a pty
/// accepts them and ignores the speed). Tests and `gpsfix replay` write recorded NMEA
/// into the master; the daemon reads the slave.
public final class PseudoTerminal: Sendable {
    /// The master side, written to by the replayer.
    public let master: Int32
    /// The slave's path (`/dev/pts/N`), opened by the reader.
    public let path: String
    /// Kept open so the slave does not hang up while no reader has it open.
    private let slave: Int32

    /// Opens a new pseudo-terminal in raw mode (no echo, no line-ending translation).
    public init() throws(DeviceError) {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw .from(errno: errno, path: "/dev/ptmx", call: "openpty") }
        self.master = master
        self.slave = slave
        path = String(cString: ttyname(slave))
        try Termios.apply(SerialSettings(), to: slave, path: path)
        // Writes wait in poll() for room, so a full buffer never blocks a write midway.
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(master)
        close(slave)
    }

    /// Writes all of `bytes` to the master, waiting while the pty's buffer is full (its
    /// reader is behind). The wait happens on SwiftNIO's blocking-work thread pool, never
    /// on the cooperative pool that runs the daemon's tasks; cancelling the calling task
    /// ends it within a tenth of a second, so a replay whose reader has gone cannot hang
    /// a shutdown.
    public func write(_ bytes: [UInt8]) async throws {
        let cancelled = Atomic<Bool>(false)
        try await withTaskCancellationHandler {
            try await NIOThreadPool.singleton.runIfActive { [self] in
                try self.write(bytes, unless: { cancelled.load(ordering: .relaxed) })
            }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
        }
        try Task.checkCancellation()
    }

    /// Writes `bytes`, blocking; checks `isCancelled` each tenth of a second it waits.
    private func write(_ bytes: [UInt8], unless isCancelled: () -> Bool) throws(DeviceError) {
        var offset = 0
        while offset < bytes.count, !isCancelled() {
            var poller = pollfd(fd: master, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let written = bytes.withUnsafeBytes { Glibc.write(master, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .from(errno: errno, path: path, call: "write")
            }
            offset += written
        }
    }
}
