import GPSFix
import Testing

@Suite("Capture logs")
struct CaptureLogTests {
    static let log = """
        # Name: a capture
        # Date: 2014-05-26
        # Delay-Cookie: : 0.5
        $GPGGA,1*00
        :$GPRMC,2#3*00
        # a comment between sentences
        #Cycle: 2
        $GPGSA,4*00:
        :# not a comment: the line began with the cookie
        $GPTXT,#5*00
        """

    /// What the log's payload is: every line that is not a comment, cookies removed.
    static let payload = "$GPGGA,1*00\n$GPRMC,2#3*00\n$GPGSA,4*00\n# not a comment the line began with the cookie\n$GPTXT,#5*00"

    @Test("a log splits the same in any chunking: header pairs, comments between sentences, cookies removed")
    func chunkings() {
        let bytes = Array(Self.log.utf8)
        for chunkSize in [1, 2, 3, 5, 7, 64, bytes.count] {
            var splitter = CaptureLog.Splitter()
            var payload: [UInt8] = []
            var runs = 0
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + chunkSize, bytes.count)
                bytes[offset..<end].withUnsafeBytes { chunk in
                    splitter.split(chunk) { run, _ in
                        payload += run
                        runs += 1
                    }
                }
                offset = end
            }
            splitter.finish()
            #expect(String(decoding: payload, as: UTF8.self) == Self.payload, "chunks of \(chunkSize)")
            #expect(splitter.header.map(\.key) == ["Name", "Date", "Delay-Cookie", "Cycle"], "chunks of \(chunkSize)")
            #expect(splitter.header.map(\.value) == ["a capture", "2014-05-26", ": 0.5", "2"], "chunks of \(chunkSize)")
            if chunkSize == bytes.count {
                // Whole: one run per stretch between comments, not one per line.
                #expect(runs == 2)
            }
        }
        #expect(String(decoding: CaptureLog(bytes).payload, as: UTF8.self) == Self.payload)
    }

    @Test("a `#` after a newline inside a binary frame is data, not a comment, in any chunking")
    func binaryHashAfterNewline() {
        // Part of a NAV-SAT: a record with svId 10 (0x0A) then cno 35 (0x23, `#`), after a
        // "line" of small values since the last 0x0A; the azimuth's zero byte follows.
        let frame: [UInt8] = [0xB5, 0x62, 0x01, 0x35, 0x10, 0x00, 0x00, 0x0A, 0x05, 0x1E, 0x00, 0x0A, 0x23, 0x2D, 0x5A, 0x00, 0x11, 0x3C, 0x8A]
        // A comment begins only after a line of text: the sentence after the frame.
        let log = Array("# Date: 2024-01-01\n".utf8) + frame + Array("\n$GPRMC,2*00\n# a real comment\n$GPGGA,1*00\n".utf8)
        for chunkSize in [1, 2, 3, 5, 7, log.count] {
            var splitter = CaptureLog.Splitter()
            var payload: [UInt8] = []
            var offset = 0
            while offset < log.count {
                let end = min(offset + chunkSize, log.count)
                log[offset..<end].withUnsafeBytes { splitter.split($0, into: &payload) }
                offset = end
            }
            splitter.finish()
            #expect(payload == frame + Array("\n$GPRMC,2*00\n$GPGGA,1*00\n".utf8), "chunks of \(chunkSize)")
            #expect(splitter.header.map(\.key) == ["Date"], "chunks of \(chunkSize)")
        }
    }

    @Test("a log of endless comments is read in bounded memory: the header keeps its first lines, each cut to a kilobyte")
    func boundedComments() {
        var splitter = CaptureLog.Splitter()
        var payload: [UInt8] = []
        let comments = Array(String(repeating: "# Key: value\n", count: 10_000).utf8)
        for _ in 0..<10 { comments.withUnsafeBytes { splitter.split($0, into: &payload) } }
        // One comment line of 8 MB, without a line end, streamed in blocks.
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        Array("# Long: ".utf8).withUnsafeBytes { splitter.split($0, into: &payload) }
        for _ in 0..<8 { long.withUnsafeBytes { splitter.split($0, into: &payload) } }
        splitter.finish()
        #expect(payload.isEmpty)
        #expect(splitter.header.count == CaptureLog.Splitter.maximumHeaderLines)
        #expect(splitter.header.allSatisfy { $0.key == "Key" && $0.value == "value" })

        var first = CaptureLog.Splitter()
        (Array("# Date: 2014-05-26 ".utf8) + long + Array("\n$GPGGA\n".utf8)).withUnsafeBytes { first.split($0, into: &payload) }
        #expect(first.header.count == 1 && first.header[0].value.utf8.count < CaptureLog.Splitter.maximumCommentLength)
        #expect(String(decoding: payload, as: UTF8.self) == "$GPGGA\n")
    }
}
