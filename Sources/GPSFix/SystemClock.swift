#if canImport(Glibc)
import Glibc
#endif

extension WallTime {
    /// The system's real-time clock (`CLOCK_REALTIME`) now: what a read is stamped with,
    /// and what a clock discipline compares the receiver's time against.
    public static func systemNow() -> WallTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallTime(seconds: Int(spec.tv_sec), nanoseconds: Int(spec.tv_nsec))
    }
}
