/// Something a location provider has to say: a fix, a sky view, an error estimate, a raw
/// sentence, news of the device itself, or its counters.
public enum LocationUpdate: Hashable, Sendable {
    case fix(Fix)
    case sky(SkyView)
    case errorEstimate(ErrorEstimate)
    case device(DeviceEvent)
    /// A sentence as received, start character through checksum, for raw (`nmea`) watchers.
    case sentence([UInt8])
    /// The device's counters so far, sent after each chunk that completed a cycle and
    /// when the device is lost, for logs and status.
    case counters(DeviceCounters)
}

/// News of a device, which gpsd-protocol watchers receive as DEVICE reports.
public struct DeviceEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// Opened and sending valid sentences.
        case activated
        /// Silent for longer than the configured timeout; its fix has decayed to no fix.
        case silent
        /// Closed, unplugged or failed; the provider is trying to reopen it.
        case lost(reason: String)
        /// Back after being lost.
        case recovered
    }

    /// The device's name (`/dev/ttyUSB0`, `gpsd://localhost:2947`).
    public var device: String
    public var kind: Kind

    public init(device: String, kind: Kind) {
        self.device = device
        self.kind = kind
    }
}
