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

    /// A TCP socket as the kernel's table shows it (`/proc/net/tcp`, `tcp6`).
    public struct TCPSocket: Sendable, Equatable {
        public var localPort: Int
        public var remotePort: Int
        /// The kernel's state: 0x01 established, 0x02 SYN sent, 0x0A listening, ...
        public var state: Int
        /// The timer running: 0 none, 1 retransmission, 2 keepalive, 3 TIME_WAIT, 4 a
        /// zero-window probe.
        public var timer: Int
        public var inode: String
    }

    /// Every TCP socket of this network namespace, IPv4 then IPv6, read line by line (a
    /// busy machine's table is megabytes).
    public func forEachTCPSocket(_ body: (TCPSocket) -> Void) {
        func port(_ address: Substring) -> Int? { address.split(separator: ":").last.flatMap { Int($0, radix: 16) } }
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            SmallFile.forEachLine(at: under(table)) { line in
                // sl, local_address, rem_address, st, tx_queue:rx_queue, tr:tm->when,
                // retrnsmt, uid, timeout, inode; the header's fields are words.
                let fields = line.split(separator: " ")
                guard fields.count > 9, let local = port(fields[1]), let remote = port(fields[2]),
                    let state = Int(fields[3], radix: 16), let timer = fields[5].split(separator: ":").first.flatMap({ Int($0, radix: 16) })
                else { return }
                body(TCPSocket(localPort: local, remotePort: remote, state: state, timer: timer, inode: String(fields[9])))
            }
        }
    }

    /// The socket inodes listening on TCP `port`, IPv4 and IPv6.
    public func listeningInodes(port: Int) -> Set<String> {
        var inodes: Set<String> = []
        forEachTCPSocket { socket in
            if socket.localPort == port, socket.state == 0x0A { inodes.insert(socket.inode) }
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
