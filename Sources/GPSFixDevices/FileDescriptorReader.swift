#if canImport(Glibc)
import Glibc
#endif
import GPSFix
import Synchronization

/// Reads a file descriptor on a thread of its own and hands the chunks to the consumer
/// through a ``ChunkChannel``.
///
/// Serial and pty reads block, so each open device gets one thread. It sleeps in `poll()`
/// until the device has bytes or the consumer wakes it (cancellation, or room for more
/// chunks once ``ChunkChannel/capacity`` were waiting): no timer, no wake-up while the
/// device is idle. The thread owns the descriptor and closes it, through `onClose`, when
/// reading ends.
enum FileDescriptorReader {
    /// Reads `descriptor` until end of file (finishes), a hang-up or error (throws
    /// ``DeviceError/vanished(path:)``), or the consumer's cancellation.
    static func chunks(
        of descriptor: Int32, path: String, endOfFileIsVanishing: Bool, chunkSize: Int = 4096,
        onClose: @escaping @Sendable () -> Void
    ) -> ByteChunks {
        chunks(path: path, endOfFileIsVanishing: endOfFileIsVanishing, chunkSize: chunkSize) { _ throws(DeviceError) in
            (descriptor, [], onClose)
        }
    }

    /// Where a descriptor is read once open: on the reading thread itself, or, for a
    /// consumer that takes chunks directly, by a reactor on its own thread.
    struct Reading: Sendable {
        var reactor: (any DescriptorReactor)?
        /// Whether the source can wait for its consumer (see ``ByteSource/canWait``).
        var canWait = false
    }

    /// Like ``chunks(of:path:endOfFileIsVanishing:chunkSize:onClose:)``, but the descriptor
    /// comes from `open`, called on the reading thread, which may block (autobaud listens
    /// there) and may hand over bytes it has already read.
    ///
    /// With a reactor in `reading` and a direct consumer, the thread opens the device and
    /// hands it to the reactor, then sleeps until the reading ends or the consumer stops.
    static func chunks(
        path: String, endOfFileIsVanishing: Bool, chunkSize: Int = 4096, reading: Reading = Reading(),
        open: @escaping @Sendable (ChunkChannel) throws(DeviceError) -> (Int32, [UInt8], @Sendable () -> Void)
    ) -> ByteChunks {
        ChunkChannel.reading(path) { channel in
            let descriptor: Int32
            let onClose: @Sendable () -> Void
            do {
                let opened = try open(channel)
                descriptor = opened.0
                onClose = opened.2
                if !opened.1.isEmpty, !channel.yield(ByteChunk(opened.1, readAt: .systemNow())) { return }
            } catch {
                channel.finish(throwing: error)
                return
            }
            defer { onClose() }
            if let reactor = reading.reactor, channel.isDirect {
                return handOver(
                    descriptor, path: path, endOfFileIsVanishing: endOfFileIsVanishing, to: reactor, canWait: reading.canWait,
                    into: channel)
            }
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            while !channel.isStopped {
                let revents: Int16
                do {
                    guard case .readable(let events) = try channel.wait(for: descriptor) else { continue }
                    revents = events
                } catch {
                    channel.finish(throwing: error)
                    return
                }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    // Stamped as the read returns, before anything else: the time service
                    // pairs the receiver's time with this moment.
                    let readAt = WallTime.systemNow()
                    let bytes = Array(buffer[0..<count])
                    guard channel.yield(ByteChunk(bytes, readAt: readAt)) else { return }
                } else if count == 0 || revents & Int16(POLLHUP | POLLERR) != 0 {
                    channel.finish(throwing: endOfFileIsVanishing ? DeviceError.vanished(path: path) : nil)
                    return
                } else if errno != EINTR && errno != EAGAIN {
                    channel.finish(throwing: DeviceError.from(errno: errno, path: path, call: "read"))
                    return
                }
            }
            channel.finish()
        }
    }

    /// Has `reactor` read `descriptor` into `channel`, and sleeps until the reading ends
    /// (the channel then ends: a device that hangs up or fails has vanished, a file's
    /// payload is over) or the consumer stops (the reading is then stopped, and waited for).
    private static func handOver(
        _ descriptor: Int32, path: String, endOfFileIsVanishing: Bool, to reactor: any DescriptorReactor, canWait: Bool,
        into channel: ChunkChannel
    ) {
        let ended: WakeupPipe
        do {
            ended = try WakeupPipe()
        } catch {
            return channel.finish(throwing: error)
        }
        let registration = reactor.read(descriptor, canWait: canWait, handler: { chunk in _ = channel.yield(chunk) }) { _ in
            ended.signal()
        }
        while true {
            let readiness: ChunkChannel.Readiness
            do {
                readiness = try channel.wait(for: ended.readEnd)
            } catch {
                registration.stop()
                return channel.finish(throwing: error)
            }
            if case .readable = readiness {
                // Read from, not only polled: the read orders what the reactor did before
                // it signalled (the last chunks it parsed) before this thread's finishing,
                // as ThreadSanitizer sees it too.
                ended.drain()
                // Read to its hang-up, end or failure, a serial device has vanished.
                return channel.finish(throwing: endOfFileIsVanishing ? DeviceError.vanished(path: path) : nil)
            }
            if channel.isStopped {
                // The reactor reads a duplicate, so the device may be closed even if its
                // loop has stopped and never says the reading ended: wait a second at most.
                registration.stop()
                var poller = pollfd(fd: ended.readEnd, events: Int16(POLLIN), revents: 0)
                while poll(&poller, 1, 1000) < 0, errno == EINTR {}
                return
            }
        }
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
