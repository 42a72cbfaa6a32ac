import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket bound where chronyd binds a SOCK refclock, reading what gpsfixd sends
/// it as chronyd does: one `struct sock_sample` (chrony's `refclock_sock.c`) a datagram.
public final class SockSampleSocket {
    /// chrony's `struct sock_sample`: a timeval, the offset, pulse, leap, padding, magic.
    public struct Sample: Sendable {
        public var seconds = 0
        public var microseconds = 0
        public var offset = 0.0
        public var pulse: Int32 = 0
        public var leap: Int32 = 0
        public var magic: Int32 = 0
    }

    public let path: String
    private let descriptor: Int32

    /// Binds `path`; each wait for a datagram lasts `timeout` at most.
    public init(path: String, timeout: Duration) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = LineClient.unixAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard descriptor >= 0, bound == 0 else {
            let error = POSIXError(.init(rawValue: errno) ?? .EIO)
            close(descriptor)
            throw error
        }
        var wait = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The next datagram's size and its sample (zeros when it is shorter than a sample);
    /// `nil` when none came within the timeout, or at once when `waiting` is off.
    public func receive(waiting: Bool = true) -> (size: Int, sample: Sample)? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let size = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, waiting ? 0 : Int32(MSG_DONTWAIT)) }
        guard size > 0 else { return nil }
        guard size >= 40 else { return (size, Sample()) }
        let sample = buffer.withUnsafeBytes { bytes in
            Sample(
                seconds: bytes.loadUnaligned(fromByteOffset: 0, as: Int.self), microseconds: bytes.loadUnaligned(fromByteOffset: 8, as: Int.self),
                offset: bytes.loadUnaligned(fromByteOffset: 16, as: Double.self), pulse: bytes.loadUnaligned(fromByteOffset: 24, as: Int32.self),
                leap: bytes.loadUnaligned(fromByteOffset: 28, as: Int32.self), magic: bytes.loadUnaligned(fromByteOffset: 36, as: Int32.self))
        }
        return (size, sample)
    }
}
