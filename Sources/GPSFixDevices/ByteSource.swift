import GPSFix

/// Raw bytes from a device: a serial port, a pseudo-terminal, a file, a gpsd.
///
/// Each call to ``chunks()`` opens the source afresh and hands over what it reads. Their
/// end without an error means the data has ended (a file read to its end); an error means
/// the device failed or vanished, and the caller may call ``chunks()`` again to reopen it.
public protocol ByteSource: Sendable {
    /// The name clients see for the device.
    var name: String { get }

    /// How the source's serial line is set, once it is open (after autobaud found the
    /// speed); `nil` for sources that are not serial lines (files, gpsd).
    var line: SerialLine? { get }

    /// Whether the source can be read later than it sends without losing anything: the
    /// writer of a pseudo-terminal, a file and a gpsd upstream wait for the reader; a
    /// serial receiver does not (its UART overruns). The server holds back only sources
    /// that can wait for a lagging client.
    var canWait: Bool { get }

    /// Whether bytes the device sent wait, unread, in the kernel: a device whose reader is
    /// late (its event loop busy for seconds on a loaded machine) is not silent. `false`
    /// where the source cannot tell.
    var hasUnreadInput: Bool { get }

    /// Whether the source finds its line's speed as it opens (autobaud), and so may be
    /// reopened to find it again when its bytes stop making frames. It may change: a
    /// serial port given its speed finds it once configuration has switched it.
    var findsSpeed: Bool { get }

    /// Opens the source and reads it, chunk by chunk.
    func chunks() -> ByteChunks
}

extension ByteSource {
    public var line: SerialLine? { nil }
    public var canWait: Bool { false }
    public var hasUnreadInput: Bool { false }
    public var findsSpeed: Bool { false }
}

/// Bytes as read from a device, and when.
public struct ByteChunk: Hashable, Sendable {
    public var bytes: [UInt8]
    /// The system clock (`CLOCK_REALTIME`) when the bytes were read, taken where the read
    /// returned, before anything else: the time service pairs a cycle's time with it. `nil`
    /// where the moment means nothing (bytes read ahead from a file).
    public var readAt: WallTime?

    public init(_ bytes: [UInt8], readAt: WallTime? = nil) {
        self.bytes = bytes
        self.readAt = readAt
    }
}
