#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Which way a pipe channel uses the descriptor it owns.
package enum PipeDirection: Sendable {
    case input
    case output
}

extension NIOPipeBootstrap {
    /// A pipe channel that owns `descriptor`, prepared on its loop by `prepare` (handlers,
    /// options), which must be the bootstrap's only preparation: a failed channel has
    /// closed the descriptor, once, however far it came.
    ///
    /// SwiftNIO (2.101) closes a descriptor it owns with its channel, also when a step
    /// after making the channel fails; a failure before (the descriptor refused) leaves it
    /// to the caller, though its documentation says the caller keeps it either way. With no
    /// channel options on the bootstrap, `prepare` runs exactly when the channel was made:
    /// that tells the two apart.
    package func takingOwnership(
        of descriptor: CInt, as direction: PipeDirection, prepare: @escaping @Sendable (any Channel) throws -> Void
    ) -> EventLoopFuture<any Channel> {
        let channelMade = NIOLockedValueBox(false)
        let bootstrap = channelInitializer { channel in
            channelMade.withLockedValue { $0 = true }
            return channel.eventLoop.makeCompletedFuture { try prepare(channel) }
        }
        let channel = switch direction {
        case .input: bootstrap.takingOwnershipOfDescriptor(input: descriptor)
        case .output: bootstrap.takingOwnershipOfDescriptor(output: descriptor)
        }
        return channel.flatMapErrorThrowing { error in
            if !channelMade.withLockedValue({ $0 }) { close(descriptor) }
            throw error
        }
    }

    /// A pipe channel reading a duplicate of `descriptor` through the handler
    /// `makeHandler` makes: the descriptor itself stays with the caller, open.
    package func readingCopy(
        of descriptor: CInt, through makeHandler: @escaping @Sendable () -> any ChannelHandler
    ) throws(IOError) -> EventLoopFuture<any Channel> {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw IOError(errnoCode: errno, reason: "dup") }
        return takingOwnership(of: copy, as: .input) { channel in
            try channel.pipeline.syncOperations.addHandler(makeHandler())
        }
    }
}
