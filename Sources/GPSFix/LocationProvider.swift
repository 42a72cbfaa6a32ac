/// Where the daemon gets locations from: the seam the whole server depends on.
///
/// The daemon never sees bytes from a device, only these updates. ``NMEALocationProvider``
/// is the real one; tests give the server a mock that yields updates they script.
public protocol LocationProvider: Sendable {
    /// The device's name as clients see it (`/dev/ttyUSB0`, `gpsd://localhost:2947`).
    var device: String { get }

    /// Whether the provider's source can wait when its consumer is behind (see
    /// ``ByteSource/canWait``).
    var canWait: Bool { get }

    /// Runs the provider until it ends or the task is cancelled, handing the updates to
    /// `deliver` as soon as they exist, in order, on whatever thread produced them:
    /// ``NMEALocationProvider`` calls it where the bytes were read (the server's event loop
    /// when that reads the device: ``DescriptorReactor``; a device's thread in the tools)
    /// with what each read completed, so the consumer costs no thread wake-up of its own.
    ///
    /// Two threads may call `deliver` at once (``NMEALocationProvider``'s reading and its
    /// silence watch). The provider reads no further until `deliver` returns: that is the
    /// one bound between a device and its consumer, so no queue of updates exists to grow.
    /// A consumer on another thread may make `deliver` wait until it has taken the updates;
    /// it holds a source back for long only by pausing its reading (see
    /// ``DescriptorReactor``).
    func run(delivering deliver: @escaping @Sendable ([LocationUpdate]) -> Void) async
}

extension LocationProvider {
    public var canWait: Bool { false }
}

/// A serial line's settings as gpsd's DEVICE report states them.
public struct SerialLine: Hashable, Sendable {
    /// Bits per second.
    public var bps: Int
    /// `N`, `E` or `O`.
    public var parity: Character
    public var stopBits: Int

    public init(bps: Int, parity: Character = "N", stopBits: Int = 1) {
        self.bps = bps
        self.parity = parity
        self.stopBits = stopBits
    }
}
