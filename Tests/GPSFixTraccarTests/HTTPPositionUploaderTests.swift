import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import GPSFixTraccar

/// The OsmAnd uploader against a real HTTP/1.1 server on loopback: what it sends, and the
/// connection it keeps.
@Suite("OsmAnd over HTTP")
struct HTTPPositionUploaderTests {
    @Test("each position is a POST of the endpoint's path and the query, on one kept connection")
    func keptConnection() async throws {
        let server = try await OsmAndServer.start(closing: false)
        let uploader = try HTTPPositionUploader(url: "http://127.0.0.1:\(server.port)/osmand?key=1")
        for index in 0..<3 {
            #expect(try await uploader.upload("id=boat&lat=\(index)") == 200)
        }
        #expect(server.requests == [
            "POST /osmand?key=1&id=boat&lat=0", "POST /osmand?key=1&id=boat&lat=1", "POST /osmand?key=1&id=boat&lat=2",
        ])
        #expect(server.connections == 1)
        #expect(server.hosts == ["127.0.0.1:\(server.port)"])
        try await server.stop()
    }

    @Test("a server that closes after each answer gets a new connection for the next")
    func closedConnection() async throws {
        let server = try await OsmAndServer.start(closing: true)
        let uploader = try HTTPPositionUploader(url: "http://127.0.0.1:\(server.port)/")
        #expect(try await uploader.upload("id=a") == 200)
        #expect(try await uploader.upload("id=b") == 200)
        #expect(server.requests == ["POST /?id=a", "POST /?id=b"])
        #expect(server.connections == 2)
        try await server.stop()
    }

    @Test("a server that is not there is an error, not a status")
    func noServer() async throws {
        let server = try await OsmAndServer.start(closing: false)
        let port = server.port
        try await server.stop()
        let uploader = try HTTPPositionUploader(url: "http://127.0.0.1:\(port)/")
        await #expect(throws: (any Error).self) { try await uploader.upload("id=a") }
    }
}

/// A small HTTP/1.1 server: records each request's method and target, answers 200, and
/// closes after each answer when asked to.
private final class OsmAndServer: Sendable {
    typealias Record = (requests: [String], hosts: Set<String>, connections: Int)

    private let channel: any Channel
    private let record: NIOLockedValueBox<Record>

    var port: Int { channel.localAddress!.port! }
    var requests: [String] { record.withLockedValue { $0.requests } }
    var hosts: Set<String> { record.withLockedValue { $0.hosts } }
    var connections: Int { record.withLockedValue { $0.connections } }

    private init(channel: any Channel, record: NIOLockedValueBox<Record>) {
        self.channel = channel
        self.record = record
    }

    static func start(closing: Bool) async throws -> OsmAndServer {
        let record = NIOLockedValueBox<Record>(([], [], 0))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                record.withLockedValue { $0.connections += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(record: record, closing: closing))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return OsmAndServer(channel: channel, record: record)
    }

    func stop() async throws {
        try await channel.close()
    }

    private final class Responder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let record: NIOLockedValueBox<Record>
        let closing: Bool

        init(record: NIOLockedValueBox<Record>, closing: Bool) {
            self.record = record
            self.closing = closing
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                record.withLockedValue { record in
                    record.requests.append("\(head.method.rawValue) \(head.uri)")
                    record.hosts.formUnion(head.headers["Host"])
                }
            case .body:
                break
            case .end:
                var headers = HTTPHeaders([("Content-Length", "2")])
                if closing { headers.add(name: "Connection", value: "close") }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "OK")))), promise: nil)
                let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
                if closing {
                    let context = NIOLoopBound(context, eventLoop: context.eventLoop)
                    written.whenComplete { _ in context.value.close(promise: nil) }
                }
            }
        }
    }
}
