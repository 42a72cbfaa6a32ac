#if canImport(Glibc)
import Glibc
#endif
import CTimerDescriptor
import GPSFix
import GPSFixDevices
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The hub's event loop as a ``TimerScheduler``: a provider's silence watch wakes the
/// loop, which is awake for the device's reads anyway, and no task on Swift's
/// cooperative pool (whose worker threads and their monitor would wake with it).
///
/// Each timer is a timer descriptor (timerfd) the loop reads through a pipe channel. A
/// task scheduled on the loop would not do: SwiftNIO keeps one timer descriptor, set for
/// the earliest deadline it was given, and a task cancelled and scheduled later still
/// wakes the loop at the first deadline, so a watch moved ahead at every sentence would
/// wake it as often as one left alone. Where the loop cannot read a timer descriptor
/// (none to be had, its channel refused or closed), the timer is scheduled tasks after
/// all: woken more often, still right, and said so in the log.
struct EventLoopTimers: TimerScheduler {
    let eventLoop: any EventLoop
    let logger: Logger

    func makeTimer(_ body: @escaping @Sendable () -> Void) -> any DeadlineTimer {
        let reason: String
        if let bootstrap = NIOPipeBootstrap(validatingGroup: eventLoop) {
            do {
                return try DescriptorTimer(bootstrap: bootstrap, eventLoop: eventLoop, body: body, logger: logger)
            } catch {
                reason = "no timer descriptor: \(error)"
            }
        } else {
            reason = "the event loop reads no descriptors"
        }
        Self.warnOfScheduledTasks(logger, reason: reason)
        return Self.scheduledTasks(on: eventLoop, body)
    }

    /// A timer of tasks scheduled on the loop.
    static func scheduledTasks(on eventLoop: any EventLoop, _ body: @escaping @Sendable () -> Void) -> TaskTimer {
        TaskTimer(body: body) { delay, body in
            let scheduled = eventLoop.scheduleTask(in: TimeAmount(delay), body)
            return { scheduled.cancel() }
        }
    }

    static func warnOfScheduledTasks(_ logger: Logger, reason: String) {
        logger.warning(
            "a device's silence watch is scheduled tasks, which wake the event loop while the device sends: \(reason)")
    }
}

/// A timer descriptor, read on the loop by a pipe channel of its own, which reads a
/// duplicate: the timer's own descriptor stays open, for setting, until ``stop()``.
/// Setting it is one system call, and a deadline set again before it passes wakes nothing.
final class DescriptorTimer: DeadlineTimer {
    private enum Mode {
        /// Until the loop reads the copy: the timer's descriptor, and its deadline for
        /// scheduled tasks to take over if the loop cannot read it.
        case starting(CInt, deadline: NIODeadline?)
        case reading(CInt, any Channel)
        /// The loop could not read the copy.
        case scheduledTasks(TaskTimer)
        case stopped
    }

    /// Set by the timer's owner, from any thread, and by the bootstrap's completion on
    /// the loop: behind a pthread mutex, which ThreadSanitizer sees. Setting the timer
    /// holds it, so the descriptor is not closed under a setting.
    private let mode: NIOLockedValueBox<Mode>

