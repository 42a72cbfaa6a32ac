import Foundation

/// A value behind a lock, shared between a test and the tasks it starts.
///
/// It uses a pthread mutex (`NSLock`) rather than `Synchronization.Mutex`: ThreadSanitizer
/// understands pthread locking, but takes the stdlib mutex's accesses for races, and
/// `scripts/sanitize thread` must report only real ones.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
