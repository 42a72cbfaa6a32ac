import ProcessTable

#if canImport(Glibc)
import Glibc
#endif

/// The code the daemon ran only while starting (its options, its configuration file,
/// opening listeners and devices), handed back to the kernel once it serves.
///
/// The daemon is one static binary of about 25 MB. Starting touches code all over it, and
/// the kernel maps in 64 KB around every page touched, so a few seconds after start most
/// of the binary is resident, though serving fixes runs in about 1.5 MB of it. Each of the
/// process's read-only file mappings (its code and read-only data, and the libraries')
/// is marked for random access, so that the kernel does not read ahead around the code
/// that does run later, and its pages are reclaimed now, not at the next memory pressure;
/// the pages still used come back as they are touched. Pages another process maps too
/// (the C library's) stay where they are.
enum StartupPages {
    /// Releases the pages; returns the resident memory before and after, in kB.
    @discardableResult
    static func release() -> (before: Int, after: Int)? {
        guard let before = residentKilobytes(), let maps = SmallFile.text(at: "/proc/self/maps") else { return nil }
        for line in maps.split(separator: "\n") {
            // 7f1d44536000-7f1d4468c000 r-xp 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libc.so.6
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[5].hasPrefix("/"), !fields[1].contains("w"),
                let dash = fields[0].firstIndex(of: "-"),
                let start = UInt(fields[0][..<dash], radix: 16), let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16),
                let address = UnsafeMutableRawPointer(bitPattern: start)
            else { continue }
            _ = madvise(address, Int(end - start), MADV_RANDOM)
            _ = madvise(address, Int(end - start), pageOut)
        }
        return residentKilobytes().map { (before, $0) }
    }

    /// Linux's MADV_PAGEOUT (5.4 and later); older kernels refuse it, and nothing changes.
    private static let pageOut: Int32 = 21

    /// VmRSS of /proc/self/status.
    static func residentKilobytes() -> Int? {
        guard let status = SmallFile.text(at: "/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.dropFirst(6).filter(\.isNumber))
    }
}
