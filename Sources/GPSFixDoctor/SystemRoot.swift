import FoundationEssentials
import ProcessTable

#if canImport(Glibc)
import Glibc
#endif

/// The machine as the doctor reads it: files under a root, `/` on a live system or a fake
/// tree (`proc/`, `sys/`, `etc/`, `dev/`, `run/`) in the tests. Paths are given as on the
/// live system (`/proc/cmdline`) and read under the root.
public struct SystemRoot: Sendable {
    public let path: String

    public init(_ path: String = "/") {
        self.path = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
    }

    /// `absolute` under the root.
    public func under(_ absolute: String) -> String { path == "/" ? absolute : path + absolute }

    public func file(_ absolute: String) -> String? { SmallFile.text(at: under(absolute)) }

    public func exists(_ absolute: String) -> Bool { FileManager.default.fileExists(atPath: under(absolute)) }

    public func directory(_ absolute: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: under(absolute))) ?? []).sorted()
    }

    /// Where a link under the root points, as written in it.
    public func link(_ absolute: String) -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: under(absolute)) }

    /// `absolute` with its links followed (inside the root for relative ones); itself when it has none.
    public func resolved(_ absolute: String) -> String {
        var current = absolute
        for _ in 0..<16 {
            guard let target = link(current) else { return current }
            current = Self.normalized(target.hasPrefix("/") ? target : current.directoryPart + "/" + target)
        }
        return current
    }

    /// An absolute path without `.`, `..` or repeated `/`.
    static func normalized(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/") where component != "." {
            if component == ".." { _ = components.popLast() } else { components.append(component) }
        }
        return "/" + components.joined(separator: "/")
    }

    /// The file's type, group and mode, links followed; `nil` when it does not exist.
    public func status(_ absolute: String) -> (isCharacterDevice: Bool, isSocket: Bool, owner: UInt32, group: UInt32, mode: UInt32)? {
        var info = stat()
        guard stat(under(absolute), &info) == 0 else { return nil }
        let type = info.st_mode & S_IFMT
        return (type == S_IFCHR, type == S_IFSOCK, info.st_uid, info.st_gid, UInt32(info.st_mode & 0o7777))
    }

    /// A group of `/etc/group`: its id and members; `nil` when there is no such group.
    public func group(_ name: String) -> (id: UInt32, members: [String])? {
        for line in (file("/etc/group") ?? "").split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 4, fields[0] == name, let id = UInt32(fields[2]) else { continue }
            return (id, fields[3].split(separator: ",").map(String.init))
        }
        return nil
    }

    /// A user of `/etc/passwd`: its id and primary group; `nil` when there is no such user.
    public func user(_ name: String) -> (id: UInt32, group: UInt32)? {
        for line in (file("/etc/passwd") ?? "").split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 4, fields[0] == name, let id = UInt32(fields[2]), let group = UInt32(fields[3]) else { continue }
            return (id, group)
        }
        return nil
    }

    /// A running process: its id, its name, and what its descriptors are open on.
    public typealias Process = ProcessTable.Process

    /// Every process `/proc` shows (those whose descriptors cannot be read show none).
    public func processes() -> [Process] { ProcessTable(root: path).processes() }

    /// The socket inodes listening on TCP `port`, IPv4 and IPv6 (`/proc/net/tcp`, `tcp6`).
    public func listeningInodes(port: Int) -> Set<String> { ProcessTable(root: path).listeningInodes(port: port) }
}

extension String {
    /// The last component of a path (`ttyACM0` of `/dev/ttyACM0`).
    var fileName: String { split(separator: "/").last.map(String.init) ?? self }

    /// The path without its last component (`/dev` of `/dev/ttyACM0`).
    var directoryPart: String { lastIndex(of: "/").map { String(self[..<$0]) } ?? "." }
}
