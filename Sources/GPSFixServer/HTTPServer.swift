import GPSDProtocol
import NIOCore
import NIOHTTP1
import NIOPosix

/// What the HTTP server serves beside the hub's own documents.
public struct WebContent: Sendable {
    /// Prometheus' text for `/metrics`; no `/metrics` when `nil`.
    public var metrics: (@Sendable () async -> [UInt8])?
    /// The services beside the hub, for `/api/v1/status` and the page.
    public var services: @Sendable () -> StatusLines
    /// The origin allowed to read the API and the events from another site; none when `nil`.
    public var cors: String?

    public init(
        metrics: (@Sendable () async -> [UInt8])? = nil, services: @escaping @Sendable () -> StatusLines = { StatusLines() },
        cors: String? = nil
    ) {
        self.metrics = metrics
        self.services = services
        self.cors = cors
    }
}

extension GPSFixServer {
    /// Serves HTTP on `host:port` (port 0 for any free one), on the hub's event loop:
    /// the status page at `/`, the API at `/api/v1/...`, the reports as Server-Sent Events
    /// at `/events`, and `/metrics`. Read-only: no request changes anything. Returns the
    /// port bound.
    ///
    /// Each connection is a bounded session like a gpsd client's (its cap, the stall
    /// cut-off, the connection caps), idle after ``SessionLimits/httpIdleTimeout`` (so a
    /// request head must arrive within it), under SwiftNIO's HTTP server pipeline:
    /// requests are read one at a time, the next only once the answer to the last is
    /// written, and answered in order; a head is at most 16 KiB (``headLimits``), a body is
    /// read and thrown away. An event stream is a session of the hub like a socket
    /// client, under the same bounds (its cap, what it loses while it lags, the cut-off).
    @discardableResult
    public func startHTTP(host: String, port: Int, content: WebContent) async throws -> Int {
        let hub = self.hub
        let bootstrap = clientBootstrap(idleTimeout: configuration.limits.httpIdleTimeout) { channel in
            let sync = channel.pipeline.syncOperations
            for (name, handler) in HTTPRequestHandler.serverPipeline() { try sync.addHandler(handler, name: name) }
            try sync.addHandler(HTTPRequestHandler(hub: hub, content: content))
        }
        let channel = try await bind(bootstrap, host: host, port: port)
        httpListeners.withLockedValue { $0.append(channel) }
        hub.logger.info("serving HTTP", metadata: ["http": "\(channel.localAddress?.description ?? "\(host):\(port)")"])
        return channel.localAddress?.port ?? port
    }

    /// Where the hub learns the services' state for `?STATUS;` (the daemon's MQTT,
    /// Traccar, NTRIP and time service lines); none until this is called.
    public func describeServices(with lines: @escaping @Sendable () -> StatusLines) {
        let hub = self.hub
        hub.eventLoop.execute { hub.services = lines }
    }

    /// Pushes the status (the hub's and `services`') to the pages and event streams open
    /// (the `status` event); costs nothing when none is.
    public func publishStatus(_ services: StatusLines) {
        let hub = self.hub
        hub.eventLoop.execute {
            let streams = hub.sessions.values.filter(\.isEventStream)
            guard !streams.isEmpty else { return }
            let buffer = ByteBuffer(bytes: hub.statusDocument(services: services))
            for session in streams { hub.send(buffer, to: session) }
        }
    }
}

