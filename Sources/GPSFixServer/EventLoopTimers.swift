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
        do {
            return try DescriptorTimer(eventLoop: eventLoop, body: body, logger: logger)
        } catch {
            Self.warnOfScheduledTasks(logger, reason: "no timer descriptor: \(error)")
            return Self.scheduledTasks(on: eventLoop, body)
        }
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
/// duplicate: the timer's own descriptor stays open, for setting, until ``stop()``. On
/// the loop, a setting is at most one system call, and a deadline set again before it
/// passes wakes nothing; from another thread, the setting is taken to the loop, one task
/// at a time.
///
/// The descriptor is set on the loop alone, and never once its expiry has passed: the
/// loop may have polled that expiry already, in the turn that is setting it (a device's
/// bytes, read first, moving the silence watch), and setting a timer descriptor drops an
/// expiry unread, where SwiftNIO requires a descriptor it polled as readable to have
/// something to read. The deadline is kept instead, and the expiry, once read, sets the
/// descriptor for it.
final class DescriptorTimer: DeadlineTimer {
    private let core: Core

    /// Makes the timer descriptor and has `eventLoop` read a copy of it; throws when
    /// there is no descriptor or copy to be had. A loop that refuses the copy leaves the
    /// timer to scheduled tasks (logged).
    init(eventLoop: any EventLoop, body: @escaping @Sendable () -> Void, logger: Logger) throws {
        let descriptor = gpsfix_timer_create()
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "timerfd_create") }
        let core = Core(descriptor: descriptor, eventLoop: eventLoop, body: body, logger: logger)
        self.core = core
        do {
            try NIOPipeBootstrap.readingCopy(of: descriptor, on: eventLoop) { ExpiryHandler(timer: core) }.whenComplete { result in
                switch result {
                case .success(let channel): core.attach(channel)
                case .failure(let error): core.takeOver(reason: "\(error)")
                }
            }
        } catch {
            // Closes the descriptor, and leaves nothing for `deinit` to close again.
            core.stop()
            throw error
        }
    }

    deinit {
        core.stop()
    }

    func set(in delay: Duration) {
        core.set(in: TimeAmount(delay))
    }

    func stop() {
        core.stop()
    }

    /// The timer's state, shared with its channel's handler.
    fileprivate final class Core: Sendable {
        private enum Mode {
            /// Until the loop reads the copy of the descriptor.
            case starting(CInt)
            case reading(CInt, any Channel)
            /// The loop could not read the copy.
            case scheduledTasks(TaskTimer)
            case stopped

            /// The timer's descriptor, while it has one.
            var descriptor: CInt? {
                switch self {
                case .starting(let descriptor), .reading(let descriptor, _): descriptor
                case .scheduledTasks, .stopped: nil
                }
            }
        }

        private struct State {
            var mode: Mode
            /// The deadline last set, until its callback runs, while the timer has a descriptor.
            var deadline: NIODeadline?
            /// When the descriptor comes due, from its setting until its expiry is read.
            var expiry: NIODeadline?
            /// A setting from another thread is on its way to the loop.
            var settingQueued = false
        }

        let eventLoop: any EventLoop
        private let body: @Sendable () -> Void
        private let logger: Logger
        /// Set from any thread, its descriptor on the loop: behind a pthread mutex, which
        /// ThreadSanitizer sees. Setting the descriptor holds it, so that it is not closed
        /// under a setting.
        private let state: NIOLockedValueBox<State>

        init(descriptor: CInt, eventLoop: any EventLoop, body: @escaping @Sendable () -> Void, logger: Logger) {
            state = NIOLockedValueBox(State(mode: .starting(descriptor)))
            self.eventLoop = eventLoop
            self.body = body
            self.logger = logger
        }

        /// The loop reads the copy: unless the timer stopped meanwhile.
        func attach(_ channel: any Channel) {
            let stopped = state.withLockedValue { state in
                guard case .starting(let descriptor) = state.mode else { return true }
                state.mode = .reading(descriptor, channel)
                return false
            }
            if stopped { channel.close(promise: nil) }
        }

        /// Sets the deadline `delay` from now, in place of the one before; the descriptor
        /// follows on the loop, settings from other threads in the order they came.
        func set(in delay: TimeAmount) {
            let onLoop = eventLoop.inEventLoop
            let now = NIODeadline.now()
            let queue = state.withLockedValue { state -> Bool in
                switch state.mode {
                case .starting, .reading:
                    state.deadline = now + delay
                    if onLoop {
                        Self.setDescriptor(&state, now: now)
                        return false
                    }
                    defer { state.settingQueued = true }
                    return !state.settingQueued
                case .scheduledTasks(let timer):
                    timer.set(in: Duration(delay))
                    return false
                case .stopped:
                    return false
                }
            }
            if queue {
                eventLoop.execute { [self] in
                    state.withLockedValue { state in
                        state.settingQueued = false
                        Self.setDescriptor(&state, now: .now())
                    }
                }
            }
        }

        /// The descriptor read as expired (on the loop): the callback runs if the deadline
        /// has passed, else the descriptor is set for it.
        func expired() {
            let due = state.withLockedValue { state -> Bool in
                state.expiry = nil
                guard let deadline = state.deadline, state.mode.descriptor != nil else { return false }
                let now = NIODeadline.now()
                if deadline <= now {
                    state.deadline = nil
                    return true
                }
                Self.setDescriptor(&state, now: now)
                return false
            }
            if due { body() }
        }

        /// Hands the timer to scheduled tasks when the loop cannot read its descriptor (its
        /// channel refused, or closed other than by ``stop()``): the descriptor is closed
        /// and the deadline carried over.
        func takeOver(reason: String) {
            let tookOver = state.withLockedValue { state -> Bool in
                guard let descriptor = state.mode.descriptor else { return false }
                close(descriptor)
                let timer = EventLoopTimers.scheduledTasks(on: eventLoop, body)
                if let deadline = state.deadline { timer.set(in: Duration(deadline - .now())) }
                state.mode = .scheduledTasks(timer)
                return true
            }
            if tookOver { EventLoopTimers.warnOfScheduledTasks(logger, reason: reason) }
        }

        /// Stops the timer for good. The descriptor is closed, not set: an expiry already
        /// polled is read, and runs nothing.
        func stop() {
            let channel = state.withLockedValue { state -> (any Channel)? in
                defer { state.mode = .stopped }
                switch state.mode {
                case .starting(let descriptor):
                    close(descriptor)
                    return nil
                case .reading(let descriptor, let channel):
                    close(descriptor)
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

        /// Sets the descriptor for the deadline (on the loop), unless its expiry has
        /// passed: this turn may have polled it, and it is read first.
        private static func setDescriptor(_ state: inout State, now: NIODeadline) {
            guard let deadline = state.deadline, let descriptor = state.mode.descriptor else { return }
            if let expiry = state.expiry, expiry <= now { return }
            // At least a nanosecond: none disarms it.
            _ = gpsfix_timer_set(descriptor, max(1, (deadline - now).nanoseconds))
            state.expiry = deadline
        }
    }
}

/// Tells the timer when its descriptor reads as expired, and hands it to scheduled tasks
/// when the channel closes other than by ``DescriptorTimer/stop()``.
private final class ExpiryHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let timer: DescriptorTimer.Core

    init(timer: DescriptorTimer.Core) {
        self.timer = timer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        timer.expired()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer.takeOver(reason: "its channel closed")
        context.fireChannelInactive()
    }
}
