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
/// away, or refuses the watch (a WATCH that cannot be sent, or an ERROR in answer), the
/// stream throws and the provider reports the device lost and reconnects with its backoff.
///
/// Like a device, the connection is read on a thread of its own that sleeps until gpsd
/// sends something, with at most ``ChunkChannel/capacity`` lines waiting for the parser:
/// past that, the lines wait in the socket and gpsd's own buffering.
public struct GPSDSource: ByteSource {
    public let host: String
    public let port: Int
    /// gpsd's device to watch; all of them when `nil`.
    public let device: String?
    public var name: String { "gpsd://\(host):\(port)\(device ?? "")" }
    /// gpsd buffers for a slow client (and, past its limit, drops it; the source then
    /// reconnects).
    public var canWait: Bool { true }

    public init(host: String, port: Int = 2947, device: String? = nil) {
        self.host = host
        self.port = port
        self.device = device
    }

    public func chunks() -> ByteChunks {
        let host = host, port = String(port), device = device, name = name
        return ChunkChannel.reading(name) { channel in
            do throws(DeviceError) {
                try Self.read(host: host, port: port, device: device, name: name, into: channel)
                channel.finish()
            } catch {
                channel.finish(throwing: error)
            }
        }
    }

    /// Connects, asks for the raw sentences, and hands each line to `channel` until the
    /// consumer stops (returns) or gpsd fails (throws).
    private static func read(host: String, port: String, device: String?, name: String, into channel: ChunkChannel)
        throws(DeviceError)
    {
        let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        defer { data.deallocate() }
        guard gps_open(host, port, data) == 0 else { throw .system(path: name, call: "gps_open", errno: errno) }
        defer { gps_close(data) }
        var flags = UInt32(WATCH_ENABLE | WATCH_NMEA)
        if device != nil { flags |= UInt32(WATCH_DEVICE) }
        var devicePath = Array((device ?? "").utf8CString)
        let watched = devicePath.withUnsafeMutableBytes { gps_stream(data, flags, device == nil ? nil : $0.baseAddress) }
        guard watched == 0 else { throw .system(path: name, call: "gps_stream", errno: errno) }
        var message = [CChar](repeating: 0, count: 8192)
        while !channel.isStopped {
            // libgps may hold a whole line already; otherwise sleep until gpsd sends more.
            if !channel.hasRoom || !gps_waiting(data, 0) {
                guard case .readable = try channel.wait(for: data.pointee.gps_fd) else { continue }
            }
            let count = message.withUnsafeMutableBufferPointer { gps_read(data, $0.baseAddress, Int32($0.count)) }
            if count < 0 { throw .vanished(path: name) }
            if count == 0 {
                // Part of a line so far, or the connection closed (a peek sees its end).
                var byte: UInt8 = 0
                if recv(data.pointee.gps_fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0 { throw .vanished(path: name) }
                continue
            }
            // libgps hands over what gpsd sent: with WATCH_NMEA, the sentences themselves,
            // and gpsd's own JSON answers (VERSION, DEVICES, WATCH, or an ERROR).
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if text.hasPrefix("{\"class\":\"ERROR\"") {
                throw .refused(path: name, message: text.trimmingSuffix { $0.isNewline })
            }
            var bytes = Array(text.utf8)
            if bytes.last != UInt8(ascii: "\n") { bytes += [13, 10] }
            guard channel.yield(ByteChunk(bytes, readAt: .systemNow())) else { return }
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(while isTrimmed: (Character) -> Bool) -> String {
        var text = self
        while let last = text.last, isTrimmed(last) { text.removeLast() }
        return text
    }
}
