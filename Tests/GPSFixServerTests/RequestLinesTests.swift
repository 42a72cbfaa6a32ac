@testable import GPSFixServer
import NIOCore
import Testing

@Suite("Request lines")
struct RequestLinesTests {
    static func lines(_ chunks: [String]) -> [RequestLine] {
        var lines = RequestLines()
        var taken: [RequestLine] = []
        for chunk in chunks {
            var buffer = ByteBuffer(string: chunk)
            lines.append(&buffer)
            while let line = lines.next() { taken.append(line) }
        }
        return taken
    }

    @Test("lines are cut at LF however the reads fall, and a CR before it goes")
    func splitsAnyChunking() {
        #expect(Self.lines(["?VERS", "ION;\r\n?POLL;", "\n"]) == [.line(ByteBuffer(string: "?VERSION;")), .line(ByteBuffer(string: "?POLL;"))])
    }

    @Test("a request is taken at the end of a read without a newline when it ends there: at a ';' or at its JSON object's '}'")
    func requestAtTheEndOfARead() {
        #expect(Self.lines(["?POLL;"]) == [.line(ByteBuffer(string: "?POLL;"))])
        #expect(Self.lines([#"?WATCH={"enable":true,"json":true}"#]) == [.line(ByteBuffer(string: #"?WATCH={"enable":true,"json":true}"#))])
        #expect(Self.lines([#"?WATCH={"enable":true};?POLL;"#]) == [.line(ByteBuffer(string: #"?WATCH={"enable":true};?POLL;"#))])
        // Not yet whole: a JSON object cut short, a bare name without its ';'.
        #expect(Self.lines([#"?WATCH={"enable":tr"#, #"ue}"#]) == [.line(ByteBuffer(string: #"?WATCH={"enable":true}"#))])
        #expect(Self.lines([#"?WATCH={"device":"}"#]).isEmpty)
        #expect(Self.lines(["?VERSION"]).isEmpty)
        // The end of a read takes no request past the limit.
        let long = String(repeating: "?POLL;", count: RequestLines.maximumLength / 6 + 1)
        #expect(Self.lines([long]) == [.tooLong(limit: RequestLines.maximumLength)])
        // The newline that follows in the next read adds nothing.
        #expect(Self.lines(["?POLL;", "\r\n", "?VERSION;\n"]) == [.line(ByteBuffer(string: "?POLL;")), .line(ByteBuffer(string: "?VERSION;"))])
    }

    @Test("a line over the limit is refused even when its newline comes in the same read, and the next line is read")
    func longLineInOneRead() {
        let long = String(repeating: "x", count: RequestLines.maximumLength + 1)
        let limit = RequestLines.maximumLength
        #expect(Self.lines([long + "\n?POLL;\n"]) == [.tooLong(limit: limit), .line(ByteBuffer(string: "?POLL;"))])
    }

    @Test("a line over the limit spread over reads is refused once and skipped to its newline")
    func longLineAcrossReads() {
        let chunk = String(repeating: "y", count: 700)
        let limit = RequestLines.maximumLength
        #expect(Self.lines([chunk, chunk, chunk, "z\n?DEVICES;\n"]) == [.tooLong(limit: limit), .line(ByteBuffer(string: "?DEVICES;"))])
    }
}
