#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import Synchronization

/// A recorded log as a byte source: its receiver bytes, once, then the end of the data.
/// gpsfake's header lines are honoured (see ``CaptureLog``).
public struct FileSource: ByteSource {
    public let path: String
    public var name: String { path }
    /// A file waits to be read.
    public var canWait: Bool { true }

    public init(path: String) {
        self.path = path
    }

    /// The log's header and payload.
    public func load() throws(DeviceError) -> CaptureLog {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        // A log is a file, not a device: the plain system error says what is wrong with it.
        guard descriptor >= 0 else { throw .system(path: path, call: "open", errno: errno) }
        defer { close(descriptor) }
        // Sized by fstat and read in place: a log can be large (`gpsfix decode` of a
        // day's capture), so no intermediate buffers.
        var status = stat()
        let expected = fstat(descriptor, &status) == 0 ? max(0, Int(status.st_size)) : 0
        var bytes = [UInt8](repeating: 0, count: max(expected, 1 << 16))
        var filled = 0
        while true {
            if filled == bytes.count { bytes += [UInt8](repeating: 0, count: bytes.count) }
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(path: path, call: "read", errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeLast(bytes.count - filled)
        return CaptureLog(bytes)
    }

    /// Streams the log's payload in 64 KiB chunks on a thread of its own, with the same
    /// bound on waiting chunks as a device, so a large log is never held whole; comment
    /// lines are left out as they go by.
    public func chunks() -> ByteChunks {
        let path = self.path
        let splitter = Mutex(CaptureLog.Splitter())
        return FileDescriptorReader.chunks(
            path: path, endOfFileIsVanishing: false, chunkSize: 1 << 16,
            transform: { chunk in
                splitter.withLock { splitter in
                    var payload: [UInt8] = []
                    payload.reserveCapacity(chunk.count)
                    chunk.withUnsafeBytes { splitter.split($0, into: &payload) }
                    return payload
                }
            }
        ) { _ throws(DeviceError) in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .system(path: path, call: "open", errno: errno) }
            return (descriptor, [], { close(descriptor) })
        }
    }
}
