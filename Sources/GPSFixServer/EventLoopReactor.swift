import GPSFix
import GPSFixDevices
import NIOCore
import NIOPosix
import NIOConcurrencyHelpers

/// The hub's event loop as a ``DescriptorReactor``: a device's descriptor is read by a
/// SwiftNIO pipe channel on the loop (NIO supports serial lines there), so that each read
/// wakes that one thread, which parses the bytes and sends the reports in the same turn,
/// as gpsd's single loop does.
///
/// The channel reads a duplicate of the descriptor, which it closes; the device's own
/// stays with its opener (which restores the line's settings and closes it). Readers of
/// sources that can wait stop reading while a client lags (``Hub/lags(_:)``).
struct EventLoopReactor: DescriptorReactor {
    let hub: Hub

    func read(
        _ descriptor: Int32, canWait: Bool, handler: @escaping @Sendable (ByteChunk) -> Void,
        ended: @escaping @Sendable ((any Error)?) -> Void
    ) -> any ReactorRegistration {
        let hub = self.hub
        let registration = PipeRegistration()
        do {
            try NIOPipeBootstrap
                .readingCopy(of: descriptor, on: hub.eventLoop) { DeviceReadHandler(handler: handler, ended: ended) }
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        if canWait { hub.addPausableReader(channel) }
                        registration.attach(channel)
                    case .failure(let error):
                        ended(error)
                    }
                }
        } catch {
            ended(error)
        }
        return registration
    }
}

/// A device's pipe channel, closed on ``stop()`` (also when stopped before it was ready).
private final class PipeRegistration: ReactorRegistration {
    private struct State {
        var channel: (any Channel)?
        var stopped = false
    }

    /// Set from the event loop and from the reader's task: behind a pthread mutex, which
    /// ThreadSanitizer sees.
    private let state = NIOLockedValueBox(State())

    func attach(_ channel: any Channel) {
        let stopped = state.withLockedValue { state in
            state.channel = channel
            return state.stopped
        }
        if stopped { channel.close(promise: nil) }
    }

    func stop() {
        let channel = state.withLockedValue { state in
            state.stopped = true
            return state.channel
        }
        channel?.close(promise: nil)
    }
}

/// Hands what a device's channel reads to the reader's handler, stamped as it arrives,
/// and reports the end of the reading once.
private final class DeviceReadHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let handler: @Sendable (ByteChunk) -> Void
    private let ended: @Sendable ((any Error)?) -> Void
    private var error: (any Error)?

    init(handler: @escaping @Sendable (ByteChunk) -> Void, ended: @escaping @Sendable ((any Error)?) -> Void) {
        self.handler = handler
        self.ended = ended
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The time service pairs a cycle's time with this moment: taken first.
        let readAt = WallTime.systemNow()
        let buffer = unwrapInboundIn(data)
        handler(ByteChunk(Array(buffer.readableBytesView), readAt: readAt))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.error = error
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended(error)
        context.fireChannelInactive()
    }
}
