#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import Synchronization

/// The hand-over from a device's reading thread to the async consumer of its chunks.
///
/// At most ``capacity`` chunks wait for the consumer: past that the thread stops reading
/// and the bytes wait in the kernel (a replay or a gpsd upstream is slowed down; a serial
/// receiver's UART buffer fills), so a source faster than the parser never makes the
/// daemon's memory grow.
///
/// The thread never polls on a timer. It sleeps in `poll()` on the device and on a
/// wake-up pipe: the consumer writes to the pipe when it takes a chunk from a full
/// channel, and when it stops listening. An idle device costs no wake-ups at all.
final class ChunkChannel: Sendable {
    static let capacity = 16

    /// Why ``wait(for:)`` returned.
    enum Readiness {
        /// The descriptor has bytes (or a hang-up or error; `revents` says which).
        case readable(revents: Int16)
        /// The consumer took a chunk, or stopped.
        case woken
    }

    private let continuation: AsyncThrowingStream<ByteChunk, any Error>.Continuation
    private let waiting = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let wakeup: WakeupPipe

    /// Runs `read` on a new device thread, feeding a new channel, and returns the chunks
    /// its consumer iterates. `read` must end the channel (``finish(throwing:)``) or return
    /// once it is stopped; failing to start the thread ends the chunks with an error
    /// naming `source`.
    static func reading(_ source: String, on read: @escaping @Sendable (ChunkChannel) -> Void) -> ByteChunks {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteChunk.self, throwing: (any Error).self)
        let wakeup: WakeupPipe
        do {
            wakeup = try WakeupPipe()
        } catch {
            continuation.finish(throwing: error)
            return ByteChunks(stream)
        }
        let channel = ChunkChannel(continuation: continuation, wakeup: wakeup)
        continuation.onTermination = { _ in channel.stop() }
        if !DeviceThread.start({ read(channel) }) {
            channel.finish(throwing: DeviceError.system(path: source, call: "pthread_create", errno: EAGAIN))
        }
        return ByteChunks(stream, consumed: { channel.consumed() })
    }

    private init(continuation: AsyncThrowingStream<ByteChunk, any Error>.Continuation, wakeup: WakeupPipe) {
        self.continuation = continuation
        self.wakeup = wakeup
    }

    /// Whether the consumer has stopped listening.
    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Whether the consumer has room for another chunk.
    var hasRoom: Bool { waiting.load(ordering: .acquiring) < Self.capacity }

    /// Hands `chunk` to the consumer. Returns `false` when it has stopped listening.
    func yield(_ chunk: ByteChunk) -> Bool {
        waiting.add(1, ordering: .acquiringAndReleasing)
        if case .terminated = continuation.yield(chunk) { return false }
        return !isStopped
    }

    /// Ends the chunks: the data is over (`nil`) or the device failed.
    func finish(throwing error: (any Error)? = nil) {
        continuation.finish(throwing: error)
    }

    /// Sleeps until `descriptor` is readable (watched only while the consumer has room)
    /// or the channel is woken.
    func wait(for descriptor: Int32) throws(DeviceError) -> Readiness {
        let watchDevice = hasRoom
        // Two entries on the stack: a wait allocates nothing.
        var descriptors = (
            pollfd(fd: wakeup.readEnd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: watchDevice ? descriptor : -1, events: Int16(POLLIN), revents: 0)
        )
        let ready = withUnsafeMutableBytes(of: &descriptors) { raw in
            let entries = raw.baseAddress!.assumingMemoryBound(to: pollfd.self)
            var result = poll(entries, 2, -1)
            while result < 0, errno == EINTR { result = poll(entries, 2, -1) }
            return result
        }
        guard ready >= 0 else { throw .system(path: "poll", call: "poll", errno: errno) }
        if descriptors.0.revents != 0 { wakeup.drain() }
        if watchDevice, descriptors.1.revents != 0 { return .readable(revents: descriptors.1.revents) }
        return .woken
    }

    /// The consumer took a chunk: wake the thread if it waits for room.
    private func consumed() {
        if waiting.subtract(1, ordering: .acquiringAndReleasing).oldValue == Self.capacity { wakeup.signal() }
    }

    /// The consumer has gone: wake the thread so it closes the device.
    private func stop() {
        stopped.store(true, ordering: .releasing)
        wakeup.signal()
    }
}

/// A pipe that wakes a thread sleeping in `poll()`: the self-pipe trick. (Glibc's module
/// exports neither `eventfd` nor `pipe2`.) Both ends are non-blocking and close-on-exec.
final class WakeupPipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(DeviceError) {
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
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe, so the next `poll()` sleeps until the next signal.
    func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
