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
        // ttyname_r: ttyname's buffer is shared by every thread making a terminal at once.
        var name = [CChar](repeating: 0, count: Int(PATH_MAX))
        let failure = ttyname_r(slave, &name, name.count)
        guard failure == 0 else {
            close(master)
            close(slave)
            throw .from(errno: failure, path: "/dev/ptmx", call: "ttyname_r")
        }
        path = String(decoding: name.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
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
    /// where the daemon's tasks run (its event loop, or Swift's pool); cancelling the calling task
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

    /// Copies every byte the slave's reader writes (corrections to a receiver, say) into
    /// `file`, as it comes, on a thread of its own, until the returned copy is stopped.
    /// A write `file` refuses (a full disk) ends the copying, kept as the copy's
    /// ``WrittenCopy/failure``; the terminal is still read, so its reader never blocks.
    /// The file descriptor stays the caller's.
    public func copyWritten(to file: Int32) -> WrittenCopy {
        let copy = WrittenCopy()
        let master = self.master
        // A descriptor of the copy's own, closed when it ends: the caller's may be closed
        // whenever the caller likes, and its number given to another file meanwhile.
        let target = fcntl(file, F_DUPFD_CLOEXEC, 0)
        guard target >= 0 else {
            copy.failed(errno: errno)
            copy.finished()
            return copy
        }
        let started = DeviceThread.start { [self] in
            // The terminal is kept alive while its master is read.
            withExtendedLifetime(self) {
                var buffer = [UInt8](repeating: 0, count: 4096)
                // Once stopped, what already waits is still copied (64 kB at most), then no more.
                var drainsLeft = 16
                while drainsLeft > 0 {
                    let stopping = copy.isStopped
                    if stopping { drainsLeft -= 1 }
                    var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                    guard poll(&poller, 1, stopping ? 0 : 100) > 0 else {
                        if stopping { break }
                        continue
                    }
                    let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                    if count <= 0, stopping { break }
                    guard count > 0, copy.failure == nil else { continue }
                    var offset = 0
                    while offset < count {
                        let written = buffer.withUnsafeBytes { Glibc.write(target, $0.baseAddress! + offset, count - offset) }
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else {
                            copy.failed(errno: written == 0 ? ENOSPC : errno)
                            break
                        }
                        offset += written
                    }
                }
                close(target)
                copy.finished()
            }
        }
        if !started {
            close(target)
            copy.failed(errno: EAGAIN)
            copy.finished()
        }
        return copy
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

/// A running copy of what a pseudo-terminal's reader writes (see ``PseudoTerminal/copyWritten(to:)``).
public final class WrittenCopy: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)
    private let refusal = Atomic<Int32>(0)

    var isStopped: Bool { stopped.load(ordering: .acquiring) }
    func finished() { done.store(true, ordering: .releasing) }
    func failed(errno: Int32) { refusal.store(errno, ordering: .releasing) }

    /// The error of the write that ended the copying (`ENOSPC` for a full disk); `nil`
    /// while every byte read was written.
    public var failure: Int32? {
        let code = refusal.load(ordering: .acquiring)
        return code == 0 ? nil : code
    }

    /// How long ``stop()`` waits for the copy to end: what the terminal holds still is 64 kB
    /// at most, written in far less unless the file's writes block (a stalled pipe, a hung
    /// network mount).
    public static let stopWait = Duration.seconds(5)

    /// Stops the copy, and waits (``stopWait`` at most) for what the terminal holds still
    /// to be copied; `false` when the copy had not ended by then: bytes may be lost. Once
    /// it returns `true`, ``failure`` is final. A second call waits no more.
    @discardableResult
    public func stop() -> Bool {
        // Asked again, it says how the first wait ended, and waits no more.
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return done.load(ordering: .acquiring) }
        let deadline = ContinuousClock.now + Self.stopWait
        while !done.load(ordering: .acquiring) {
            guard ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}
