#if canImport(Glibc)
import Glibc
#endif

/// A file read without Foundation: whole when it is small (a `/proc` file, which reports
/// no size; a configuration file), line by line when it may be large (`/proc/net/tcp`);
/// and the plumbing of writing one durably (every byte written, its folder synced).
public enum SmallFile {
    /// Why a file could not be read.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// `open` or `read` failed with this errno.
        case system(Int32)
        /// The file holds more than the limit.
        case tooLarge(limit: Int)
        /// A FIFO, a device or a socket where a file is expected: never waited on.
        case notRegularFile

        public var description: String {
            switch self {
            case .system(let code): String(cString: strerror(code))
            case .tooLarge(let limit): "larger than \(limit / 1024) KB"
            case .notRegularFile: "not a regular file"
            }
        }
    }

    /// The bytes of the file at `path`, read to its end; at most `limit` of them. Only a
    /// regular file is read unless `anyFile` (a configuration given as `/dev/stdin`): a
    /// FIFO with no writer would be waited on, a device read without end.
    public static func bytes(at path: String, limit: Int = 1 << 20, anyFile: Bool = false) -> Result<[UInt8], Failure> {
        var bytes: [UInt8] = []
        if let failure = forEachPiece(at: path, anyFile: anyFile, { piece in
            bytes += piece
            return bytes.count <= limit
        }) {
            return .failure(failure)
        }
        return bytes.count <= limit ? .success(bytes) : .failure(.tooLarge(limit: limit))
    }

    /// Calls `body` with each line of the file at `path`, without its newline, reading the
    /// file in 64 KiB pieces, so a file of any size is read in bounded memory: `/proc/net/tcp`
    /// on a busy machine lists tens of thousands of sockets, megabytes. A line longer than
    /// `lineLimit` bytes is passed cut there. Returns why the file could not be read, if so.
    @discardableResult
    public static func forEachLine(at path: String, lineLimit: Int = 4096, _ body: (String) -> Void) -> Failure? {
        var line: [UInt8] = []
        let failure = forEachPiece(at: path, anyFile: false) { piece in
            for byte in piece {
                if byte == UInt8(ascii: "\n") {
                    body(String(decoding: line, as: UTF8.self))
                    line.removeAll(keepingCapacity: true)
                } else if line.count < lineLimit {
                    line.append(byte)
                }
            }
            return true
        }
        if failure == nil, !line.isEmpty { body(String(decoding: line, as: UTF8.self)) }
        return failure
    }

    /// Reads the file at `path` in pieces of up to 64 KiB, each passed to `body`, to its end
    /// or until `body` returns `false`; returns why it could not be read, if so. Unless
    /// `anyFile`, it must be a regular file (`/proc`'s are), opened without waiting.
    private static func forEachPiece(at path: String, anyFile: Bool, _ body: (ArraySlice<UInt8>) -> Bool) -> Failure? {
        let descriptor: Int32
        if anyFile {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return .system(errno) }
        } else {
            switch openRegularFile(at: path) {
            case .success(let opened): descriptor = opened
            case .failure(let failure): return failure
            }
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return .system(errno) }
            guard count > 0, body(buffer[0..<count]) else { return nil }
        }
    }

    /// The file at `path` opened for reading, if it is a regular file (`/proc`'s are): opened
    /// without waiting, so that a FIFO put in its place, which would wait for a writer, or a
    /// device, which would be read without end, is refused at once.
    public static func openRegularFile(at path: String) -> Result<Int32, Failure> {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(.system(errno)) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return .failure(.notRegularFile)
        }
        return .success(descriptor)
    }

    /// Where the symbolic link at `path` leads, as written; `nil` when it is not a link.
    public static func linkTarget(at path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The file's text, or `nil` when it cannot be read.
    public static func text(at path: String, limit: Int = 1 << 20) -> String? {
        (try? bytes(at: path, limit: limit).get()).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `fsync` on the folder holding `path`, after a rename into it: the rename is durable
    /// once the folder is. A failure only leaves it as durable as the file system makes it
    /// by itself.
    public static func syncFolder(of path: String) {
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let descriptor = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// Writes `bytes` to `descriptor` until done or refused, again after a signal: how many
    /// were written, and the error that stopped it (`ENOSPC` for a write that returned
    /// short, as a full disk does; 0 when all were written).
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> (written: Int, errno: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return (offset, written == 0 ? ENOSPC : errno) }
            offset += written
        }
        return (offset, 0)
    }
}
