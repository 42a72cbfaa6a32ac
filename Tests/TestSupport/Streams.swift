import GPSFix
import GPSFixDevices

extension LocationProvider {
    /// Runs the provider in a task of its own and yields what it delivers, for a test to
    /// iterate; dropping the stream cancels the provider. Unbounded: a test reads what it
    /// asked for, and the product has no such queue (``run(delivering:)`` is its one way).
    public func updateStream() -> AsyncStream<LocationUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: LocationUpdate.self)
        let running = Task {
            await run { updates in for update in updates { continuation.yield(update) } }
            continuation.finish()
        }
        continuation.onTermination = { _ in running.cancel() }
        return stream
    }
}

extension ByteSource {
    /// Opens the source in a task of its own and yields its chunks, for a test to iterate;
    /// the stream ends as the reading does (throwing its error), and dropping it stops the
    /// reading. Unbounded, as ``LocationProvider/updateStream()``.
    public func chunkStream() -> AsyncThrowingStream<ByteChunk, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteChunk.self)
        let reading = Task {
            do {
                try await chunks().forEach(onReadingThread: { continuation.yield($0) })
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in reading.cancel() }
        return stream
    }
}
