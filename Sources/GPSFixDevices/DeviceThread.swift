#if canImport(Glibc)
import Glibc
#endif

/// Runs a device's blocking reads on a POSIX thread of its own.
///
/// Foundation's `Thread` does the same, but using it would make the daemon load
/// Foundation (several megabytes of resident memory) for this alone.
enum DeviceThread {
    /// Starts `body` on a new detached thread; `false` when the system refuses one.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
