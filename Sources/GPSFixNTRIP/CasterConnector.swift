import ClientTLS
import HostLookup
import NIOCore
import NIOPosix

/// How every exchange with a caster connects: TCP to its host and port, through TLS for
/// `ntrips://` (the server's certificate checked against the system's authorities, or a
/// PEM file's), within a timeout, its name looked up by ``HostLookup``. One place for it,
/// so that fetching corrections, fetching a source table and pushing a base's frames
/// connect alike.
struct CasterConnector: Sendable {
    let caster: NTRIPCaster
    private let tls: ClientTLS?

    /// Throws when the certificate authorities cannot be read, or `ntrips://` is asked of
    /// a build without TLS.
    init(caster: NTRIPCaster, certificateAuthorities: String?) throws {
        self.caster = caster
        tls = caster.usesTLS ? try ClientTLS(certificateAuthorities: certificateAuthorities) : nil
    }

    /// Connects on `eventLoop` within `timeout`; `addHandlers` adds the exchange's own
    /// handlers after TLS's. `writeBuffer`, when given, makes the channel unwritable above
    /// its high mark (see `ChannelOptions.writeBufferWaterMark`); `sendBuffer`, when given,
    /// is the socket's send buffer in bytes (`SO_SNDBUF`), instead of one the kernel grows
    /// to megabytes for a peer that does not read.
    func connect(
        on eventLoop: any EventLoop, timeout: Duration, writeBuffer: ChannelOptions.Types.WriteBufferWaterMark? = nil,
        sendBuffer: Int? = nil, addHandlers: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) -> EventLoopFuture<any Channel> {
        let (host, tls) = (caster.host, tls)
        var bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(timeout))
            .resolver(HostLookup.shared.resolver(on: eventLoop))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try tls?.addHandler(to: channel.pipeline.syncOperations, connectingTo: host)
                    try addHandlers(channel.pipeline.syncOperations)
                }
            }
        if let writeBuffer { bootstrap = bootstrap.channelOption(.writeBufferWaterMark, value: writeBuffer) }
        if let sendBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(sendBuffer)) }
        return bootstrap.connect(host: host, port: caster.port)
    }
}
