import GPSFix

/// The chunks a ``ByteSource`` reads, in order, taken in one of two ways.
///
/// - As an `AsyncSequence`: each chunk crosses to the consumer's task (the way for tools
///   and tests that iterate).
/// - With ``forEach(onReadingThread:)``: a source that reads on a thread of its own calls
///   the handler right there, as each read returns. Parsing where the bytes arrive saves a
///   thread wake-up per read, which at a receiver's 1 to 20 cycles a second is most of
///   what a cycle costs. Sources without a thread run the handler on the caller's task.
///
/// Either way the chunks are taken once: a source opens afresh on each ``ByteSource/chunks()``.
public struct ByteChunks: AsyncSequence, Sendable {
    public typealias Element = ByteChunk

    /// Starts reading into a stream; `consumed` is called after each chunk taken from it,
    /// so a reading thread can bound the chunks waiting without polling for room.
    public typealias StreamStart = @Sendable () -> (AsyncThrowingStream<ByteChunk, any Error>, consumed: (@Sendable () -> Void)?)
    /// Starts reading with every chunk handed to the handler on the reading thread; returns
    /// when the data ends, throws when the device fails, and stops reading when the task
    /// is cancelled.
    public typealias DirectStart = @Sendable (_ handler: @escaping @Sendable (ByteChunk) -> Void) async throws -> Void

    private let startStream: StreamStart
    private let startDirect: DirectStart?

    /// Chunks from `stream`; `consumed` is called after each chunk the consumer takes.
    public init(_ stream: AsyncThrowingStream<ByteChunk, any Error>, consumed: (@Sendable () -> Void)? = nil) {
        startStream = { (stream, consumed) }
        startDirect = nil
    }

    /// Chunks from a reading thread, started by whichever way the consumer takes them.
    public init(stream: @escaping StreamStart, direct: @escaping DirectStart) {
        startStream = stream
        startDirect = direct
    }

    /// Hands each chunk to `handler` as it is read: on the source's reading thread when
    /// it has one, else on the calling task. Returns when the data ends (a file read to
    /// its end), throws when the device fails or vanishes; cancelling the calling task
    /// stops the reading. The handler is never called concurrently with itself, and it
    /// may block: the source reads no further until it returns.
    public func forEach(onReadingThread handler: @escaping @Sendable (ByteChunk) -> Void) async throws {
        if let startDirect { return try await startDirect(handler) }
        for try await chunk in self { handler(chunk) }
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
        let (stream, consumed) = startStream()
        return AsyncIterator(base: stream.makeAsyncIterator(), consumed: consumed)
    }
}
