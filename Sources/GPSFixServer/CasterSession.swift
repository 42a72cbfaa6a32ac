import NIOCore
import NTRIPCasting

/// One NTRIP client of the caster, after the ``BoundedSession`` every connection starts
/// with: it reads the request head, answers with the source table, a refusal or the
/// stream, and then streams the base's frames, throwing away what the client sends (a
/// rover's GGA lines).
///
/// NTRIP 1.0 is not HTTP (its answer is `ICY 200 OK`, and a rover sends its position
/// after the head without any framing), so the head is read here, bounded, rather than
/// by SwiftNIO's HTTP decoder, which would take the rover's lines for the next request.
///
/// Everything runs on the hub's event loop.
final class CasterSession: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        /// The head so far.
        case readingHead([UInt8])
        /// Answered, or deciding (a password being checked): what comes is thrown away.
        case answered
        /// Streaming; NTRIP 2.0 in chunks.
        case streaming(chunked: Bool)
    }

    private let hub: Hub
    private let access: CasterAccess
    private var state = State.readingHead([])
    private var context: ChannelHandlerContext?

    init(hub: Hub, access: CasterAccess) {
        self.hub = hub
        self.access = access
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .streaming = state { hub.corrections.remove(self) }
        state = .answered
        self.context = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .readingHead(var head) = state else { return }
        head += unwrapInboundIn(data).readableBytesView
        if let end = CasterRequest.headEnd(in: head), end <= CasterRequest.maximumHeadLength {
            state = .answered
            context.triggerUserOutboundEvent(SessionActivity.request, promise: nil)
            answer(CasterRequest(head: head[..<end]), context: context)
        } else if head.count > CasterRequest.maximumHeadLength {
            state = .answered
            finish(with: "HTTP/1.0 400 Bad Request\r\nConnection: close\r\n\r\n", context: context)
        } else {
            state = .readingHead(head)
        }
    }

    /// Writes `frame` (one whole RTCM 3 frame) unless the client's socket is over its cap:
    /// a rover never makes the caster wait. Whether it was written; ``flush()`` sends it.
    func send(_ frame: ByteBuffer) -> Bool {
        guard case .streaming(let chunked) = state, let context, context.channel.isWritable else { return false }
        context.write(wrapOutboundOut(chunked ? ChunkedTransfer.chunk(frame) : frame), promise: nil)
        return true
    }

    /// Sends what ``send(_:)`` wrote.
    func flush() {
        context?.flush()
    }

    private func answer(_ request: CasterRequest?, context: ChannelHandlerContext) {
        let server = "Server: NTRIP GPSFix/\(access.release)\r\n"
        guard let request else {
            return finish(with: "HTTP/1.0 400 Bad Request\r\n\(server)Connection: close\r\n\r\n", context: context)
        }
        let status = request.isVersion2 ? "HTTP/1.1" : "HTTP/1.0"
        let version = request.isVersion2 ? "Ntrip-Version: Ntrip/2.0\r\n" : ""
        guard request.method == "GET" else {
            return finish(
                with: "\(status) 405 Method Not Allowed\r\n\(version)\(server)Allow: GET\r\nConnection: close\r\n\r\n",
                context: context)
        }
        let mountpoint = request.mountpoint
        guard let stream = access.configuration.stream(at: mountpoint) else {
            // NTRIP 1.0 answers an unknown mountpoint with the table; 2.0 with 404.
            if request.isVersion2, !request.mountpoint.isEmpty {
                return finish(
                    with: "HTTP/1.1 404 Not Found\r\n\(version)\(server)Content-Length: 0\r\nConnection: close\r\n\r\n",
                    context: context)
            }
            return sendSourceTable(request, server: server, context: context)
        }
        let loop = context.eventLoop
        access.authorizes(request, on: loop).assumeIsolated().whenComplete { [self] result in
            guard let context = self.context else { return }
            let decision = (try? result.get()) ?? .refused
            if case .busy = decision {
                hub.corrections.statistics.busy += 1
                return finish(
                    with: "\(status) 503 Service Unavailable\r\n\(version)\(server)Retry-After: 1\r\nContent-Length: 0\r\n"
                        + "Connection: close\r\n\r\n",
                    context: context)
            }
            guard case .allowed = decision else {
                hub.corrections.statistics.unauthorized += 1
                return finish(
                    with: "\(status) 401 Unauthorized\r\n\(version)\(server)WWW-Authenticate: Basic realm=\"/\(mountpoint)\"\r\n"
                        + "Content-Length: 0\r\nConnection: close\r\n\r\n",
                    context: context)
            }
            startStream(request, of: stream, server: server, context: context)
        }
    }

    private func startStream(_ request: CasterRequest, of stream: CasterStream, server: String, context: ChannelHandlerContext) {
        let head =
            request.isVersion2
            ? "HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\n\(server)Connection: close\r\nContent-Type: gnss/data\r\n"
                + "Cache-Control: no-store, no-cache, max-age=0\r\nTransfer-Encoding: chunked\r\n\r\n"
            // As casters answer NTRIP 1.0 (RTKLIB's, BKG's): the status line alone, then the stream.
            : "ICY 200 OK\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head)), promise: nil)
        state = .streaming(chunked: request.isVersion2)
        context.triggerUserOutboundEvent(SessionActivity.watching(true), promise: nil)
        hub.corrections.add(self, to: stream)
    }

    private func sendSourceTable(_ request: CasterRequest, server: String, context: ChannelHandlerContext) {
        hub.corrections.statistics.sourceTables += 1
        // The address the client reached, an IPv4 one as itself rather than IPv6-mapped.
        var host = context.channel.localAddress?.ipAddress ?? access.configuration.host
        if host.hasPrefix("::ffff:"), host.contains(".") { host.removeFirst("::ffff:".count) }
        let table = access.sourceTable(summaries: hub.corrections.summaries, host: host)
        let head =
            request.isVersion2
            ? "HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\n\(server)Connection: close\r\nContent-Type: gnss/sourcetable\r\n"
            : "SOURCETABLE 200 OK\r\n\(server)Connection: close\r\nContent-Type: text/plain\r\n"
        finish(with: head + "Content-Length: \(table.utf8.count)\r\n\r\n" + table, context: context)
    }

    /// Writes `text` and closes the connection.
    private func finish(with text: String, context: ChannelHandlerContext) {
        context.close(after: context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text))))
    }
}
