/// Where the daemon gets locations from: the seam the whole server depends on.
///
/// The daemon never sees bytes from a device, only these updates. ``NMEALocationProvider``
/// is the real one; tests give the server a mock that yields updates they script.
public protocol LocationProvider: Sendable {
    /// The device's name as clients see it (`/dev/ttyUSB0`, `gpsd://localhost:2947`).
    var device: String { get }

    /// The updates, from now until the provider ends or the consumer stops listening.
    func updates() -> AsyncStream<LocationUpdate>

    /// Runs the provider until it ends or the task is cancelled, handing each update to
    /// `deliver` as soon as it exists, on the provider's own task.
    ///
    /// A consumer that can take an update on any thread (the server hands it to its
    /// event loop) saves the stream's hop between tasks, a thread wake-up per update.
    /// Awaiting in `deliver` holds the provider back.
    func run(delivering deliver: @escaping @Sendable (LocationUpdate) async -> Void) async
}

extension LocationProvider {
    /// Delivers the updates of ``updates()``, for providers that have only a stream.
    public func run(delivering deliver: @escaping @Sendable (LocationUpdate) async -> Void) async {
        for await update in updates() { await deliver(update) }
    }
}

/// A stream of raw bytes from a device: a serial port, a pseudo-terminal, a file, a gpsd.
///
/// Each call to ``chunks()`` opens the source afresh and yields what it reads. The stream
/// finishing means the data has ended (a file read to its end); throwing means the device
/// failed or vanished, and the caller may call ``chunks()`` again to reopen it.
public protocol ByteSource: Sendable {
    /// The name clients see for the device.
    var name: String { get }

    /// How the source's serial line is set, once it is open (after autobaud found the
    /// speed); `nil` for sources that are not serial lines (files, gpsd).
    var line: SerialLine? { get }

    /// Opens the source and reads it, chunk by chunk.
    func chunks() -> ByteChunks
}

extension ByteSource {
    public var line: SerialLine? { nil }
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

/// Bytes as read from a device, and when.
public struct ByteChunk: Hashable, Sendable {
    public var bytes: [UInt8]
    /// The system clock (`CLOCK_REALTIME`) when the bytes were read, taken on the reading
    /// thread as the read returned: the time service pairs a cycle's time with it. `nil`
    /// where the moment means nothing (bytes read ahead from a file).
    public var readAt: WallTime?

    public init(_ bytes: [UInt8], readAt: WallTime? = nil) {
        self.bytes = bytes
        self.readAt = readAt
    }
}

/// The chunks a ``ByteSource`` reads, in order.
///
/// A thin wrapper of an `AsyncThrowingStream` that also tells the source each time the
/// consumer takes a chunk, so a reading thread can keep a bound on the chunks waiting
/// without polling for room (see `ChunkChannel` in GPSFixDevices).
public struct ByteChunks: AsyncSequence, Sendable {
    public typealias Element = ByteChunk

    private let stream: AsyncThrowingStream<ByteChunk, any Error>
    private let consumed: (@Sendable () -> Void)?

    /// Chunks from `stream`; `consumed` is called after each chunk the consumer takes.
    public init(_ stream: AsyncThrowingStream<ByteChunk, any Error>, consumed: (@Sendable () -> Void)? = nil) {
        self.stream = stream
        self.consumed = consumed
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<ByteChunk, any Error>.AsyncIterator
        let consumed: (@Sendable () -> Void)?

        public mutating func next() async throws -> ByteChunk? {
            let chunk = try await base.next()
            if chunk != nil { consumed?() }
            return chunk
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), consumed: consumed)
    }
}
