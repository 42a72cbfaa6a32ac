#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Reads a file descriptor on a thread of its own and hands the chunks to an async stream.
///
/// Serial and pty reads block, so each open device gets one thread that waits in
/// `poll()` with a short timeout (to notice cancellation) and reads what arrives. The
/// thread owns the descriptor and closes it, through `onClose`, when reading ends.
///
/// At most ``chunksInFlight`` chunks wait for the consumer: beyond that the thread holds
/// the chunk it read and stops reading, and the bytes wait in the kernel's buffer, so a
/// device (or a replay) faster than the parser never makes the daemon's memory grow.
///
/// The stream is a plain `AsyncThrowingStream`, so a consumer iterating it from an actor
/// is resumed on that actor: a chunk goes from this thread to the consumer in one hop.
enum FileDescriptorReader {
    static let chunksInFlight = 16

    /// Reads `descriptor` until end of file (finishes), a hang-up or error (throws
    /// ``DeviceError/vanished(path:)``), or the consumer's cancellation.
    static func chunks(
        of descriptor: Int32, path: String, endOfFileIsVanishing: Bool, onClose: @escaping @Sendable () -> Void
    ) -> AsyncThrowingStream<[UInt8], any Error> {
        chunks(path: path, endOfFileIsVanishing: endOfFileIsVanishing) { _ throws(DeviceError) in (descriptor, [], onClose) }
    }

    /// Like ``chunks(of:path:endOfFileIsVanishing:onClose:)``, but the descriptor comes from
    /// `open`, called on the reading thread, which may block (autobaud listens there) and may
    /// hand over bytes it has already read.
    static func chunks(
        path: String, endOfFileIsVanishing: Bool,
        open: @escaping @Sendable (SendableFlag) throws(DeviceError) -> (Int32, [UInt8], @Sendable () -> Void)
    ) -> AsyncThrowingStream<[UInt8], any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: [UInt8].self, throwing: (any Error).self, bufferingPolicy: .bufferingOldest(chunksInFlight))
        let state = SendableFlag()
        continuation.onTermination = { _ in state.set() }
        let started = DeviceThread.start {
            let descriptor: Int32
            let onClose: @Sendable () -> Void
            do {
                let opened = try open(state)
                descriptor = opened.0
                onClose = opened.2
                if !opened.1.isEmpty, !hand(opened.1, to: continuation, unless: state) { return }
            } catch {
                continuation.finish(throwing: error)
                return
            }
            defer { onClose() }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !state.isSet {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, 200)
                if ready < 0 {
                    if errno == EINTR { continue }
                    continuation.finish(throwing: DeviceError.from(errno: errno, path: path, call: "poll"))
                    return
                }
                if ready == 0 { continue }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    guard hand(Array(buffer[0..<count]), to: continuation, unless: state) else { return }
                } else if count == 0 || poller.revents & Int16(POLLHUP | POLLERR) != 0 {
                    if endOfFileIsVanishing {
                        continuation.finish(throwing: DeviceError.vanished(path: path))
                    } else {
                        continuation.finish()
                    }
                    return
                } else if errno != EINTR && errno != EAGAIN {
                    continuation.finish(throwing: DeviceError.from(errno: errno, path: path, call: "read"))
                    return
                }
            }
            continuation.finish()
        }
        if !started { continuation.finish(throwing: DeviceError.system(path: path, call: "pthread_create", errno: EAGAIN)) }
        return stream
    }

    /// Yields `chunk`; while the consumer has ``chunksInFlight`` chunks waiting, holds it
    /// and retries every millisecond. Returns `false` when the consumer has gone.
    private static func hand(
        _ chunk: [UInt8], to continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation, unless stop: SendableFlag
    ) -> Bool {
        var chunk = chunk
        while true {
            switch continuation.yield(chunk) {
            case .enqueued: return true
            case .terminated: return false
            case .dropped(let refused):
                if stop.isSet { return false }
                chunk = refused
                usleep(1000)
            @unknown default: return false
            }
        }
    }

    /// Reads `descriptor` for at most `window`, until `enough` says stop or `stop` is set.
    static func listen(
        to descriptor: Int32, for window: Duration, stop: SendableFlag, enough: ([UInt8]) -> Bool
    ) -> [UInt8] {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + window
        while !stop.isSet, ContinuousClock.now < deadline, !enough(collected) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            collected += buffer[0..<count]
        }
        return collected
    }
}

/// A flag set once, from any thread.
final class SendableFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
