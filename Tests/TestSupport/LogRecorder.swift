import Logging
import Synchronization

/// Every message logged, as its text.
public final class LogRecorder: LogHandler, @unchecked Sendable {
    private let recorded = Mutex<[String]>([])
    public var lines: [String] { recorded.withLock { $0 } }
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init() {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        recorded.withLock { $0.append("\(event.level) \(event.message)") }
    }
}
