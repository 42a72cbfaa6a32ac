#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import NIOConcurrencyHelpers
import Synchronization

/// The hand-over from a device's reading thread to the consumer of its chunks.
///
/// The consumer takes them in one of two ways (see ``ByteChunks``):
/// - **Directly**: the thread calls the consumer's handler with each chunk as the read
///   returns. The thread reads no further until the handler returns, so the handler
///   decides how far ahead the device is read.
/// - **Through a stream** to an async consumer: at most ``capacity`` chunks wait; past
///   that the thread stops reading and the bytes wait in the kernel (a replay or a gpsd
///   upstream is slowed down; a serial receiver's UART buffer fills), so a source faster
///   than the parser never makes the daemon's memory grow.
///
/// The thread never polls on a timer. It sleeps in `poll()` on the device and on a
/// wake-up pipe: the consumer writes to the pipe when it takes a chunk from a full
/// stream, and when it stops listening. An idle device costs no wake-ups at all.
final class ChunkChannel: Sendable {
    static let capacity = 16

    /// Why ``wait(for:)`` returned.
    enum Readiness {
        /// The descriptor has bytes (or a hang-up or error; `revents` says which).
        case readable(revents: Int16)
        /// The consumer took a chunk, or stopped.
        case woken
    }

    private enum Consumer: Sendable {
        case stream(AsyncThrowingStream<ByteChunk, any Error>.Continuation)
        case direct(@Sendable (ByteChunk) -> Void)
    }

    private let consumer: Consumer
    /// A direct consumer's task, waiting for the reading to end: set by that task, taken
    /// by the reading thread, behind a pthread mutex (which ThreadSanitizer sees).
    private let ending = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private let waiting = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let wakeup: WakeupPipe

    /// The chunks `read` hands over, run on a new device thread once the consumer starts
    /// taking them, in either way. `read` must end the channel (``finish(throwing:)``) or
    /// return once it is stopped; failing to start the thread ends the chunks with an error
    /// naming `source`.
    static func reading(_ source: String, on read: @escaping @Sendable (ChunkChannel) -> Void) -> ByteChunks {
        ByteChunks(
            stream: {
                let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteChunk.self, throwing: (any Error).self)
                let wakeup: WakeupPipe
                do {
                    wakeup = try WakeupPipe()
                } catch {
                    continuation.finish(throwing: error)
                    return (stream, nil)
                }
                let channel = ChunkChannel(consumer: .stream(continuation), wakeup: wakeup)
                continuation.onTermination = { _ in channel.stop() }
                channel.start(source, read)
                return (stream, { channel.consumed() })
            },
            direct: { handler in
                let channel = ChunkChannel(consumer: .direct(handler), wakeup: try WakeupPipe())
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        channel.ending.withLockedValue { $0 = continuation }
                        channel.start(source, read)
                    }
                } onCancel: {
                    channel.stop()
                }
            })
    }

    private init(consumer: Consumer, wakeup: WakeupPipe) {
        self.consumer = consumer
        self.wakeup = wakeup
    }

    private func start(_ source: String, _ read: @escaping @Sendable (ChunkChannel) -> Void) {
        // The channel ends when the thread does, whatever `read` did: a direct consumer
        // returns only once the device is closed, so it may reopen it at once.
        let started = DeviceThread.start {
            read(self)
            self.finish()
        }
        if !started { finish(throwing: DeviceError.system(path: source, call: "pthread_create", errno: EAGAIN)) }
    }

    /// Whether the consumer has stopped listening.
    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Whether the consumer takes each chunk directly (see ``ByteChunks/forEach(onReadingThread:)``).
    var isDirect: Bool {
        if case .direct = consumer { true } else { false }
    }

    /// Whether the consumer has room for another chunk (a direct consumer always has:
    /// it takes each chunk before the next read).
    var hasRoom: Bool {
        guard case .stream = consumer else { return true }
        return waiting.load(ordering: .acquiring) < Self.capacity
    }

    /// Hands `chunk` to the consumer. Returns `false` when it has stopped listening.
    func yield(_ chunk: ByteChunk) -> Bool {
        switch consumer {
        case .stream(let continuation):
            waiting.add(1, ordering: .acquiringAndReleasing)
            if case .terminated = continuation.yield(chunk) { return false }
        case .direct(let handler):
            handler(chunk)
        }
        return !isStopped
    }

    /// Ends the chunks: the data is over (`nil`) or the device failed. Only the first
    /// call counts.
    func finish(throwing error: (any Error)? = nil) {
        switch consumer {
        case .stream(let continuation):
            continuation.finish(throwing: error)
        case .direct:
            let continuation = ending.withLockedValue { waiting in
                defer { waiting = nil }
                return waiting
            }
            if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
        }
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
