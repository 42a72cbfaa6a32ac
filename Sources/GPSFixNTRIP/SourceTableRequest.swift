import NIOCore
import NIOPosix

extension SourceTable {
    /// Asks `caster` for its source table (NTRIP 2.0's request, which 1.0 casters answer
    /// too) and waits for it at most `timeout`.
    public static func fetch(
        from caster: NTRIPCaster, userAgent: String, certificateAuthorities: String? = nil, timeout: Duration = .seconds(10)
    ) async throws -> SourceTable {
        var tableCaster = caster
        tableCaster.mountpoint = ""
        let request = tableCaster.request(userAgent: userAgent)
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let received = eventLoop.makePromise(of: [UInt8].self)
        let channel: any Channel
        do {
            let connector = try CasterConnector(caster: caster, certificateAuthorities: certificateAuthorities)
            channel = try await connector.connect(on: eventLoop, timeout: timeout) {
                try $0.addHandler(TableHandler(caster: caster, request: request, received: received))
            }.get()
        } catch {
            // No connection, so no handler to complete the promise: failed here, as every
            // promise must be completed.
            received.fail(error)
            throw error
        }
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            received.fail(NTRIPError.protocolViolation("no source table within \(timeout)"))
        }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        return SourceTable(try await received.futureResult.get())
    }
}

/// Sends the request and hands the source table on, or the caster's refusal.
private final class TableHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let request: [UInt8]
    private let received: EventLoopPromise<[UInt8]>
    private let reader: NIOLoopBoundBox<NTRIPResponseReader>

    init(caster: NTRIPCaster, request: [UInt8], received: EventLoopPromise<[UInt8]>) {
        self.request = request
        self.received = received
        reader = NIOLoopBoundBox(NTRIPResponseReader(caster: caster), eventLoop: received.futureResult.eventLoop)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var events: [NTRIPResponseReader.Event] = []
        var fault: NTRIPError?
        do {
            try reader.value.feed(Array(unwrapInboundIn(data).readableBytesView), into: &events)
        } catch {
            fault = error
        }
        // What came whole before a fault first: a table ended in the same read stands.
        for event in events {
            switch event {
            case .sourceTable(let table): received.succeed(table)
            case .accepted: received.fail(NTRIPError.protocolViolation("the caster sent a stream, not its source table"))
            case .data: break
            }
        }
        if let fault { received.fail(fault) }
    }

    /// A failed connection or TLS handshake ends the request with its reason, not with the
    /// closing that follows it.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        received.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .sourceTable(let table)? = reader.value.finish().first { received.succeed(table) }
        received.fail(NTRIPError.protocolViolation("the caster closed the connection without a source table"))
    }
}
