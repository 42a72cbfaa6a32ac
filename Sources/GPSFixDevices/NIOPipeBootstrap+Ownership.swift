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

/// The event loop is not one of SwiftNIO's own (NIOPosix), which alone read descriptors.
package struct LoopReadsNoDescriptors: Error, CustomStringConvertible {
    package var description: String { "the event loop reads no descriptors" }
}

extension NIOPipeBootstrap {
    /// A pipe channel on `eventLoop` that owns `descriptor`, prepared on the loop by
    /// `prepare` (handlers, options): a failed channel has closed the descriptor, once,
    /// however far it came.
    ///
    /// SwiftNIO (2.101) closes a descriptor it owns with its channel, also when a step
    /// after making the channel fails; a failure before (the descriptor refused) leaves it
    /// to the caller, though its documentation says the caller keeps it either way. The
    /// bootstrap is made here, with no channel options, so `prepare` runs exactly when the
    /// channel was made: that tells the two apart.
    package static func takingOwnership(
        of descriptor: CInt, as direction: PipeDirection, on eventLoop: any EventLoop,
        prepare: @escaping @Sendable (any Channel) throws -> Void
    ) -> EventLoopFuture<any Channel> {
        guard let bootstrap = NIOPipeBootstrap(validatingGroup: eventLoop) else {
            close(descriptor)
            return eventLoop.makeFailedFuture(LoopReadsNoDescriptors())
        }
        let channelMade = NIOLockedValueBox(false)
        let preparing = bootstrap.channelInitializer { channel in
            channelMade.withLockedValue { $0 = true }
            return channel.eventLoop.makeCompletedFuture { try prepare(channel) }
        }
        let channel = switch direction {
        case .input: preparing.takingOwnershipOfDescriptor(input: descriptor)
        case .output: preparing.takingOwnershipOfDescriptor(output: descriptor)
        }
        return channel.flatMapErrorThrowing { error in
            if !channelMade.withLockedValue({ $0 }) { close(descriptor) }
            throw error
        }
    }

    /// A pipe channel on `eventLoop` reading a duplicate of `descriptor` through the
    /// handler `makeHandler` makes: the descriptor itself stays with the caller, open.
    package static func readingCopy(
        of descriptor: CInt, on eventLoop: any EventLoop, through makeHandler: @escaping @Sendable () -> any ChannelHandler
    ) throws(IOError) -> EventLoopFuture<any Channel> {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw IOError(errnoCode: errno, reason: "dup") }
        return takingOwnership(of: copy, as: .input, on: eventLoop) { channel in
            try channel.pipeline.syncOperations.addHandler(makeHandler())
        }
    }
}
