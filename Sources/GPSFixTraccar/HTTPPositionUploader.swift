import AsyncHTTPClient
import NIOCore

/// Positions to Traccar's OsmAnd endpoint over HTTP or HTTPS, through AsyncHTTPClient:
/// each a `POST` of `URL?QUERY` with an empty body, as Traccar's own client sends them.
public struct HTTPPositionUploader: PositionUploader {
    private let client: HTTPClient
    private let url: String
    /// How long one request may take, connecting included.
    public static let timeout = TimeAmount.seconds(10)

    /// `url` is the endpoint (`http://traccar.example:5055/`).
    public init(url: String, client: HTTPClient = .shared) {
        self.client = client
        self.url = url
    }

    public func upload(_ query: String) async throws -> Int {
        var request = HTTPClientRequest(url: url + (url.contains("?") ? "&" : "?") + query)
        request.method = .POST
        request.headers.add(name: "Content-Length", value: "0")
        let response = try await client.execute(request, timeout: Self.timeout)
        // The answer's body means nothing here; at most a little of it is read.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        return Int(response.status.code)
    }
}
