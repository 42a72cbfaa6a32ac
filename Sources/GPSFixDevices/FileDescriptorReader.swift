#if canImport(Glibc)
import Glibc
#endif
import GPSFix

/// Opens a device on a thread of its own and reads it there, or hands it to a
/// ``DescriptorReactor``, through a ``DeviceReading``.
///
/// Serial and pty reads block, so a device read without a reactor gets one thread. It
/// sleeps in `poll()` until the device has bytes or the consumer stops: no timer, no
/// wake-up while the device is idle. The descriptor is closed, through `onClose`, when
/// the reading ends.
enum FileDescriptorReader {
    /// Who reads a descriptor once it is open: a reactor on its own thread, when given, or
    /// the thread that opened it.
    struct Reading: Sendable {
        var reactor: (any DescriptorReactor)?
        /// Whether the source can wait for its consumer (see ``ByteSource/canWait``).
        var canWait = false
    }

    /// Reads the descriptor `open` returns until end of file or a hang-up (finishes with what
    /// `atEndOfFile` makes of it), an error (throws it), or the consumer's cancellation.
    /// `atEndOfFile` gives `nil` when the data is over, or the error the reading ends with:
    /// a serial device or a gpsd connection has vanished (``DeviceError/vanished(path:)``),
    /// a log's reader failed. `open` is called on the opening thread, which may block
    /// (autobaud listens there), may watch the reading for the consumer's stop, and may
    /// hand over bytes it has already read.
    static func chunks(
        path: String, atEndOfFile: @escaping @Sendable () -> DeviceError?, chunkSize: Int = 4096,
        reading: Reading = Reading(),
        open: @escaping @Sendable (DeviceReading) throws(DeviceError) -> (Int32, [UInt8], @Sendable () -> Void)
    ) -> ByteChunks {
        DeviceReading.chunks(of: path) { device in
            let descriptor: Int32
            let onClose: @Sendable () -> Void
            do {
                let opened = try open(device)
                descriptor = opened.0
                onClose = opened.2
                if !opened.1.isEmpty, !device.yield(ByteChunk(opened.1, readAt: .systemNow())) {
                    onClose()
                    return device.finish()
                }
            } catch {
                return device.finish(throwing: error)
            }
            if let reactor = reading.reactor {
                // Read to its hang-up, end or failure: what end of file means here, else the failure.
                return device.handOver(descriptor, to: reactor, canWait: reading.canWait, close: onClose) { error in
                    atEndOfFile() ?? error
                }
            }
            let ending = readToTheEnd(descriptor, into: device, chunkSize: chunkSize, path: path, atEndOfFile: atEndOfFile)
            // Closed before the reading ends, so that the consumer may open it again at once.
            onClose()
            device.finish(throwing: ending)
        }
    }

    /// Reads `descriptor` on this thread, chunk by chunk, into `device`, until end of file
    /// (what `atEndOfFile` gives), a failure (its error), or the consumer's stop (`nil`).
    private static func readToTheEnd(
        _ descriptor: Int32, into device: DeviceReading, chunkSize: Int, path: String,
        atEndOfFile: () -> DeviceError?
    ) -> (any Error)? {
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while !device.isStopped {
            let revents: Int16
            do {
                guard case .readable(let events) = try device.wait(for: descriptor) else { continue }
                revents = events
            } catch {
                return error
            }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                // Stamped as the read returns, before anything else: the time service
                // pairs the receiver's time with this moment.
                let readAt = WallTime.systemNow()
                let bytes = Array(buffer[0..<count])
                guard device.yield(ByteChunk(bytes, readAt: readAt)) else { return nil }
            } else if count == 0 || revents & Int16(POLLHUP | POLLERR) != 0 {
                return atEndOfFile()
            } else if errno != EINTR && errno != EAGAIN {
                return DeviceError.from(errno: errno, path: path, call: "read")
            }
        }
        return nil
    }

    /// Reads `descriptor` for at most `window`, until `enough` says stop or `stop` is set.
    static func listen(
        to descriptor: Int32, for window: Duration, stopped: () -> Bool, enough: ([UInt8]) -> Bool
    ) -> [UInt8] {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + window
        while !stopped(), ContinuousClock.now < deadline, !enough(collected) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            collected += buffer[0..<count]
        }
        return collected
    }
}
