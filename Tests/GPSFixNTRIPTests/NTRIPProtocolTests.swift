import GPSFix
import GPSFixNTRIP
import NMEA
import OutputFormats
import Testing

@Suite("NTRIP: addresses, requests and answers")
struct NTRIPProtocolTests {
    /// Everything the reader makes of `answer` fed in pieces of `size` bytes, then closed.
    static func read(_ answer: [UInt8], size: Int) throws(NTRIPError) -> [NTRIPResponseReader.Event] {
        var reader = NTRIPResponseReader()
        var events: [NTRIPResponseReader.Event] = []
        var offset = 0
        while offset < answer.count {
            let end = min(offset + size, answer.count)
            try reader.feed(answer[offset..<end], into: &events)
            offset = end
        }
        return events + reader.finish()
    }

    /// The correction bytes among `events`, joined.
    static func data(_ events: [NTRIPResponseReader.Event]) -> [UInt8] {
        events.flatMap { event -> [UInt8] in if case .data(let bytes) = event { bytes } else { [] } }
    }

    static let stream: [UInt8] = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37) }

    @Test("an address: user, password (percent-decoded), host, port 2101 by default, mountpoint")
    func address() throws {
        let caster = try NTRIPCaster(url: "ntrip://me:p%40ss%3Aw@caster.example/RTCM3")
        #expect(caster.username == "me")
        #expect(caster.password == "p@ss:w")
        #expect(caster.host == "caster.example")
        #expect(caster.port == 2101)
        #expect(caster.mountpoint == "RTCM3")
        #expect(!caster.usesTLS)
        #expect(caster.description == "ntrip://me@caster.example:2101/RTCM3")
        let tls = try NTRIPCaster(url: "ntrips://[::1]:2102/M")
        #expect(tls.usesTLS && tls.host == "::1" && tls.port == 2102 && tls.username == nil)
    }

    @Test("a malformed address is refused, and the message never holds the password")
    func malformedAddress() {
        for url in [
            "http://u:secret@h/M", "ntrip://u:secret@h:99999/M", "ntrip://u:secret@/M", "ntrip://u:secret@h/M N",
            // Without `://` (a scheme forgotten, a slash dropped) it is still an address.
            "u:secret@h:2101/M", "ntrip:/u:secret@h/M",
        ] {
            #expect {
                try NTRIPCaster(url: url)
            } throws: { error in
                !"\(error)".contains("secret") && "\(error)".contains("***")
            }
        }
    }

    @Test("the request is NTRIP 2.0, with Basic authentication and a User-Agent beginning NTRIP")
    func request() throws {
        let caster = try NTRIPCaster(url: "ntrip://user:pass@127.0.0.1:2101/MOUNT")
        let text = String(decoding: caster.request(userAgent: "GPSFix/0.1"), as: UTF8.self)
        #expect(text.hasPrefix("GET /MOUNT HTTP/1.1\r\n"))
        #expect(text.contains("\r\nNtrip-Version: Ntrip/2.0\r\n"))
        #expect(text.contains("\r\nUser-Agent: NTRIP GPSFix/0.1\r\n"))
        // base64("user:pass")
        #expect(text.contains("\r\nAuthorization: Basic dXNlcjpwYXNz\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
        let anonymous = String(decoding: try NTRIPCaster(url: "ntrip://h/M").request(userAgent: "x"), as: UTF8.self)
        #expect(!anonymous.contains("Authorization"))
    }

    @Test("NTRIP 1.0: ICY 200 OK, then the raw stream, cut anywhere", arguments: [1, 7, 4096])
    func version1(size: Int) throws {
        let events = try Self.read(Array("ICY 200 OK\r\n".utf8) + Self.stream, size: size)
        #expect(events.first == .accepted(version: 1))
        #expect(Self.data(events) == Self.stream)
    }

    @Test("NTRIP 2.0: HTTP/1.1 200 with chunked transfer, chunks removed, cut anywhere", arguments: [1, 5, 4096])
    func version2Chunked(size: Int) throws {
        var answer = Array("HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        var offset = 0
        for length in [1, 250, 16, 333] {
            answer += Array((String(length, radix: 16) + ";ext=1\r\n").utf8) + Self.stream[offset..<(offset + length)] + [13, 10]
            offset += length
        }
        answer += Array("0\r\n\r\n".utf8)
        let events = try Self.read(answer, size: size)
        #expect(events.first == .accepted(version: 2))
        #expect(Self.data(events) == Array(Self.stream.prefix(offset)))
    }

    @Test("a fault in the chunking ends the answer, and what came whole before it in the same read is kept")
    func chunkFaultKeepsWhatCameBefore() {
        let answer =
            Array("HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
            + Array((String(Self.stream.count, radix: 16) + "\r\n").utf8) + Self.stream + Array("\r\nzz\r\n".utf8)
        var reader = NTRIPResponseReader()
        var events: [NTRIPResponseReader.Event] = []
        #expect(throws: NTRIPError.self) { try reader.feed(answer, into: &events) }
        #expect(events.first == .accepted(version: 2))
        #expect(Self.data(events) == Self.stream)
    }

    @Test("a chunk size that is not one is shown in the error without the caster's control characters")
    func chunkSizeShownPrintable() {
        let answer = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\u{1B}[2K\u{1B}]52;c;eA==\u{07}\r\n".utf8)
        do throws(NTRIPError) {
            _ = try Self.read(answer, size: 4096)
            Issue.record("the chunk size was taken")
        } catch {
            let message = "\(error)"
            #expect(message.contains("is not a chunk size"), "\(message)")
            #expect(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(message.debugDescription)")
        }
    }

    @Test("a 401 is a refusal that says why; an answer that is not NTRIP is a violation")
    func refusals() {
        #expect(throws: NTRIPError.refused("the caster refused the user name or password (401 Unauthorized)")) {
            try Self.read(Array("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\r\n".utf8), size: 3)
        }
        #expect(throws: NTRIPError.self) { try Self.read(Array("SSH-2.0-OpenSSH_9.2\r\n\r\n".utf8), size: 100) }
        #expect(throws: NTRIPError.self) { try Self.read([UInt8](repeating: 65, count: 20_000), size: 1000) }
    }

    @Test("a caster's answer shown in an error never holds the password, as sent or as Basic carries it")
    func answerMasked() throws {
        let caster = try NTRIPCaster(url: "ntrip://me:s3cret@caster.example/RTCM3")
        let basic = "bWU6czNjcmV0"  // me:s3cret in Base64
        // The last: the password across the 80 characters an error shows of an answer.
        let straddling = "HTTP/1.1 403 Forbidden " + String(repeating: "x", count: 80 - 23 - 3) + "s3cret"
        for line in ["HTTP/1.1 403 Forbidden for me:s3cret", "HTTP/1.1 403 Forbidden \(basic)", "XYZ \(basic) s3cret", straddling] {
            var reader = NTRIPResponseReader(caster: caster)
            do throws(NTRIPError) {
                var events: [NTRIPResponseReader.Event] = []
                try reader.feed(Array((line + "\r\n\r\n").utf8), into: &events)
                Issue.record("'\(line)' was taken")
            } catch {
                let message = "\(error)"
                #expect(!message.contains("s3c") && !message.contains(basic), "\(message)")
                #expect(message.contains("***"))
            }
        }
    }

    static let table = """
        STR;NEAR;Amsterdam;RTCM 3.2;1004(1),1077(1);2;GPS+GLO;NET;NLD;52.37;4.89;1;0;sNTRIP;none;B;N;9600;
        STR;FAR;Sydney;RTCM 3;1004(1);2;GPS;NET;AUS;-33.87;151.21;0;0;sNTRIP;none;N;N;4800;
        CAS;caster.example;2101;Example;Operator;0;NLD;52.0;5.0;0.0.0.0;0;http://example
        STR;MIDDLE;Paris;RTCM 3.1;1004(1);2;GPS;NET;FRA;48.86;2.35;0;0;sNTRIP;none;B;N;9600;
        ENDSOURCETABLE

        """

    @Test("a source table, NTRIP 1.0 or 2.0: its mountpoints, the nearest first", arguments: [false, true])
    func sourceTable(version2: Bool) throws {
        let body = Array(Self.table.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        let head = version2
            ? "HTTP/1.1 200 OK\r\nContent-Type: gnss/sourcetable\r\nContent-Length: \(body.count)\r\n\r\n" : "SOURCETABLE 200 OK\r\n\r\n"
        let events = try Self.read(Array(head.utf8) + body, size: 11)
        guard case .sourceTable(let bytes)? = events.first else {
            Issue.record("no source table in \(events)")
            return
        }
        let table = SourceTable(bytes)
        #expect(table.streams.map(\.mountpoint) == ["NEAR", "FAR", "MIDDLE"])
        #expect(table.streams[0].wantsPosition && !table.streams[1].wantsPosition)
        #expect(table.streams[0].format == "RTCM 3.2" && table.streams[0].formatDetails == "1004(1),1077(1)")
        let fromBrussels = table.sorted(near: (50.85, 4.35))
        #expect(fromBrussels.map(\.stream.mountpoint) == ["NEAR", "MIDDLE", "FAR"])
        // Brussels to Amsterdam is about 173 km along the great circle.
        #expect(abs((fromBrussels[0].kilometres ?? 0) - 173) < 5)
    }

    @Test("the position sent is a valid GGA carrying the fix, to the millimetre")
    func positionSentence() throws {
        var fix = Fix()
        fix.mode = .threeDimensional
        fix.status = .rtkFixed
        fix.latitude = -27.210_866_67
        fix.longitude = 153.052_328_33
        fix.altitudeMSL = 3.2
        fix.geoidSeparation = 42.2
        let report = try #require(PositionReport(fix: fix, satellitesUsed: 9, hdop: 0.8))
        let line = report.gga(at: WallTime(seconds: 1_764_028_800 + 3_723, nanoseconds: 450_000_000))
        #expect(line.suffix(2) == [13, 10])
        let framer = NMEAFramer()
        var sentences: [GGA] = []
        line.withUnsafeBytes { framer.feed($0) { if case .gga(let gga)? = try? NMEAMessage(decoding: $0) { sentences.append(gga) } } }
        let gga = try #require(sentences.first)
        #expect(gga.time?.hour == 1 && gga.time?.minute == 2 && gga.time?.second == 3)
        #expect(abs((gga.latitude?.degrees ?? 0) - fix.latitude!) < 1e-8)
        #expect(abs((gga.longitude?.degrees ?? 0) - fix.longitude!) < 1e-8)
        #expect(gga.quality == 4 && gga.satellitesUsed == 9)
        #expect(gga.altitude?.doubleValue == 3.2 && gga.hdop?.doubleValue == 0.8)
        var noFix = Fix()
        noFix.mode = .noFix
        #expect(PositionReport(fix: noFix, satellitesUsed: nil, hdop: nil) == nil)
    }
}
