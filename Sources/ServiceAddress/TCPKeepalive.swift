#if canImport(Glibc)
import Glibc
#endif

/// TCP keepalive's timing, for every connection of the daemon's on which nothing may be
/// sent for hours (a watcher of a silent device, a rover waiting for corrections, gpsd
/// upstream of a quiet receiver): a peer that vanished without closing it (powered off,
/// a laptop put to sleep, a router restarted, a NAT entry lost) fails no write and ends
/// no read; a probe after `idleSeconds` of silence, then every `intervalSeconds`, finds
/// it gone after `probes` unanswered (two minutes by default), in the kernel's whole
/// seconds.
public struct TCPKeepalive: Sendable, Equatable {
    public var idleSeconds: Int32
    public var intervalSeconds: Int32
    public var probes: Int32

    /// A minute's silence, then six probes ten seconds apart.
    public static let standard = TCPKeepalive(idleSeconds: 60, intervalSeconds: 10, probes: 6)

    /// The socket options that turn keepalive on with this timing, for a socket's own
    /// setter (SwiftNIO's, or `setsockopt`): level, name and value.
    public var options: [(level: Int32, name: Int32, value: Int32)] {
        [
            (SOL_SOCKET, SO_KEEPALIVE, 1), (Int32(IPPROTO_TCP), TCP_KEEPIDLE, idleSeconds),
            (Int32(IPPROTO_TCP), TCP_KEEPINTVL, intervalSeconds), (Int32(IPPROTO_TCP), TCP_KEEPCNT, probes),
        ]
    }

    /// Turns keepalive on for the TCP socket `descriptor`, as far as the kernel lets it: an
    /// option it refuses costs the connection its probes, not the connection.
    public func enable(on descriptor: Int32) {
        for option in options {
            var value = option.value
            _ = setsockopt(descriptor, option.level, option.name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }
}
