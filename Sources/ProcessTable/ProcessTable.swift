#if canImport(Glibc)
import Glibc
#endif

/// The processes `/proc` shows and the TCP sockets they listen on, read under a root (`/`
/// on a live system, a fake tree in the tests), without Foundation: for the daemon's error
/// when its port is taken, and for the doctor.
public struct ProcessTable: Sendable {
    /// A running process: its id, its name, and what its descriptors are open on.
    public struct Process: Sendable, Equatable {
        public var id: Int
        public var name: String
        /// The targets of `/proc/PID/fd/*`: paths, or `socket:[INODE]`.
        public var openFiles: [String]

        public init(id: Int, name: String, openFiles: [String]) {
            self.id = id
            self.name = name
            self.openFiles = openFiles
        }

        /// The socket inodes among ``openFiles``.
        public var socketInodes: [String] { openFiles.compactMap(ProcessTable.inode(of:)) }
    }

    /// The root `/proc` is read under.
    public let root: String

    public init(root: String = "/") {
        self.root = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
    }

    /// Every process `/proc` shows (those whose descriptors cannot be read show none).
    public func processes() -> [Process] {
        entries(of: "/proc").compactMap { entry in
            guard let id = Int(entry) else { return nil }
            let name = String((text(of: "/proc/\(id)/comm") ?? "?").prefix { $0 != "\n" })
            let files = entries(of: "/proc/\(id)/fd").compactMap { SmallFile.linkTarget(at: under("/proc/\(id)/fd/\($0)")) }
            return Process(id: id, name: name, openFiles: files)
        }
    }

    /// The socket inodes listening on TCP `port`, IPv4 and IPv6 (`/proc/net/tcp`, `tcp6`).
    public func listeningInodes(port: Int) -> Set<String> {
        let hex = String(port, radix: 16, uppercase: true)
        let hexPort = ":" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read line by line: a busy machine's table is megabytes.
            SmallFile.forEachLine(at: under(table)) { line in
                let fields = line.split(separator: " ")
                // sl, local_address, rem_address, st (0A: listening), ..., inode at 9; the
                // header's fourth field is "st".
                guard fields.count > 9, fields[1].hasSuffix(hexPort), fields[3] == "0A" else { return }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }

    /// Whether a socket in this network namespace may listen on the Unix socket `path`
    /// (`/proc/net/unix`: flags `00010000`, the kernel's accepting connections, and the
    /// path the socket was bound to, last on its line). The table names a path as it was
    /// bound, perhaps through a link or relative: a listener with the same file name is
    /// taken for this one, and so is everything when the table cannot be read. `false`
    /// only says no listener of that name was found.
    public func mayBeListening(onUnixPath path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var listening = false
        let failure = SmallFile.forEachLine(at: under("/proc/net/unix")) { line in
            // Num, RefCount, Protocol, Flags, Type, St, Inode, Path.
            guard !listening else { return }
            let fields = line.split(separator: " ", maxSplits: 7, omittingEmptySubsequences: true)
            guard fields.count == 8, fields[3] == "00010000" else { return }
            let bound = fields[7]
            listening = bound == path || bound == name || bound.hasSuffix("/" + name)
        }
        return listening || failure != nil
    }

    /// The processes listening on TCP `port`.
    public func listeners(ofTCPPort port: Int) -> [Process] {
        let inodes = listeningInodes(port: port)
        guard !inodes.isEmpty else { return [] }
        return processes().filter { process in process.socketInodes.contains { inodes.contains($0) } }
    }

    /// The inode of a `socket:[INODE]` descriptor target.
    public static func inode(of target: String) -> String? {
        guard target.hasPrefix("socket:["), target.hasSuffix("]") else { return nil }
        return String(target.dropFirst("socket:[".count).dropLast())
    }

    // MARK: Reading under the root

    private func under(_ absolute: String) -> String { root == "/" ? absolute : root + absolute }

    private func text(of absolute: String) -> String? { SmallFile.text(at: under(absolute)) }

    private func entries(of absolute: String) -> [String] {
        guard let directory = opendir(under(absolute)) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
