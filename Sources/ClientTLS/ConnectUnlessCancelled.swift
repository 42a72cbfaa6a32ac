import NIOCore

extension EventLoopFuture where Value == any Channel {
    /// The channel this connection attempt gives, or `CancellationError` as soon as the
    /// task is cancelled: a connect to a host whose replies are dropped lasts its whole
    /// timeout (NTRIP's 30 s), which a stop should not wait for. A channel that connects
    /// after the cancel is closed.
    public func channelUnlessCancelled() async throws -> any Channel {
        let answer = eventLoop.makePromise(of: (any Channel).self)
        // Both completions run on the event loop: the first one answers.
        let loop = eventLoop
        let answered = NIOLoopBoundBox.makeBoxSendingValue(false, eventLoop: loop)
        whenComplete { result in
            if answered.value {
                if case .success(let channel) = result { channel.close(promise: nil) }
                return
            }
            answered.value = true
            answer.completeWith(result)
        }
        return try await withTaskCancellationHandler {
            try await answer.futureResult.get()
        } onCancel: {
            loop.execute {
                guard !answered.value else { return }
                answered.value = true
                answer.fail(CancellationError())
            }
        }
    }
}
