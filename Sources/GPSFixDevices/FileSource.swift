#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import NIOConcurrencyHelpers

/// A recorded log as a byte source: its receiver bytes, once, then the end of the data.
/// gpsfake's header lines are honoured (see ``CaptureLog``).
public struct FileSource: ByteSource {
    public let path: String
    public var name: String { path }
    /// A file waits to be read.
    public var canWait: Bool { true }
    /// Reads the file's payload on this reactor's thread (the server's event loop) when
    /// given; on a thread of its own otherwise.
    public var reactor: (any DescriptorReactor)?

    public init(path: String) {
        self.path = path
    }

    /// The log's header and payload, read whole; one longer than `maximumBytes` (still
    /// being written, say, or not a log at all) is refused as soon as it is read past them.
    public func load(maximumBytes: Int = .max) throws(DeviceError) -> CaptureLog {
        var bytes: [UInt8] = []
        var overlong = false
        try read(sizingBy: { bytes.reserveCapacity(min($0, maximumBytes)) }) { block in
            overlong = bytes.count + block.count > maximumBytes
            if !overlong { bytes.append(contentsOf: block) }
            return !overlong
        }
        guard !overlong else { throw .refused(path: path, message: "longer than \(maximumBytes) bytes") }
        return CaptureLog(bytes)
    }

    /// Reads the file to its end on the calling thread, handing each block as it is read
    /// to `body`: a log of any size in memory of one block (`gpsfix decode` of a day's
    /// capture). `sizingBy`, when given, learns the file's size first.
    public func read(
        blockSize: Int = 1 << 20, sizingBy size: ((Int) -> Void)? = nil, _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(DeviceError) {
        try read(blockSize: blockSize, sizingBy: size) { block -> Bool in
            body(block)
            return true
        }
    }

    /// ``read(blockSize:sizingBy:_:)`` until `body` says no more (`false`).
    private func read(
        blockSize: Int = 1 << 20, sizingBy size: ((Int) -> Void)?, _ body: (UnsafeRawBufferPointer) -> Bool
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
            guard block.withUnsafeBytes({ body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else { return }
        }
    }

    /// Streams the log's payload: a thread reads the file in 64 KiB blocks, leaves out
    /// the comment lines, and writes the rest into one end of a socket pair, whose other
    /// end is read like a device's descriptor. The thread's writes block while the reader
    /// is behind, so a large log is never held whole, and a reader on the server's event
    /// loop (``reactor``) holds the file back the way it holds back a pseudo-terminal: by
    /// reading no further. A read that fails (a failing disk, a stick pulled) ends the
    /// data with the system's reason, after the whole lines read before it.
    public func chunks() -> ByteChunks {
        let path = self.path
        // Set by the thread before it closes its end, so read by the time the reader sees
        // the end of the data.
        let readFailure = NIOLockedValueBox<DeviceError?>(nil)
        return FileDescriptorReader.chunks(
            path: path, atEndOfFile: { readFailure.withLockedValue { $0 } }, chunkSize: 1 << 16,
            reading: .init(reactor: reactor, canWait: true)
        ) { _ throws(DeviceError) in
            let file = open(path, O_RDONLY | O_CLOEXEC)
            guard file >= 0 else { throw .system(path: path, call: "open", errno: errno) }
            // A folder opens, and fails its first read: said as that, not as a log that ended.
            var status = stat()
            if fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                close(file)
                throw .system(path: path, call: "read", errno: EISDIR)
            }
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                let error = errno
                close(file)
                throw .system(path: path, call: "socketpair", errno: error)
            }
            let (readEnd, writeEnd) = (ends[0], ends[1])
            let started = DeviceThread.start(named: "gpsfix-file") {
                if let error = Self.pump(file, into: writeEnd) {
                    readFailure.withLockedValue { $0 = .system(path: path, call: "read", errno: error) }
                }
                close(file)
                close(writeEnd)
            }
            guard started else {
                [file, readEnd, writeEnd].forEach { _ = close($0) }
                throw .system(path: path, call: "pthread_create", errno: EAGAIN)
            }
            return (readEnd, [], { close(readEnd) })
        }
    }

    /// Copies the payload of `file` into `socket` until the file ends, a read fails (its
    /// `errno` returned) or the reader has gone (its end closed: the write fails, without a
    /// SIGPIPE).
    private static func pump(_ file: Int32, into socket: Int32) -> Int32? {
        var splitter = CaptureLog.Splitter()
        var block = [UInt8](repeating: 0, count: 1 << 16)
        var payload: [UInt8] = []
        payload.reserveCapacity(block.count)
        while true {
            let count = block.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return errno }
            guard count > 0 else { return nil }
            payload.removeAll(keepingCapacity: true)
            block.withUnsafeBytes { splitter.split(UnsafeRawBufferPointer(rebasing: $0[0..<count]), into: &payload) }
            var offset = 0
            while offset < payload.count {
                let sent = payload.withUnsafeBytes {
                    send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                }
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { return nil }
                offset += sent
            }
        }
    }
}
