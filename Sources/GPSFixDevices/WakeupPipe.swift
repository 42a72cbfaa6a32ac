#if canImport(Glibc)
import Glibc
#endif

/// A pipe that wakes a thread sleeping in `poll()`: the self-pipe trick. (Glibc's module
/// exports neither `eventfd` nor `pipe2`.) Both ends are non-blocking and close-on-exec.
///
/// Its waits count on the monotonic clock, as `poll`'s timeout does: a condition
/// variable's deadline is on the wall clock, which the daemon's own time service may step.
public final class WakeupPipe: Sendable {
    /// The end a thread polls, with its own other descriptors.
    public let readEnd: Int32
    private let writeEnd: Int32

    public init() throws(DeviceError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .system(path: "pipe", call: "pipe", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Makes the read end readable. A full pipe already is, so a failed write loses nothing.
    public func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, so the next `poll()` sleeps until the next signal.
    public func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Whether it is signalled now, or is within `timeout` (zero: only asks). A signal not
    /// drained stays: a pipe signalled once for good answers `true` from then on.
    public func isSignalled(within timeout: Duration) -> Bool {
        var watched = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        let milliseconds = timeout > .zero ? timeout.pollTimeout : 0
        while true {
            let ready = poll(&watched, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }
}
