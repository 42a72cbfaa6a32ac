import GPSDProtocol
import Testing

@Suite("Client requests")
struct RequestTests {
    static func parse(_ line: String) -> [ClientRequest] { ClientRequest.parse(line: Array(line.utf8)) }

    @Test("several requests on a line, a JSON argument without its ';', and a line ending left on the line")
    func requestsOnALine() {
        #expect(Self.parse("?VERSION;?DEVICES; ?POLL;") == [.version, .devices, .poll])
        let watch = Self.parse(#"?WATCH={"enable":true,"json":true}"# + "\r")
        #expect(watch.count == 1)
        guard case .watch(let request?)? = watch.first else {
            Issue.record("not a WATCH: \(watch)")
            return
        }
        #expect(request.enable == true && request.json == true && request.nmea == nil)
        #expect(Self.parse(#"?WATCH={"raw":2,"pps":true}"# + "\r\n").count == 1)
    }

    @Test("a line not starting with '?' is ignored; an unknown request is named; a malformed one ends the line")
    func badRequests() {
        #expect(Self.parse("hello gpsd").isEmpty)
        #expect(Self.parse("?VERSION;?NOSUCH;?POLL;") == [.version, .unrecognized("?NOSUCH;"), .poll])
        #expect(Self.parse("?VERSION;?POLL ?DEVICES;") == [.version, .unrecognized("?POLL ?DEVICES;")])
        #expect(Self.parse("?VERSION") == [.unrecognized("?VERSION")])
        #expect(Self.parse(#"?WATCH={"enable":tru"#) == [.unrecognized(#"?WATCH={"enable":tru"#)])
    }
}
