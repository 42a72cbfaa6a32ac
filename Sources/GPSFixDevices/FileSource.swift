import Foundation
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
    public func load() throws -> CaptureLog {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileManager.default.fileExists(atPath: path)
                ? DeviceError.permissionDenied(path: path) : DeviceError.notFound(path: path)
        }
        return CaptureLog(Array(data))
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
