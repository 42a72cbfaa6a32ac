/// Something a location provider has to say: a fix, a sky view, an error estimate, a raw
/// sentence, news of the device itself, or its counters.
public enum LocationUpdate: Hashable, Sendable {
    case fix(Fix)
    case sky(SkyView)
    case errorEstimate(ErrorEstimate)
    case attitude(Attitude)
    case device(DeviceEvent)
    /// The receiver's time for a cycle and the system clock when the cycle's first timed
    /// sentence was read, once per receiver second (see ``ReceiverTimeSampler``), for
    /// the time service.
    case receiverTime(TimeSample)
    /// The receiver's word on a pulse, its next (u-blox TIM-TP) or the one just past
    /// (Trimble 0x8F-AB/0x8F-AC), for the time service.
    case nextPulse(PulseAnnouncement)
    /// A sentence as received, start character through checksum, for `nmea` and `raw:1`
    /// watchers.
    case sentence([UInt8])
    /// The device's bytes exactly as read, garbage and refused lines included, for
    /// `raw:2` watchers.
    case bytes([UInt8])
    /// An RTCM 3 frame the receiver sent (a base station's corrections), whole, preamble
    /// through CRC, for the caster and the NTRIP servers: sent only while they want them
    /// (``SentenceDemand``'s corrections).
    case rtcm3([UInt8])
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
        /// Sending again after being silent.
        case resumed
        /// Its data is over (a recorded log read to its end); its fix has decayed to no fix.
        case ended
        /// It said what it is (u-blox MON-VER) or began speaking another protocol: see
        /// ``DeviceEvent/receiver``.
        case identified
    }

    /// The device's name (`/dev/ttyUSB0`, `gpsd://localhost:2947`).
    public var device: String
    public var kind: Kind
    /// How the device's serial line is set, when it is one and it is open (with
    /// ``Kind/activated``, ``Kind/recovered`` and ``Kind/resumed``).
    public var line: SerialLine?
    /// What reads the receiver and what it said of itself, with ``Kind/activated``,
    /// ``Kind/recovered`` and ``Kind/identified``.
    public var receiver: ReceiverIdentity?

    public init(device: String, kind: Kind, line: SerialLine? = nil, receiver: ReceiverIdentity? = nil) {
        self.device = device
        self.kind = kind
        self.line = line
        self.receiver = receiver
    }
}

/// A receiver as gpsd's DEVICE report names it.
public struct ReceiverIdentity: Hashable, Sendable {
    /// gpsd's driver name for the protocol read: `NMEA0183`, `u-blox`.
    public var driver: String
    /// The receiver's versions (u-blox: `SW 2.01 (75331),HW 00080000`), once it gave them.
    public var subtype: String?
    /// Its further identification (u-blox: the MON-VER extensions, comma-separated).
    public var subtype1: String?
    /// Whether the driver reads the receiver's binary protocol rather than NMEA 0183 (from
    /// its first binary frame on): gpsd's DEVICE says so as `native` 1, which gpsd's
    /// drivers set for each binary packet and clear for each NMEA sentence.
    public var readsBinary: Bool

    public init(driver: String, subtype: String? = nil, subtype1: String? = nil, readsBinary: Bool = false) {
        self.driver = driver
        self.subtype = subtype
        self.subtype1 = subtype1
        self.readsBinary = readsBinary
    }
}
