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
        var bytes: [UInt8] = []
        try read(sizingBy: { bytes.reserveCapacity($0) }) { bytes.append(contentsOf: $0) }
        return CaptureLog(bytes)
    }

    /// Reads the file to its end on the calling thread, handing each block as it is read
    /// to `body`: a log of any size in memory of one block (`gpsfix decode` of a day's
    /// capture). `sizingBy`, when given, learns the file's size first.
    public func read(
        blockSize: Int = 1 << 20, sizingBy size: ((Int) -> Void)? = nil, _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(DeviceError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        // A log is a file, not a device: the plain system error says what is wrong with it.
        guard descriptor >= 0 else { throw .system(path: path, call: "open", errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        if let size, fstat(descriptor, &status) == 0 { size(max(0, Int(status.st_size))) }
        var block = [UInt8](repeating: 0, count: blockSize)
        while true {
            let count = block.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(path: path, call: "read", errno: errno)
            }
            if count == 0 { return }
            block.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
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
