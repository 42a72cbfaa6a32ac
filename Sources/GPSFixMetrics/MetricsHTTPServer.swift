import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Serves `GET /metrics` over HTTP/1.1 for Prometheus, on SwiftNIO (one event loop of
/// its own, apart from the clients'): each request runs `scrape` and answers with what
/// it returns, in Prometheus' text format.
public final class MetricsHTTPServer: Sendable {
    /// Prometheus' text exposition format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let scrape: @Sendable () async -> [UInt8]
    private let logger: Logger
    private let channel = Mutex<(any Channel)?>(nil)

    public init(logger: Logger, scrape: @escaping @Sendable () async -> [UInt8]) {
        self.scrape = scrape
        self.logger = logger
    }

    /// Binds `host:port` (port 0 for any free one) and serves until ``shutdown()``.
    public func start(host: String, port: Int) async throws {
        let scrape = self.scrape
        let bound = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsRequestHandler(scrape: scrape))
                }
            }
            .bind(host: host, port: port).get()
        channel.withLock { $0 = bound }
        logger.info("serving metrics", metadata: ["http": "\(bound.localAddress?.description ?? "\(host):\(port)")/metrics"])
    }

    /// The port actually bound (useful with port 0).
    public var port: Int? {
        channel.withLock { $0?.localAddress?.port }
    }

    public func shutdown() async {
        if let bound = channel.withLock({ $0 }) { try? await bound.close() }
        try? await group.shutdownGracefully()
    }
}

/// One HTTP connection: `GET` or `HEAD` of `/metrics` runs the scrape; `/` points there;
/// anything else is 404, another method 405.
final class MetricsRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let scrape: @Sendable () async -> [UInt8]
    private var request: HTTPRequestHead?

    init(scrape: @escaping @Sendable () async -> [UInt8]) {
        self.scrape = scrape
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard head.method == .GET || head.method == .HEAD else {
            return send(.methodNotAllowed, body: Array("only GET and HEAD\n".utf8), to: head, context: context)
        }
        switch path {
        case "/metrics":
            let promise = context.eventLoop.makePromise(of: [UInt8].self)
            promise.completeWithTask { [scrape] in await scrape() }
            promise.futureResult.assumeIsolated().whenSuccess { body in
                self.send(.ok, contentType: MetricsHTTPServer.contentType, body: body, to: head, context: context)
            }
        case "/":
            send(.ok, body: Array("gpsfixd: the metrics are at /metrics\n".utf8), to: head, context: context)
        default:
            send(.notFound, body: Array("not found: the metrics are at /metrics\n".utf8), to: head, context: context)
        }
    }

    private func send(_ status: HTTPResponseStatus, contentType: String = "text/plain; charset=utf-8", body: [UInt8],
                      to request: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(body.count)")
        let keepAlive = request.isKeepAlive
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
