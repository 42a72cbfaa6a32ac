import ClientTLS
import HostLookup
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceAddress

/// Positions to Traccar's OsmAnd endpoint over HTTP or HTTPS: each a `POST` of `URL?QUERY`
/// with an empty body, as Traccar's own client sends them.
///
/// One connection is kept and reused while the server keeps it open (HTTP/1.1
/// keep-alive) and it was used in the last ``idleLimit``, so a backlog after an outage
/// costs one TLS handshake, not one a position, and a connection a router dropped while
/// idle is not waited on. A cancelled upload (the daemon stopping) ends at once.
/// Built on SwiftNIO's HTTP/1 codec and swift-nio-ssl directly: the uploader needs one
/// request at a time to one server, and a general HTTP client would bring Foundation (and
/// its ICU data, most of the daemon's size) with it.
public actor HTTPPositionUploader: PositionUploader {
    /// How long one request may take, connecting included.
    public static let timeout = TimeAmount.seconds(10)
    /// How long a connection may rest and still be used again.
    static let idleLimit = TimeAmount.seconds(30)

    private let endpoint: Endpoint
    private let tls: ClientTLS?
    private let group: any EventLoopGroup
    private var channel: (any Channel)?
    private var lastUsed = NIODeadline.distantPast

    /// `url` is the endpoint (`http://traccar.example:5055/`); an `https://` endpoint's
    /// certificate is checked against the system's trust store.
    public init(url: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        endpoint = try Endpoint(url)
        tls = endpoint.usesTLS ? try ClientTLS() : nil
        self.group = group
    }

    /// Sends one position's OsmAnd query; returns the HTTP status, throws when no answer
    /// came within ``timeout`` or the upload was cancelled.
    public func upload(_ query: String) async throws -> Int {
        let deadline = NIODeadline.now() + Self.timeout
        let channel = try await connectedChannel(deadline: deadline)
        let answered = channel.eventLoop.makePromise(of: OsmAndExchange.Answer.self)
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            answered.fail(UploadError.timeout)
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        let target = endpoint.path + (endpoint.path.contains("?") ? "&" : "?") + query
        // A connection that closed just now fails the write, and with it the request.
        channel.writeAndFlush(OsmAndExchange.Request(target: target, answered: answered)).whenFailure { answered.fail($0) }
        do {
            let answer = try await withTaskCancellationHandler {
                try await answered.futureResult.get()
            } onCancel: {
                answered.fail(CancellationError())
            }
            lastUsed = .now()
            // A server that closes after its answer: the next request connects anew.
            if !answer.keepAlive { self.channel = nil }
            return answer.status
        } catch {
            // Whatever state the connection is in, the next request starts afresh.
            self.channel = nil
            channel.close(promise: nil)
            throw error
        }
    }

    /// The kept connection while it is open, else a new one.
    private func connectedChannel(deadline: NIODeadline) async throws -> any Channel {
        if let channel, channel.isActive, lastUsed + Self.idleLimit > .now() { return channel }
        channel?.close(promise: nil)
        let endpoint = self.endpoint, tls = self.tls
        let eventLoop = group.next()
        let channel = try await ClientBootstrap(group: eventLoop)
            .connectTimeout(deadline - .now())
            .resolver(HostLookup.shared.resolver(on: eventLoop))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try tls?.addHandler(to: pipeline, connectingTo: endpoint.host)
                    try pipeline.addHTTPClientHandlers()
                    try pipeline.addHandler(OsmAndExchange(host: endpoint.hostHeader))
                }
            }
            .connect(host: endpoint.host, port: endpoint.port).channelUnlessCancelled()
        self.channel = channel
        return channel
    }

    /// What went wrong with one request.
    enum UploadError: Error, CustomStringConvertible {
        case timeout
        case closed
        case notHTTP

        var description: String {
            switch self {
            case .timeout: "no answer within the timeout"
            case .closed: "the server closed the connection before answering"
            case .notHTTP: "the Traccar server's address is http:// or https://"
            }
        }
    }

    /// The OsmAnd endpoint's address, read once.
    struct Endpoint: Sendable {
        var usesTLS: Bool
        var host: String
        var port: Int
        /// The request target before the query: `/` and the URL's path.
        var path: String

        init(_ url: String) throws {
            let address = try ServiceAddress(parsing: url, role: "Traccar server")
            guard address.scheme == "http" || address.scheme == "https" else {
                throw UploadError.notHTTP
            }
            usesTLS = address.scheme == "https"
            host = address.host
            port = address.port ?? (usesTLS ? 443 : 80)
            path = "/" + (address.path ?? "")
        }

        /// The `Host` header: the host as written, and the port when it is not the scheme's.
        var hostHeader: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port == (usesTLS ? 443 : 80) ? name : "\(name):\(port)"
        }
    }
}

/// One OsmAnd request on the connection, and its answer's status: writes the request,
/// then completes its promise when the answer has been read to its end (its body
/// dropped), or fails it when the connection ends first. Closes the connection after an
/// answer that asks for it.
final class OsmAndExchange: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Request
    typealias OutboundOut = HTTPClientRequestPart

    /// A request to send and where its answer goes.
    struct Request: Sendable {
        var target: String
        var answered: EventLoopPromise<Answer>
    }

    /// The answer's status, and whether the connection may carry another request.
    struct Answer: Sendable {
        var status: Int
        var keepAlive: Bool
    }

    private let host: String
    private var pending: EventLoopPromise<Answer>?
    private var status: Int?
    private var keepAlive = true
    /// A 1xx answer is read past: the request's own answer follows it.
    private var informational = false

    init(host: String) {
        self.host = host
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        pending = request.answered
        status = nil
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: request.target)
        head.headers.add(name: "Host", value: host)
        head.headers.add(name: "Content-Length", value: "0")
        head.headers.add(name: "User-Agent", value: "gpsfixd")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            informational = (100..<200).contains(head.status.code)
            status = Int(head.status.code)
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            guard !informational else { return }
            if let status { pending?.succeed(Answer(status: status, keepAlive: keepAlive)) }
            pending = nil
            if !keepAlive { context.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending?.fail(HTTPPositionUploader.UploadError.closed)
        pending = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        pending?.fail(error)
        pending = nil
        context.close(promise: nil)
    }
}
