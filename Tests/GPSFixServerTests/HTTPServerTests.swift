import Foundation
import GPSFixServer
import Testing
import TestSupport

@Suite("The HTTP server")
struct HTTPServerTests {
    @Test("GET /metrics answers 200 in Prometheus' text format, scraping each time; other paths 404, other methods 405")
    func metrics() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let scrapes = Locked(0)
        let content = WebContent(metrics: {
            let count = scrapes.withLock { value -> Int in
                value += 1
                return value
            }
            return Array("# TYPE scrapes counter\nscrapes \(count)\n".utf8)
        })
        let port = try await harness.server.startHTTP(host: "127.0.0.1", port: 0, content: content)
        for expected in 1...2 {
            let client = try LineClient(tcpPort: port)
            client.send("GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            let lines = try #require(client.readLines(until: { $0.hasPrefix("scrapes ") }))
            #expect(lines.first == "HTTP/1.1 200 OK")
            #expect(lines.contains { $0.lowercased() == "content-type: text/plain; version=0.0.4; charset=utf-8" })
            #expect(lines.last == "scrapes \(expected)")
        }
        let missing = try LineClient(tcpPort: port)
        missing.send("GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(missing.readLine() == "HTTP/1.1 404 Not Found")
        let posted = try LineClient(tcpPort: port)
        posted.send("POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n")
        #expect(posted.readLine() == "HTTP/1.1 405 Method Not Allowed")
        #expect(scrapes.withLock { $0 } == 2)
        await harness.stop()
    }

    @Test("a request refused (404, 405, a malformed or oversized head) is counted with the gpsd clients' refused requests")
    func refusalsAreCounted() async throws {
        let harness = try await ServerUnderTest(devices: ["/dev/mock0"])
        let port = try await harness.server.startHTTP(host: "127.0.0.1", port: 0, content: WebContent(metrics: nil))
        let before = try #require(await harness.server.snapshot()?.clients.requestsRefused)
        let requests = [
            ("GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n", "HTTP/1.1 404 Not Found"),
            ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405 Method Not Allowed"),
            ("GET / HTTP/1.1\r\nHost localhost\r\n\r\n", "HTTP/1.1 400 Bad Request"),
            ("GET / HTTP/1.1\r\nX-Long: " + String(repeating: "x", count: 20_000) + "\r\n\r\n", "HTTP/1.1 400 Bad Request"),
        ]
        for (request, status) in requests {
            let client = try LineClient(tcpPort: port)
            client.send(request)
            #expect(client.readLine() == status, "\(request.prefix(40))")
        }
        // Counted on the event loop as each is answered: the last answer read, all are.
        let after = try #require(await harness.server.snapshot()?.clients.requestsRefused)
        #expect(after == before + requests.count)
        await harness.stop()
    }
}
