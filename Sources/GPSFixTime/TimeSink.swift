import GPSFix

/// Where the time service hands a sample: chrony's SOCK refclock, an NTP shared-memory
/// segment, or a fake in tests. Sending never blocks.
public protocol TimeSink: Sendable {
    /// The sink as logs and counters name it: `chrony:/run/chrony.clk.ttyUSB0.sock`, `shm:NTP0`.
    var name: String { get }

    /// Hands over one sample of the given precision (a power of two seconds).
    func send(_ sample: TimeSample, precision: Int) throws(TimeSinkError)
}

/// Why a sample did not reach a sink. None is fatal: the next sample tries again.
public enum TimeSinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nobody listens: chronyd's socket is not there (yet), or nobody reads it.
    case noListener(String)
    /// The listener did not take the sample (its queue is full).
    case notTaken(String)
    /// A system call failed.
    case system(call: String, errno: Int32)
    /// A shared-memory segment meant to be root's exists writable by another user.
    case writableByOthers(segment: String, mode: Int, owner: Int)

    public var description: String {
        switch self {
        case .noListener(let path): "nobody listens on \(path)"
        case .notTaken(let path): "\(path) took no more samples"
        case .system(let call, let errno): "\(call) failed: errno \(errno)"
        case .writableByOthers(let segment, let mode, let owner):
            "\(segment) exists with mode \(String(mode, radix: 8)), made or owned by uid \(owner): anyone who may write it could set the clock, so it is not used; remove it (ipcrm) and restart"
        }
    }
}
