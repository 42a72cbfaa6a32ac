#if canImport(Glibc)
import Glibc
#endif

/// Runs a device's blocking reads (or waits for its pulses) on a POSIX thread of its own.
///
/// Foundation's `Thread` does the same, but using it would make the daemon load
/// Foundation (several megabytes of resident memory) for this alone.
public enum DeviceThread {
    /// The name reading threads carry (in `top -H`, `/proc/PID/task/*/comm`).
    public static let name = "gpsfix-device"

    /// Starts `body` on a new detached thread named `name` (at most 15 bytes); `false`
    /// when the system refuses one.
    public static func start(named name: String = Self.name, _ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body {
            nameThisThread(name)
            body()
        }).toOpaque()
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

    /// Names the calling thread: Glibc's module exports no `pthread_setname_np`, and the
    /// kernel's file for it does the same.
    private static func nameThisThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = Array(name.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
