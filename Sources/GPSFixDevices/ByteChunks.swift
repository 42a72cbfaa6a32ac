import GPSFix

/// The chunks one opening of a ``ByteSource`` reads, handed to one consumer, in order, as
/// each read returns.
///
/// The handler runs where the bytes arrive: on the server's event loop for a device it
/// reads (``DescriptorReactor``), on the source's reading thread otherwise. Parsing there
/// saves a thread wake-up per read, which at a receiver's 1 to 20 cycles a second is most
/// of what a cycle costs, and it bounds the reading by construction: the source reads no
/// further until the handler returns, so a consumer slower than its device holds the
/// device's bytes in the kernel, never in the daemon's memory. There is no queue of chunks
/// to bound.
///
/// The chunks are taken once: a source opens afresh on each ``ByteSource/chunks()``.
public struct ByteChunks: Sendable {
    /// Reads with every chunk handed to the handler; returns when the data ends, throws
    /// when the device fails, and stops reading when the task is cancelled.
    public typealias Reading = @Sendable (_ handler: @escaping @Sendable (ByteChunk) -> Void) async throws -> Void

    private let reading: Reading

    /// The chunks `reading` hands over.
    public init(_ reading: @escaping Reading) {
        self.reading = reading
    }

    /// Chunks from `stream`, handed over on the calling task (a source that has its chunks
    /// as a stream already, such as a test's scripted receiver).
    public init(_ stream: AsyncThrowingStream<ByteChunk, any Error>) {
        reading = { handler in
            for try await chunk in stream { handler(chunk) }
        }
    }

    /// Hands each chunk to `handler` as it is read. Returns when the data ends (a file read
    /// to its end) and the device is closed; throws when the device fails or vanishes;
    /// cancelling the calling task stops the reading. The handler is never called
    /// concurrently with itself, and the source reads no further until it returns. It runs
    /// where the source is read: on the server's event loop for the daemon's devices, where
    /// it must not block, or on a reading thread of the source's (the tools), where it may.
    public func forEach(onReadingThread handler: @escaping @Sendable (ByteChunk) -> Void) async throws {
        try await reading(handler)
    }
}
