import ReceiverFraming

/// One receiver protocol family, complete: how its frames are found in a byte stream,
/// how they become fixes and sky views, and what gpsd's DEVICE report calls it. The model
/// is gpsd's driver table (`struct gps_type_t`): one record per protocol.
///
/// A driver lives in a module of its own (`DriverCASIC`, `DriverSiRF`, ...); the
/// `ReceiverDrivers` module lists them, and a ``ReceiverStreamDecoder`` given that list
/// frames, assembles and names each receiver's stream by it. NMEA 0183 and u-blox UBX are
/// the decoder's own.
public protocol ReceiverDriver: Sendable {
    /// gpsd's DEVICE `driver`: `"CASIC"`, `"SiRF"`, `"Skytraq"`, `"Trimble TSIP"`.
    static var name: String { get }
    /// How the protocol's frames are found and checked.
    static var frames: any FrameRule.Type { get }
    /// A fresh assembler, for one receiver's stream.
    static func makeAssembler(_ context: AssemblyContext) -> any DriverAssembler
    /// The serial line settings this protocol's receivers use besides 8N1 at the common
    /// speeds, which autobaud tries after those (TSIP's 8O1: read with the wrong parity,
    /// half the bytes are lost). None by default.
    static var serialLines: [SerialLine] { get }
}

extension ReceiverDriver {
    public static var serialLines: [SerialLine] { [] }
}

/// What an assembler needs to know of the stream it reads: how to complete two-digit
/// years and which 1024-week era a receiver's week belongs to.
public struct AssemblyContext: Sendable {
    /// The century of two-digit years.
    public var centuryRule: CenturyRule
    /// The era of receivers that lost 1024 weeks.
    public var rolloverRule: RolloverRule

    public init(centuryRule: CenturyRule = CenturyRule(), rolloverRule: RolloverRule = RolloverRule()) {
        self.centuryRule = centuryRule
        self.rolloverRule = rolloverRule
    }
}

/// Turns one driver's checked frames into location updates: one fix per navigation epoch,
/// and the sky views, as ``FixAssembler`` does for NMEA and ``UBXAssembler`` for UBX.
///
/// An assembler is a stream's state, used from one thread at a time. It is a class so
/// that the decoder holds drivers it does not know by type and calls each frame's
/// assembler with one dynamic call, with nothing boxed or copied.
public protocol DriverAssembler: AnyObject {
    /// Adds one frame (sync bytes through checksum, as received), calling `emit` for each
    /// update it completes. The frame is borrowed, valid during the call only.
    func add(_ frame: UnsafeRawBufferPointer, _ emit: (LocationUpdate) -> Void)
    /// Ends the open epoch, as at the end of a log.
    func flush(_ emit: (LocationUpdate) -> Void)
    /// Changes whenever a frame opens a new epoch (see ``ReceiverStreamDecoder/cycleReadAt``).
    var cyclesOpened: Int { get }
    /// What the assembler has read, decoded, skipped and reported.
    var statistics: EpochReports.Statistics { get }
    /// Navigation solutions read: while they keep coming, this driver carries the
    /// receiver's fixes, and NMEA from the same port goes to raw watchers only.
    var solutions: Int { get }
    /// The receiver's firmware and hardware, as DEVICE's `subtype` and `subtype1`, once
    /// it has said (from an identity message); `nil` each before.
    var subtypes: (subtype: String?, subtype1: String?) { get }
    /// Changes when ``subtypes`` do: a cheap test for news of the receiver.
    var identityChanges: Int { get }
}
