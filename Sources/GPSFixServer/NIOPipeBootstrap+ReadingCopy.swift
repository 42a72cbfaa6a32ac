#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

extension NIOPipeBootstrap {
    /// A pipe channel reading a duplicate of `descriptor` through the handler
    /// `makeHandler` makes: the descriptor itself stays with the caller, open.
    ///
    /// SwiftNIO owns the duplicate once it has made the channel, and closes it with the
    /// channel, also when a later step fails; a failure before that (the descriptor
    /// refused) leaves it to the caller, and it is closed here. The channel is made when
    /// its initializer runs, as no channel options are set.
    func readingCopy(
        of descriptor: CInt, through makeHandler: @escaping @Sendable () -> any ChannelHandler
    ) throws(IOError) -> EventLoopFuture<any Channel> {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw IOError(errnoCode: errno, reason: "dup") }
        let channelMade = NIOLockedValueBox(false)
        return channelInitializer { channel in
            channelMade.withLockedValue { $0 = true }
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(makeHandler())
            }
        }
        .takingOwnershipOfDescriptor(input: copy)
        .flatMapErrorThrowing { error in
            if !channelMade.withLockedValue({ $0 }) { close(copy) }
            throw error
        }
    }
}
