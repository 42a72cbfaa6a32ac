import GPSFix

/// What the server counts and knows of its devices at one moment: the metrics' source.
public struct ServerSnapshot: Sendable {
    /// One side's connections (network listeners, local sockets) against its cap.
    public struct ConnectionSide: Sendable, Equatable {
        /// Open now.
        public var connections = 0
        /// On all the side's listeners together at most.
        public var cap = 0
        /// On one of its listeners at most.
        public var perListener = 0

        public init(connections: Int = 0, cap: Int = 0, perListener: Int = 0) {
            self.connections = connections
            self.cap = cap
            self.perListener = perListener
        }
    }

    /// The clients, since the server started.
    public struct Clients: Sendable {
        public var connected: Int
        public var accepted: Int
        /// Clients dropped because they did not read their reports.
        public var cutOff: Int
        public var reportsSent: Int
        /// Reports left out for clients that lagged behind a source that cannot wait.
        public var reportsDropped: Int
        /// Malformed or unsupported requests answered with an ERROR.
        public var requestsRefused: Int
        /// Open connections on every listener (gpsd's, HTTP, NMEA 0183 out).
        public var connections: Int
        /// Connections closed after their idle timeout (watching nothing, asking nothing).
        public var idleClosed: Int
        /// Idle connections closed at a connection cap to make room for a new one.
        public var evicted: Int
        /// New connections refused at a cap when none was idle.
        public var refusedAtCap: Int
        /// The network listeners' connections (TCP), against their cap.
        public var network = ConnectionSide()
        /// The local sockets' connections (Unix-domain), against their own cap.
        public var local = ConnectionSide()
    }

    /// One device, as the hub sees it.
    public struct Device: Sendable {
        public var path: String
        /// Reading now (`false` while lost or silent).
        public var online: Bool
        public var counters: DeviceCounters
        /// The latest fix's mode; `nil` before the first fix.
        public var mode: FixMode?
        public var satellitesUsed: Int?
        public var satellitesVisible: Int?
        /// Time since the last fix of mode 2D or better; `nil` if there was none yet.
        public var sinceLastFix: Duration?
        /// The latest fix's status; `nil` before the first fix.
        public var status: FixStatus?

        /// Whether the receiver can serve as an RTK base: it is online, and its survey-in is
        /// valid or it stands at a fixed position (a surveyed-time solution). What an
        /// unplugged receiver reported last does not make it ready.
        public var isBaseReady: Bool { online && (counters.survey?.isValid == true || status == .surveyedTime) }
    }

    public var clients: Clients
    /// In the order the devices were configured.
    public var devices: [Device]
    /// The caster's counts, when it serves.
    public var caster: CasterStatistics? = nil
}
