#if canImport(Glibc)
import Glibc
#endif
import GPSFix

/// A recorded log as a byte source: its receiver bytes, once, then the end of the data.
/// gpsfake's header lines are honoured (see ``CaptureLog``).
public struct FileSource: ByteSource {
    public let path: String
    public var name: String { path }

    public init(path: String) {
        self.path = path
    }

    /// The log's header and payload.
    public func load() throws(DeviceError) -> CaptureLog {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .from(errno: errno, path: path, call: "open") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .from(errno: errno, path: path, call: "read")
            }
            if count == 0 { break }
            bytes += block[0..<count]
        }
        return CaptureLog(bytes)
    }

    public func chunks() -> AsyncThrowingStream<[UInt8], any Error> {
        AsyncThrowingStream { continuation in
            do {
                continuation.yield(try load().payload)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }
}
