import ProcessTable

#if canImport(Glibc)
import Glibc
#endif

/// The code the daemon ran only while starting (its options, its configuration file,
/// opening listeners and devices), handed back to the kernel once it serves.
///
/// The daemon is one static binary of about 21 MB. Starting touches code all over it, and
/// the kernel maps in 64 KB around every page touched, so a few seconds after start most
/// of the binary is resident, though serving fixes runs in a small part of it (which the
/// package's link places together). Each of the process's read-only file mappings (its
/// code and read-only data, and the libraries') is marked for random access, so that the
/// kernel does not read ahead around a page touched later (recent kernels, 6.18 among
/// them, read ahead around code all the same), and its pages are reclaimed now, not at the
/// next memory pressure; the pages still used come back as they are touched. Pages
/// another process maps too (the C library's) stay where they are.
enum StartupPages {
    /// Releases the pages, and hands `report` the resident memory before and after, in kB.
    /// What measuring and reporting touch (the /proc reader, the logger) runs only now: it
    /// is handed back too, after `report`.
    static func release(reporting report: (_ before: Int, _ after: Int) -> Void) {
        guard let before = residentKilobytes(), let maps = SmallFile.text(at: "/proc/self/maps") else { return }
        var mappings: [(start: UnsafeMutableRawPointer, length: Int)] = []
        for line in maps.split(separator: "\n") {
            // 7f1d44536000-7f1d4468c000 r-xp 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libc.so.6
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[5].hasPrefix("/"), !fields[1].contains("w"),
                let dash = fields[0].firstIndex(of: "-"),
                let start = UInt(fields[0][..<dash], radix: 16), let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16),
                let address = UnsafeMutableRawPointer(bitPattern: start)
            else { continue }
            _ = madvise(address, Int(end - start), MADV_RANDOM)
            mappings.append((address, Int(end - start)))
        }
        func pageOutAll() {
            for mapping in mappings { _ = madvise(mapping.start, mapping.length, pageOut) }
        }
        pageOutAll()
        if let after = residentKilobytes() { report(before, after) }
        pageOutAll()
    }

    /// Linux's MADV_PAGEOUT (5.4 and later); older kernels refuse it, and nothing changes.
    private static let pageOut: Int32 = 21

    /// VmRSS of /proc/self/status.
    private static func residentKilobytes() -> Int? {
        guard let status = SmallFile.text(at: "/proc/self/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.dropFirst(6).filter(\.isNumber))
    }
}
