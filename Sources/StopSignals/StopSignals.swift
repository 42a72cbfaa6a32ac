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
/// The signals are ignored and read from dispatch sources; a child the daemon starts gets
/// them back at their defaults (`posix_spawnattr_setsigdefault`).
public final class StopSignals: @unchecked Sendable {  // Its properties are set once, in init.
    /// The signals taken as a request to stop.
    public static let numbers = [SIGTERM, SIGINT, SIGHUP]

    private let arrivals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Takes the stop signals from the process's default handling, which ends it at once.
    public init() {
        let (arrivals, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        sources = Self.numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
        self.arrivals = arrivals
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
