import CStopSignals
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM, SIGINT and SIGHUP, taken as a request to stop: from ``init()`` on they no
/// longer end the process at once, and ``first()`` returns when one arrives, so the
/// process undoes what it set up (the daemon tells its clients and the service manager,
/// a replay removes its link) and exits 0. SIGHUP too: a shell's hang-up ends it as
/// cleanly as a stop does.
///
/// The signals are caught by a handler in C that writes their numbers to a pipe, in place
/// when ``init()`` returns: one sent the moment after is read once a task waits, never
/// lost (as one is while a dispatch source for an ignored signal is still being
/// registered). A child the daemon starts gets them at their defaults (exec resets a
/// caught signal's handling). Made once a process: a second is refused.
public final class StopSignals: @unchecked Sendable {  // Its properties are set once, in init.
    /// The signals taken as a request to stop.
    public static let numbers = [SIGTERM, SIGINT, SIGHUP]

    private let arrivals: AsyncStream<Int32>
    private let source: any DispatchSourceRead

    /// The system refused (no descriptor left for the pipe), or they were taken before in
    /// this process: they would end it at once, without its undoing what it set up.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Takes the stop signals from the process's default handling, which ends it at once.
    public init() throws(Unavailable) {
        let descriptor = Self.numbers.withUnsafeBufferPointer { gpsfix_stop_signals_catch($0.baseAddress, Int32($0.count)) }
        guard descriptor >= 0 else {
            let code = errno
            throw Unavailable(description: "SIGTERM, SIGINT and SIGHUP cannot be caught: \(String(cString: strerror(code)))")
        }
        let (arrivals, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        self.arrivals = arrivals
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global())
        source.setEventHandler {
            var numbers = (UInt64(0), UInt64(0))
            let count = withUnsafeMutableBytes(of: &numbers) { read(descriptor, $0.baseAddress, $0.count) }
            withUnsafeBytes(of: numbers) { bytes in
                for number in bytes.prefix(max(0, count)) { continuation.yield(Int32(number)) }
            }
        }
        source.resume()
        self.source = source
    }

    /// The first stop signal's number, when it arrives; `nil` when the waiting task is
    /// cancelled first. One task waits.
    public func first() async -> Int32? {
        var iterator = arrivals.makeAsyncIterator()
        return await iterator.next()
    }

    /// The name a log gives the signal.
    public static func name(of number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }
}
