import CConcurrencyHooks
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Runs the process's Swift tasks on SwiftNIO's event loops instead of libdispatch's
/// worker threads.
///
/// A daemon whose tasks do a few microseconds of work between waits needs no pool of
/// threads for them, and libdispatch's pool costs a wake-up a second for good: once its
/// first worker starts, a monitor thread reads `/proc` for every worker each second.
/// SwiftNIO's `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`
/// does the same, but finds the runtime's hook with `dlsym`, which a binary linking the
/// Swift runtime statically (the package's) does not export: it would silently do nothing.
/// Only the global executor's enqueue is hooked; the tasks' sleeps stay libdispatch's
/// timers, so the daemon's tasks sleep on its loop's timers instead (`EventLoopClock`).
public enum TasksOnEventLoop {
    /// The runtime's hook: `(job, the runtime's own enqueue) -> ()`, Swift's convention.
    private typealias EnqueueHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Hands every task that would go to the global executor to an event loop of
    /// `MultiThreadedEventLoopGroup.singleton` (the one it runs on, when it runs on one).
    /// Call it from the main actor before any task is started, once; `false` when
    /// another hook is already installed, which is then left as it is.
    @MainActor
    public static func install() -> Bool {
        let hook = gpsfix_enqueue_global_hook()
        guard hook.pointee == nil else { return false }
        let enqueue: EnqueueHook = { job, _ in
            MultiThreadedEventLoopGroup.singleton.any().enqueue(ExecutorJob(job))
        }
        // A thin function is one code pointer, which the runtime calls with Swift's
        // convention, as it calls its other hooks.
        hook.pointee = unsafeBitCast(enqueue, to: UnsafeMutableRawPointer.self)
        return true
    }

    /// Runs `body` as the process's main task (on the event loop, after ``install()``), and
    /// exits 0 when it returns, as an asynchronous `main` does; the main thread only waits.
    ///
    /// An asynchronous `main` ends in libdispatch's `dispatchMain()`, which ends the main
    /// thread with `pthread_exit`: that unwinds the thread's stack, and the unwinder's
    /// search of the binary's unwind tables leaves half a megabyte of them resident for the
    /// process's life, to serve a main queue this daemon gives no work. The waiting main
    /// thread blocks every signal, so that none is delivered to it: a stop signal goes to
    /// a thread that takes it (the event loop's, started by the first task and so before
    /// the mask is set), where `StopSignals`' handler writes it to the pipe it reads.
    @MainActor
    public static func runMain(_ body: @escaping @Sendable () async -> Void) -> Never {
        Task.detached {
            await body()
            exit(EXIT_SUCCESS)
        }
        var signals = sigset_t()
        sigfillset(&signals)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        while true {
            pause()
        }
    }
}