    /// Makes the timer descriptor and has `bootstrap` read a copy of it on `eventLoop`;
    /// throws the error that refused the descriptor.
    init(
        bootstrap: NIOPipeBootstrap, eventLoop: any EventLoop, body: @escaping @Sendable () -> Void, logger: Logger
    ) throws {
        let descriptor = gpsfix_timer_create()
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "timerfd_create") }
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            let code = errno
            close(descriptor)
            throw IOError(errnoCode: code, reason: "dup")
        }
        let mode = NIOLockedValueBox(Mode.starting(descriptor, deadline: nil))
        self.mode = mode
        // Once its channel is made (the initializer runs), SwiftNIO owns the copy: it closes
        // it with the channel, also on a failure after that; before, the copy is still ours.
        let channelMade = NIOLockedValueBox(false)
        bootstrap
            .channelInitializer { channel in
                channelMade.withLockedValue { $0 = true }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ExpiryHandler(body: body) {
                            Self.takeOver(mode, eventLoop: eventLoop, body: body, logger: logger, reason: "its channel closed")
                        })
                }
            }
            .takingOwnershipOfDescriptor(input: copy)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    let stopped = mode.withLockedValue { mode in
                        guard case .starting(let descriptor, _) = mode else { return true }
                        mode = .reading(descriptor, channel)
                        return false
                    }
                    if stopped { channel.close(promise: nil) }
                case .failure(let error):
                    if !channelMade.withLockedValue({ $0 }) { close(copy) }
                    Self.takeOver(mode, eventLoop: eventLoop, body: body, logger: logger, reason: "\(error)")
                }
            }
    }

    /// Hands the timer to scheduled tasks when the loop cannot read its descriptor (its
    /// channel refused, or closed other than by ``stop()``): the descriptor is closed, a
    /// deadline set before the channel was ready is carried over, and a timer that was
    /// being read runs its callback once, for its owner to set it again.
    private static func takeOver(
        _ mode: NIOLockedValueBox<Mode>, eventLoop: any EventLoop, body: @escaping @Sendable () -> Void, logger: Logger,
        reason: String
    ) {
        let wasReading = mode.withLockedValue { mode -> Bool? in
            switch mode {
            case .starting(let descriptor, let deadline):
                close(descriptor)
                let timer = EventLoopTimers.scheduledTasks(on: eventLoop, body)
                if let deadline { timer.set(in: Duration(deadline - .now())) }
                mode = .scheduledTasks(timer)
                return false
            case .reading(let descriptor, _):
                close(descriptor)
                mode = .scheduledTasks(EventLoopTimers.scheduledTasks(on: eventLoop, body))
                return true
            case .scheduledTasks, .stopped:
                return nil
            }
        }
        guard let wasReading else { return }
        EventLoopTimers.warnOfScheduledTasks(logger, reason: reason)
        if wasReading { body() }
    }

    deinit {
        stop()
    }

    func set(in delay: Duration) {
        mode.withLockedValue { mode in
            switch mode {
            case .starting(let descriptor, _):
                mode = .starting(descriptor, deadline: .now() + TimeAmount(delay))
                Self.set(descriptor, in: delay)
            case .reading(let descriptor, _):
                Self.set(descriptor, in: delay)
            case .scheduledTasks(let timer):
                timer.set(in: delay)
            case .stopped:
                break
            }
        }
    }

    func stop() {
        let channel = mode.withLockedValue { mode -> (any Channel)? in
            defer { mode = .stopped }
            switch mode {
            case .starting(let descriptor, _):
                Self.disarmAndClose(descriptor)
                return nil
            case .reading(let descriptor, let channel):
                Self.disarmAndClose(descriptor)
                return channel
            case .scheduledTasks(let timer):
                timer.stop()
                return nil
            case .stopped:
                return nil
            }
        }
        channel?.close(promise: nil)
    }

    private static func set(_ descriptor: CInt, in delay: Duration) {
        let (seconds, attoseconds) = delay.components
        // At least a nanosecond: none disarms it.
        _ = gpsfix_timer_set(descriptor, max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }

    /// Disarms the timer the loop's copy shares, so that no expiry comes before the
    /// channel is closed, and closes the timer's own descriptor.
    private static func disarmAndClose(_ descriptor: CInt) {
        _ = gpsfix_timer_set(descriptor, 0)
        close(descriptor)
    }
}

/// Calls the timer's callback when its descriptor reads as expired, and `ended` when the
/// channel closes.
private final class ExpiryHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let body: @Sendable () -> Void
    private let ended: @Sendable () -> Void

    init(body: @escaping @Sendable () -> Void, ended: @escaping @Sendable () -> Void) {
        self.body = body
        self.ended = ended
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        body()
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended()
        context.fireChannelInactive()
    }
}
