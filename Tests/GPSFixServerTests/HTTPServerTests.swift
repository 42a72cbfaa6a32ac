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
}
