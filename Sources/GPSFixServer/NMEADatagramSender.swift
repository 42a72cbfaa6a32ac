import Logging
import NIOCore
import NIOPosix
import OutputFormats

/// NMEA 0183 out over UDP: each sentence as one datagram to a destination, from the hub's
/// loop. A datagram the socket cannot take at once is dropped and counted, never queued.
///
/// A send the system refuses outright (`ENETUNREACH` while the interface is down, as on a
/// boat's network before its link comes up; `EPERM` from a firewall) makes SwiftNIO close
/// a datagram channel. Its sentence is counted dropped, the outage logged once, and a new
/// socket bound at the next sentence, at most once every ``rebindInterval``; the first
/// sentence sent again is logged. Used on the hub's loop only, as the hub itself is.
final class NMEADatagramSender: @unchecked Sendable {
    /// The least time between two sockets bound for a destination that refuses sends.
    static let rebindInterval = TimeAmount.seconds(5)

    private let loop: any EventLoop
    private let destination: SocketAddress
    private let filter: SentenceFilter
    private let logger: Logger
    private var channel: (any Channel)?
    private var binding = false
    private var nextBinding = NIODeadline.uptimeNanoseconds(0)
    /// Why sends fail, once logged; `nil` while they succeed.
    private var outage: String?
    private var closed = false
    private(set) var sent = 0
    private(set) var dropped = 0

    private init(loop: any EventLoop, destination: SocketAddress, filter: SentenceFilter, logger: Logger) {
        self.loop = loop
        self.destination = destination
        self.filter = filter
        self.logger = logger
    }

    /// Binds a datagram socket on `loop` (broadcast allowed) for `destination`.
    static func start(on loop: any EventLoop, to host: String, port: Int, filter: SentenceFilter, logger: Logger) async throws
        -> NMEADatagramSender
    {
        let destination = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let sender = NMEADatagramSender(loop: loop, destination: destination, filter: filter, logger: logger)
        let channel = try await sender.bind().get()
        try await loop.submit { sender.channel = channel }.get()
        return sender
    }

    private func bind() -> EventLoopFuture<any Channel> {
        DatagramBootstrap(group: loop)
            .channelOption(.socketOption(.so_broadcast), value: 1)
            .bind(host: destination.protocol == .inet6 ? "::" : "0.0.0.0", port: 0)
    }

    /// Sends `sentence`, if it passes the filter.
    func send(_ sentence: [UInt8]) {
        loop.assertInEventLoop()
        guard filter.passes(sentence) else { return }
        guard let channel, channel.isActive else {
            dropped += 1
            rebindIfDue()
            return
        }
        guard channel.isWritable else {
            dropped += 1
            return
        }
        let written = loop.makePromise(of: Void.self)
        written.futureResult.whenComplete { [self] result in
            switch result {
            case .success:
                sent += 1
                if outage != nil {
                    outage = nil
                    logger.info("NMEA 0183 out: UDP to \(destination) sending again")
                }
            case .failure(let error):
                dropped += 1
                noteFailure("\(error)")
            }
        }
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: destination, data: NMEAOutput.line(sentence)), promise: written)
    }

    private func noteFailure(_ reason: String) {
        guard outage == nil else { return }
        outage = reason
        logger.warning("NMEA 0183 out: UDP to \(destination): \(reason); sentences are dropped and counted until it sends again")
    }

    private func rebindIfDue() {
        guard !closed, !binding, NIODeadline.now() >= nextBinding else { return }
        binding = true
        nextBinding = .now() + Self.rebindInterval
        bind().hop(to: loop).whenComplete { [self] result in
            binding = false
            switch result {
            case .success(let channel) where closed:
                channel.close(promise: nil)
            case .success(let channel):
                self.channel = channel
            case .failure(let error):
                noteFailure("\(error)")
            }
        }
    }

    func close() {
        loop.assertInEventLoop()
        closed = true
        channel?.close(promise: nil)
    }
}
