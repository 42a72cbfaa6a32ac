#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import NIOConcurrencyHelpers
import Synchronization

/// One opening of a device, read until it ends, with every chunk handed to one consumer
/// as the read returns (see ``ByteChunks``).
///
/// The device is opened on a thread of its own: an open, or autobaud listening at each
/// speed, may block for seconds. Then one of two readers takes it:
/// - a ``DescriptorReactor`` (the server's event loop), and the opening thread ends: a
///   device read on the loop costs no thread of its own while it is read;
/// - the opening thread itself (the tools and tests, which have no loop), sleeping in
///   `poll()` on the device and on a wake-up pipe that the consumer's cancellation writes
///   to: no timer, and no wake-up while the device is idle.
///
/// Either way the reader reads no further until the consumer's handler returns, and the
/// device is closed before the consumer's ``ByteChunks/forEach(onReadingThread:)`` returns,
/// so that the consumer may open it again at once.
final class DeviceReading: Sendable {
    /// Why ``wait(for:)`` returned.
    enum Readiness {
        /// The descriptor has bytes (or a hang-up or error; `revents` says which).
        case readable(revents: Int16)
        /// The consumer stopped.
        case woken
    }

    private struct State {
        /// The consumer's task, waiting for the reading to end.
        var ending: CheckedContinuation<Void, any Error>?
        /// The reactor's reading, once the device is handed over.
        var registration: (any ReactorRegistration)?
        /// Closes a device handed over to a reactor: once the reading has ended, on a
        /// thread the consumer's task waits for, never on the reactor's loop (closing a
        /// serial line may wait for its output to drain).
        var close: (@Sendable () -> Void)?
        var handedOver = false
        /// What the consumer's stop wakes a reading thread with; made when the thread
        /// first waits, so that a device handed over costs no pipe.
        var wakeup: WakeupPipe?
    }

    let handler: @Sendable (ByteChunk) -> Void
    /// Touched by the opening thread, the reactor's loop and the consumer's task: behind a
    /// pthread mutex, which ThreadSanitizer sees.
    private let state = NIOLockedValueBox(State())
    private let stopped = Atomic<Bool>(false)

    /// The chunks `open` makes available: it runs on a new device thread once the consumer
    /// starts taking them, and must end the reading (``finish(throwing:)``), read it to its
    /// end, or hand it over (``handOver(_:to:canWait:close:endingWith:)``). Failing to start
    /// the thread ends the chunks with an error naming `source`.
    static func chunks(of source: String, open: @escaping @Sendable (DeviceReading) -> Void) -> ByteChunks {
        ByteChunks { handler in
            let reading = DeviceReading(handler: handler)
            do {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        reading.state.withLockedValue { $0.ending = continuation }
                        let started = DeviceThread.start {
                            open(reading)
                            reading.threadEnded()
                        }
                        if !started {
                            reading.finish(throwing: DeviceError.system(path: source, call: "pthread_create", errno: EAGAIN))
                        }
                    }
                } onCancel: {
                    reading.stop()
                }
            } catch {
                await reading.closeHandedOverDevice()
                throw error
            }
            await reading.closeHandedOverDevice()
        }
    }

    private init(handler: @escaping @Sendable (ByteChunk) -> Void) {
        self.handler = handler
    }

    /// Whether the consumer has stopped listening.
    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Hands `chunk` to the consumer. Returns `false` when it has stopped listening.
    func yield(_ chunk: ByteChunk) -> Bool {
        handler(chunk)
        return !isStopped
    }

    /// Has `reactor` read `descriptor` from now on, and returns at once. When the reactor's
    /// reading ends, unless the consumer stopped it, the reading ends with what `endingWith`
    /// makes of its error (a serial line read to its hang-up has vanished; a file's payload
    /// is over); then `close` closes the device, on a thread the consumer's task waits for.
    func handOver(
        _ descriptor: Int32, to reactor: any DescriptorReactor, canWait: Bool, close: @escaping @Sendable () -> Void,
        endingWith ending: @escaping @Sendable ((any Error)?) -> (any Error)?
    ) {
        state.withLockedValue {
            $0.handedOver = true
            $0.close = close
        }
        let registration = reactor.read(descriptor, canWait: canWait, handler: handler) { [self] error in
            // Stopped by the consumer, the reading ends as it asked, with no error.
            finish(throwing: isStopped ? nil : ending(error))
        }
        let stopNow = state.withLockedValue { state -> Bool in
            state.registration = registration
            return stopped.load(ordering: .acquiring)
        }
        // The consumer stopped while the reading started: its `stop()` found none to stop.
        if stopNow { registration.stop() }
    }

    /// Ends the chunks: the data is over (`nil`) or the device failed. Only the first
    /// call counts.
    func finish(throwing error: (any Error)? = nil) {
        let continuation = state.withLockedValue { state in
            defer { state.ending = nil }
            return state.ending
        }
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
    }

    /// Sleeps until `descriptor` is readable or the consumer stops.
    func wait(for descriptor: Int32) throws(DeviceError) -> Readiness {
        let wakeup = try wakeupPipe()
        // The stop came before the pipe was there to wake this thread: it saw none.
        if isStopped { return .woken }
        // Two entries on the stack: a wait allocates nothing.
        var descriptors = (
            pollfd(fd: wakeup.readEnd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        )
        let ready = withUnsafeMutableBytes(of: &descriptors) { raw in
            let entries = raw.baseAddress!.assumingMemoryBound(to: pollfd.self)
            var result = poll(entries, 2, -1)
            while result < 0, errno == EINTR { result = poll(entries, 2, -1) }
            return result
        }
        guard ready >= 0 else { throw .system(path: "poll", call: "poll", errno: errno) }
        if descriptors.0.revents != 0 { wakeup.drain() }
        if descriptors.1.revents != 0 { return .readable(revents: descriptors.1.revents) }
        return .woken
    }

    /// The pipe that wakes this reading's thread, made on its first wait.
    private func wakeupPipe() throws(DeviceError) -> WakeupPipe {
        if let made = state.withLockedValue({ $0.wakeup }) { return made }
        let made = try WakeupPipe()
        state.withLockedValue { $0.wakeup = made }
        return made
    }

    /// The opening thread is done: unless it handed the device over, the reading is.
    private func threadEnded() {
        if !state.withLockedValue({ $0.handedOver }) { finish() }
    }

    /// The consumer has gone: wake the reading thread so it closes the device, or stop the
    /// reactor's reading, whose end then ends the chunks.
    private func stop() {
        stopped.store(true, ordering: .releasing)
        let (registration, wakeup) = state.withLockedValue { ($0.registration, $0.wakeup) }
        wakeup?.signal()
        registration?.stop()
    }

    /// Closes a device handed over to a reactor, once its reading has ended, on a thread
    /// of its own that the consumer's task waits for: closing a serial line waits for its
    /// output to drain (up to the driver's `closing_wait`, 30 s by default), which must
    /// hold neither the loop nor one of the few threads that run the tasks.
    private func closeHandedOverDevice() async {
        let close = state.withLockedValue { state in
            defer { state.close = nil }
            return state.close
        }
        guard let close else { return }
        await withCheckedContinuation { (closed: CheckedContinuation<Void, Never>) in
            let closing: @Sendable () -> Void = {
                close()
                closed.resume()
            }
            // Without a thread to be had, the task closes it itself.
            if !DeviceThread.start(named: "gpsfix-close", closing) { closing() }
        }
    }
}
