import NIOCore
import ServiceAddress

/// The bounds every connection of every listener lives under (gpsd's protocol on the Unix
/// socket and TCP, HTTP and its event streams, NMEA 0183 out, the control socket), and so
/// what a flood of clients can cost the daemon at most.
///
/// A connection holds at most ``queuedBytes``' high mark of unsent bytes (32 KiB) plus the
/// one write that crossed it, what one read brings (2 KiB; an HTTP connection holds the
/// requests parsed from it, up to about 30 KiB) and its channel and handlers (about 5 KiB).
/// No report is cut to a size: a write is as long as its report (a SKY takes up to about
/// 100 bytes a satellite; the status page 11 KiB), and `raw:2` hands on a device's read whole,
/// up to SwiftNIO's largest read of 64 KiB. So some 80 KiB at most, 64 KiB more for a
/// `raw:2` watcher of a flooding source. With ``network`` and ``local`` at 192 each that is
/// about 30 MB for every connection of every listener together, whatever the clients do.
public struct SessionLimits: Sendable {
    /// Each connection's unsent bytes: past `high` (the cap) the connection stops being
    /// read and lags, until it is down to `low`.
    public var queuedBytes: (low: Int, high: Int)
    /// Each connection's socket send buffer in bytes (`SO_SNDBUF`, which the kernel
    /// doubles for its bookkeeping), in place of one the kernel grows to hundreds of
    /// kilobytes: what a client that stopped reading has waiting for it beyond
    /// ``queuedBytes``, so minutes of stale reports at 1 kB/s, and kernel memory per
    /// connection. 16 KiB keeps a 10 Hz watcher's reports moving over a 200 ms line.
    public var sendBuffer: Int
    /// How long a connection may stay over its cap before it is cut off, whether or not
    /// it reads a little meanwhile.
    public var stallTimeout: Duration
    /// How long a gpsd client that watches nothing and asks nothing is kept.
    public var idleTimeout: Duration
    /// How long an HTTP connection is kept between requests, and so how long a request
    /// head may take to arrive.
    public var httpIdleTimeout: Duration
    /// The network listeners' connections (TCP: gpsd's port, HTTP, NMEA 0183
    /// out's port), counted apart from the local sockets'.
    public var network: ConnectionCap
    /// The local sockets' connections (Unix-domain: gpsd's socket, the control socket,
    /// NMEA 0183 out's socket): room of their own, so that a full network side never
    /// refuses a local program, a health check or the operator's tool.
    public var local: ConnectionCap
    /// How a network connection whose peer vanished without closing it is found gone while
    /// nothing is sent to it, which no write can fail and no idle timeout ends. A local
    /// socket's peer cannot vanish so.
    public var keepalive: TCPKeepalive

    public init(
        queuedBytes: (low: Int, high: Int) = (8 * 1024, 32 * 1024), sendBuffer: Int = 16 * 1024, stallTimeout: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(900), httpIdleTimeout: Duration = .seconds(5),
        network: ConnectionCap = ConnectionCap(connections: 192, perListener: 128),
        local: ConnectionCap = ConnectionCap(connections: 192, perListener: 128),
        keepalive: TCPKeepalive = .standard
    ) {
        self.queuedBytes = queuedBytes
        self.sendBuffer = sendBuffer
        self.stallTimeout = stallTimeout
        self.idleTimeout = idleTimeout
        self.httpIdleTimeout = httpIdleTimeout
        self.network = network
        self.local = local
        self.keepalive = keepalive
    }

    /// Turns TCP keepalive on, timed as ``keepalive`` says, for the socket whose options
    /// these are.
    func enableKeepalive(on options: some NIOSynchronousChannelOptions) throws {
        for option in keepalive.options {
            let name = ChannelOptions.Types.SocketOption(
                level: NIOBSDSocket.OptionLevel(rawValue: option.level), name: NIOBSDSocket.Option(rawValue: option.name))
            try options.setOption(name, value: SocketOptionValue(option.value))
        }
    }

    /// The cap of `side`'s connections.
    func cap(of side: ListenerSide) -> ConnectionCap {
        switch side {
        case .network: network
        case .local: local
        }
    }
}

/// How many connections one side of the listeners (network or local) holds at most: on
/// all its listeners together, and on any one of them, so that one listener's flood
/// leaves room on the others.
public struct ConnectionCap: Sendable, Equatable {
    /// Connections on all the side's listeners together at most.
    public var connections: Int
    /// Connections on one listener at most.
    public var perListener: Int

    public init(connections: Int, perListener: Int) {
        self.connections = connections
        self.perListener = perListener
    }
}

/// Which cap a listener's connections count against, by its address: a Unix-domain socket
/// is local (only this machine's processes reach it, under its file mode), any other is
/// network. A listener is sided by what it is bound to, so none can be put on the wrong
/// side, and a socket passed by the service manager is sided like one bound here.
enum ListenerSide: Hashable, Sendable {
    case network, local

    init(listeningOn address: SocketAddress?) {
        if case .unixDomainSocket = address { self = .local } else { self = .network }
    }
}

/// What a protocol handler tells the connection's ``BoundedSession`` (as an outbound user
/// event): what keeps a connection from being idle.
enum SessionActivity {
    /// A whole request arrived.
    case request
    /// The connection watches reports now (`true`), or no longer: a watcher is never
    /// closed for idleness, but at a connection cap one that was sent nothing and asked
    /// nothing for its idle timeout makes room (a poller whose WATCH streams nothing, a
    /// watcher of reports that never come), so that such connections cannot hold a listener.
    case watching(Bool)
}