/// One HTTP connection: routes a request to the page, a document of the API, the metrics,
/// or hands the connection over to an event stream.
final class HTTPRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// A request head's bounds: 8 KiB a header, 16 KiB and 64 headers in all. A browser
    /// sends about 1 KiB; past these the connection gets a 400 and is closed.
    static let headLimits: NIOHTTPDecoderLimitConfiguration = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 8 * 1024
        limits.maxHeaderListSize = 16 * 1024
        limits.maxHeaderFieldCount = 64
        return limits
    }()

    /// The most bytes read and not yet parsed a connection holds: the decoder parses as
    /// bytes come, a head's included, so only a read's worth waits, unless it has stopped
    /// parsing (after a request to change protocols). Past it the connection is closed.
    static let maximumUnparsedBytes = 64 * 1024

    /// SwiftNIO's HTTP server pipeline (what `configureHTTPServerPipeline` adds, with
    /// pipelining assistance and error handling), its handlers named so that an event
    /// stream can take them out.
    static func serverPipeline() -> [(String, any ChannelHandler)] {
        [
            ("http-encoder", HTTPResponseEncoder()),
            (
                "http-decoder",
                ByteToMessageHandler(
                    HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: headLimits),
                    maximumBufferSize: maximumUnparsedBytes)
            ),
            ("http-pipelining", HTTPServerPipelineHandler()),
            ("http-errors", HTTPServerProtocolErrorHandler()),
        ]
    }

    private let hub: Hub
    private let content: WebContent
    private var request: HTTPRequestHead?
    /// A whole request whose answer waits for the client to read what it was sent.
    private var waiting: HTTPRequestHead?
    /// The connection became an event stream: requests the pipeline still held, handed
    /// on as its handlers leave, are not answered (there is no HTTP encoder any more).
    private var handedOver = false

    init(hub: Hub, content: WebContent) {
        self.hub = hub
        self.content = content
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !handedOver else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
            context.triggerUserOutboundEvent(SessionActivity.request, promise: nil)
        case .body:
            break  // read-only: a request's body means nothing
        case .end:
            guard let head = request else { return }
            request = nil
            // The pipeline handler gives the next request as soon as the last answer is
            // written; it waits here while the client has not read what it was sent.
            if context.channel.isWritable {
                respond(to: head, context: context)
            } else {
                waiting = head
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !handedOver, let head = waiting {
            waiting = nil
            respond(to: head, context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// Bytes read past ``maximumUnparsedBytes`` end the connection; they, and a request
    /// head SwiftNIO refused (its error handler answered 400), count as refused requests.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is ByteToMessageDecoderError.PayloadTooLargeError {
            hub.noteRefused()
            context.close(promise: nil)
        } else if error is HTTPParserError {
            hub.noteRefused()
        }
        context.fireErrorCaught(error)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = String(head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        guard head.method == .GET || head.method == .HEAD else {
            hub.noteRefused()
            return send(.methodNotAllowed, body: Array("read-only: GET and HEAD only\n".utf8), to: head, context: context)
        }
        let json = "application/json"
        switch path {
        case "/", "/index.html":
            send(.ok, contentType: "text/html; charset=utf-8", body: WebPage.html, to: head, context: context)
        case "/api/v1/devices":
            send(.ok, contentType: json, body: hub.devicesDocument(), to: head, context: context)
        case "/api/v1/fix":
            send(.ok, contentType: json, body: hub.fixDocument(), to: head, context: context)
        case "/api/v1/sky":
            send(.ok, contentType: json, body: hub.skyDocument(), to: head, context: context)
        case "/api/v1/status":
            send(.ok, contentType: json, body: hub.statusDocument(services: content.services()), to: head, context: context)
        case "/api/v1/schema":
            send(.ok, contentType: "application/schema+json", body: APISchema.document, to: head, context: context)
        case "/events" where head.method == .GET:
            streamEvents(context: context)
        case "/metrics":
            guard let metrics = content.metrics else { fallthrough }
            let promise = context.eventLoop.makePromise(of: [UInt8].self)
            promise.completeWithTask { await metrics() }
            promise.futureResult.assumeIsolated().whenSuccess { body in
                self.send(.ok, contentType: "text/plain; version=0.0.4; charset=utf-8", body: body, to: head, context: context)
            }
        default:
            hub.noteRefused()
            send(.notFound, body: Array("not found: the page is at /, the API at /api/v1/\n".utf8), to: head, context: context)
        }
    }

    /// The connection becomes an event stream: the HTTP handlers leave, the head is
    /// written as it is, and a session of the hub sends the reports.
    private func streamEvents(context: ChannelHandlerContext) {
        handedOver = true
        waiting = nil
        let pipeline = context.pipeline.syncOperations
        for (name, _) in Self.serverPipeline() { _ = pipeline.removeHandler(name: name) }
        context.writeAndFlush(NIOAny(EventStream.head(cors: content.cors)), promise: nil)
        try? pipeline.addHandler(ClientSession(hub: hub, role: .eventStream))
        _ = pipeline.removeHandler(self)
    }

    private func send(
        _ status: HTTPResponseStatus, contentType: String = "text/plain; charset=utf-8", body: [UInt8],
        to request: HTTPRequestHead, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(body.count)")
        if let cors = content.cors { headers.add(name: "Access-Control-Allow-Origin", value: cors) }
        // SwiftNIO's decoder parses nothing after a request to change protocols (an
        // `Upgrade`, a CONNECT), which this server never grants: such a connection ends.
        let keepAlive = request.isKeepAlive && request.method != .CONNECT && !request.headers.contains(name: "Upgrade")
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive { context.close(after: written) }
    }
}
