import Testing

@testable import NTRIPCasting

@Suite("An NTRIP client's request, as the caster reads it")
struct CasterRequestTests {
    private func request(_ text: String) -> CasterRequest? {
        let bytes = Array(text.utf8)
        guard let end = CasterRequest.headEnd(in: bytes) else { return nil }
        return CasterRequest(head: bytes[..<end])
    }

    @Test("NTRIP 1.0, as str2str asks: the mountpoint, version 1, the credentials")
    func version1() throws {
        let basic = Base64.encode(Array("rover:se:cret".utf8))
        let parsed = try #require(
            request("GET /BASE HTTP/1.0\r\nUser-Agent: NTRIP RTKLIB/2.4.3\r\nAuthorization: Basic \(basic)\r\n\r\n"))
        #expect(parsed.method == "GET")
        #expect(parsed.mountpoint == "BASE")
        #expect(!parsed.isVersion2)
        let credentials = try #require(parsed.basicCredentials)
        #expect(credentials.user == "rover")
        #expect(credentials.password == "se:cret")
    }

    @Test("NTRIP 2.0: the version header in any case, an absolute target, lines ended by LF alone")
    func version2() throws {
        let parsed = try #require(request("GET http://caster:2101/BASE HTTP/1.1\nHost: caster\nntrip-version: Ntrip/2.0\n\n"))
        #expect(parsed.mountpoint == "BASE")
        #expect(parsed.isVersion2)
        #expect(parsed.basicCredentials == nil)
    }

    @Test("the source table is asked for with / or nothing after the host")
    func sourceTable() throws {
        #expect(try #require(request("GET / HTTP/1.0\r\n\r\n")).mountpoint == "")
        #expect(try #require(request("GET http://caster:2101 HTTP/1.1\r\n\r\n")).mountpoint == "")
    }

    @Test("a head is complete only at its empty line; what follows it (a rover's GGA) is not part of it")
    func headEnd() {
        let head = Array("GET /BASE HTTP/1.0\r\n\r\n$GPGGA,1".utf8)
        #expect(CasterRequest.headEnd(in: head) == head.count - 8)
        #expect(CasterRequest.headEnd(in: Array("GET /BASE HTTP/1.0\r\nUser-Agent: x\r\n".utf8)) == nil)
    }

    @Test("a line that is not a request, and credentials that are not Basic or not Base64, are refused")
    func malformed() throws {
        #expect(request("NONSENSE\r\n\r\n") == nil)
        #expect(try #require(request("GET /B HTTP/1.0\r\nAuthorization: Digest abc\r\n\r\n")).basicCredentials == nil)
        #expect(try #require(request("GET /B HTTP/1.0\r\nAuthorization: Basic !!!!\r\n\r\n")).basicCredentials == nil)
    }

    @Test("Base64 round trips every length of padding", arguments: ["", "a", "ab", "abc", "user:pass word/é"])
    func base64(_ text: String) {
        #expect(Base64.decode(Base64.encode(Array(text.utf8))) == Array(text.utf8))
    }
}
