import NIOCore

extension ChannelHandlerContext {
    /// Closes the channel once `write` has completed, whether it succeeded or not: a
    /// close at once would discard what is still queued (an answer, an error, a response).
    func close(after write: EventLoopFuture<Void>) {
        // The write's future is completed on this context's loop, where the context lives.
        write.assumeIsolated().whenComplete { [self] _ in close(promise: nil) }
    }
}

extension Channel {
    /// Closes the channel once `write` has completed, whether it succeeded or not; for
    /// writes made from outside the channel's pipeline.
    func close(after write: EventLoopFuture<Void>) {
        write.whenComplete { [self] _ in close(promise: nil) }
    }
}
