import CLibGPS
#if canImport(Glibc)
import Glibc
#endif
import GPSFix

/// A running gpsd as a byte source, through libgps.
///
/// It asks gpsd for its raw NMEA (`WATCH_ENABLE | WATCH_NMEA`, and `WATCH_DEVICE` when a
/// device is named) and hands the sentences on, so a gpsd upstream goes through the very
/// same framer and assembler as a serial port. libgps speaks TCP only. When gpsd goes
/// away the stream throws, and the provider reconnects with its backoff.
public struct GPSDSource: ByteSource {
    public let host: String
    public let port: Int
    /// gpsd's device to watch; all of them when `nil`.
    public let device: String?
    public var name: String { "gpsd://\(host):\(port)\(device ?? "")" }

    public init(host: String, port: Int = 2947, device: String? = nil) {
        self.host = host
        self.port = port
        self.device = device
    }

    public func chunks() -> AsyncThrowingStream<[UInt8], any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        let stop = SendableFlag()
        continuation.onTermination = { _ in stop.set() }
        let host = host, port = String(port), device = device, name = name
        let started = DeviceThread.start {
            let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
            defer { data.deallocate() }
            guard gps_open(host, port, data) == 0 else {
                continuation.finish(throwing: DeviceError.system(path: name, call: "gps_open", errno: errno))
                return
            }
            defer { gps_close(data) }
            var flags = UInt32(WATCH_ENABLE | WATCH_NMEA)
            if device != nil { flags |= UInt32(WATCH_DEVICE) }
            var devicePath = Array((device ?? "").utf8CString)
            _ = devicePath.withUnsafeMutableBytes { gps_stream(data, flags, device == nil ? nil : $0.baseAddress) }
            var message = [CChar](repeating: 0, count: 8192)
            while !stop.isSet {
                errno = 0  // gps_waiting leaves errno alone on a plain timeout
                guard gps_waiting(data, 250_000) else {
                    if errno != 0, errno != EINTR, errno != EAGAIN {
                        continuation.finish(throwing: DeviceError.vanished(path: name))
                        return
                    }
                    continue
                }
                let count = message.withUnsafeMutableBufferPointer { gps_read(data, $0.baseAddress, Int32($0.count)) }
                guard count > 0 else {
                    continuation.finish(throwing: DeviceError.vanished(path: name))
                    return
                }
                // libgps hands over what gpsd sent: with WATCH_NMEA, the sentences themselves.
                let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                var bytes = Array(text.utf8)
                if bytes.last != UInt8(ascii: "\n") { bytes += [13, 10] }
                continuation.yield(bytes)
            }
            continuation.finish()
        }
        if !started { continuation.finish(throwing: DeviceError.system(path: name, call: "pthread_create", errno: EAGAIN)) }
        return stream
    }
}
