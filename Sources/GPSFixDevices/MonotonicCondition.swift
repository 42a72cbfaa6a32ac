#if canImport(Glibc)
import Glibc
#endif

/// A condition variable whose timed waits count on the monotonic clock.
///
/// SwiftNIO's `ConditionLock` times its waits by the wall clock (`pthread_cond_timedwait`
/// on `CLOCK_REALTIME`), which the daemon's own time service may step: a step back
/// during a wait lengthens it by the step's size. Here the condition's clock is
/// `CLOCK_MONOTONIC`, as `poll`'s timeouts are (``WakeupPipe``).
///
/// What the waiter waits for is the caller's, behind a lock of its own: ``signal()`` is
/// called after changing it, and the waiter's `isReady` reads it, both under this
/// condition's mutex, so no wake-up is lost between the two.
final class MonotonicCondition: @unchecked Sendable {
    // Allocated, not stored: a pthread object must not move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Wakes every waiter, to look at `isReady` again.
    func signal() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until `isReady` holds or `timeout` has passed on the monotonic clock; whether
    /// it holds.
    func wait(timeout: Duration, until isReady: () -> Bool) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = max(timeout, .zero).components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += time_t(seconds) + time_t(nanoseconds / 1_000_000_000)
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !isReady() {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return isReady() }
        }
        return true
    }
}
