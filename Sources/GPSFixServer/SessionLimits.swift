/// The bounds every connection of every listener lives under (gpsd's protocol on the Unix
/// socket and TCP, HTTP and its event streams, NMEA 0183 out), and so what a flood of
/// clients can cost the daemon at most.
///
/// A connection holds at most ``queuedBytes``' high mark of unsent bytes (32 KiB) plus the
/// one write that crossed it (a report is capped at 10 KiB, an HTTP response at the page's
/// 11 KiB), what one read brings (2 KiB; an HTTP connection holds the requests parsed
/// from it, up to about 30 KiB) and its channel and handlers (about 5 KiB): some 80 KiB
/// at most. With ``connections`` at 192 that is 15 MB for every connection of every
/// listener together, whatever the clients do.
public struct SessionLimits: Sendable {
    /// Each connection's unsent bytes: past `high` (the cap) the connection stops being
    /// read and lags, until it is down to `low`.
    public var queuedBytes: (low: Int, high: Int)
    /// How long a connection may stay over its cap before it is cut off, whether or not
    /// it reads a little meanwhile.
    public var stallTimeout: Duration
    /// How long a gpsd client that watches nothing and asks nothing is kept.
    public var idleTimeout: Duration
    /// How long an HTTP connection is kept between requests, and so how long a request
    /// head may take to arrive.
    public var httpIdleTimeout: Duration
    /// Connections on one listener at most.
    public var connectionsPerListener: Int
    /// Connections on all listeners together at most.
    public var connections: Int

    public init(
        queuedBytes: (low: Int, high: Int) = (8 * 1024, 32 * 1024), stallTimeout: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(300), httpIdleTimeout: Duration = .seconds(5), connectionsPerListener: Int = 128,
        connections: Int = 192
    ) {
        self.queuedBytes = queuedBytes
        self.stallTimeout = stallTimeout
        self.idleTimeout = idleTimeout
        self.httpIdleTimeout = httpIdleTimeout
        self.connectionsPerListener = connectionsPerListener
        self.connections = connections
    }
}

/// What a protocol handler tells the connection's ``BoundedSession`` (as an outbound user
/// event): what keeps a connection from being idle.
enum SessionActivity {
    /// A whole request arrived.
    case request
    /// The connection watches reports now (`true`), or no longer: a watcher is never idle.
    case watching(Bool)
}
