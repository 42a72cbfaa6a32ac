@testable import GPSDProtocol
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

    @Test("a request split after its JSON argument: the ';' that starts the next line is ignored, as gpsd ignores it, and the requests after it answered")
    func splitAfterArgument() {
        #expect(Self.parse(";?POLL;") == [.poll])
        #expect(Self.parse(";;?VERSION; ?POLL;") == [.version, .poll])
        #expect(Self.parse(";hello").isEmpty)
    }

    @Test("a WATCH naming the empty device watches every device, as gpsd reads it")
    func emptyDevice() {
        #expect(WatchSettingsTests.watch(#"{"enable":true,"device":""}"#).device == nil)
        #expect(WatchSettingsTests.watch(#"{"enable":true,"device":"/dev/ttyACM0"}"#).device == "/dev/ttyACM0")
    }

    @Test("?STATUS; is GPSFix's own request; with an argument it is not one")
    func status() {
        #expect(Self.parse("?STATUS;?POLL;") == [.status, .poll])
        #expect(Self.parse(#"?STATUS={"x":1};"#) == [.unrecognized(#"?STATUS={"x":1};"#)])
    }
}

@Suite("WATCH settings")
struct WatchSettingsTests {
    static func watch(_ json: String) -> WatchRequest {
        guard case .watch(let request?)? = RequestTests.parse("?WATCH=" + json + ";").first else { fatalError("not a WATCH") }
        return request
    }

    @Test("a WATCH that leaves out enable turns watching on, as gpsd's json_watch_read defaults it")
    func enableDefaultsToTrue() {
        var settings = WatchSettings()
        settings.apply(Self.watch(#"{"raw":2,"pps":true}"#))  // what gpsmon sends
        #expect(settings.enable && settings.raw == 2 && settings.pps)
        #expect(!settings.json)  // raw asked for: no JSON reports
        settings.apply(Self.watch(#"{"enable":false}"#))
        #expect(!settings.enable)
        settings.apply(Self.watch(#"{"json":true}"#))
        #expect(settings.enable && settings.json)
    }

    @Test("raw:2 takes the device's bytes and not the sentences; nmea and raw:1 take the sentences")
    func rawLevels() {
        var settings = WatchSettings()
        settings.apply(Self.watch(#"{"raw":2}"#))
        #expect(settings.wantsBytes(of: "/dev/x") && !settings.wantsSentences(of: "/dev/x"))
        settings.apply(Self.watch(#"{"raw":1}"#))
        #expect(!settings.wantsBytes(of: "/dev/x") && settings.wantsSentences(of: "/dev/x"))
        settings.apply(Self.watch(#"{"raw":0,"nmea":true}"#))
        #expect(!settings.wantsBytes(of: "/dev/x") && settings.wantsSentences(of: "/dev/x"))
    }

    @Test("a WATCH resets every option it does not name except json, nmea and raw, as gpsd 3.22 does")
    func unnamedOptionsReset() {
        var settings = WatchSettings()
        settings.apply(Self.watch(#"{"enable":true,"json":true,"nmea":true,"raw":1,"pps":true,"scaled":true,"timing":true,"split24":true,"device":"/dev/x"}"#))
        #expect(settings.pps && settings.scaled && settings.timing && settings.split24 && settings.device == "/dev/x")
        settings.apply(Self.watch(#"{"enable":true}"#))
        #expect(settings.json && settings.nmea && settings.raw == 1)
        #expect(!settings.pps && !settings.scaled && !settings.timing && !settings.split24 && settings.device == nil)
    }

    @Test("a WATCH that enables without naming json streams no reports on a connection that never asked for json, as gpsd 3.22 does")
    func enableAloneIsNotJSON() {
        var settings = WatchSettings()
        settings.apply(Self.watch(#"{"enable":true}"#))
        #expect(settings.enable && !settings.json && !settings.wantsReports(of: "/dev/x"))
        settings.apply(Self.watch(#"{"enable":true,"json":true}"#))
        settings.apply(Self.watch(#"{"enable":true}"#))
        #expect(settings.wantsReports(of: "/dev/x"), "a later WATCH that does not name json keeps it")
    }
}

@Suite("JSON arguments")
struct JSONArgumentTests {
    @Test("\\u escapes decode, a UTF-16 pair to one character; a broken escape makes the request unrecognized")
    func unicodeEscapes() {
        let request = RequestTests.parse(#"?DEVICE={"path":"/dev/gps-caf\u00e9-\ud83d\udef0"};"#)
        #expect(request == [.device(DeviceRequest(JSONObject(values: ["path": .string("/dev/gps-café-🛰")])))])
        #expect(RequestTests.parse(#"?DEVICE={"path":"/dev/\u00zz"};"#) == [.unrecognized(#"?DEVICE={"path":"/dev/\u00zz"};"#)])
        #expect(RequestTests.parse(#"?DEVICE={"path":"\udef0"};"#) == [.unrecognized(#"?DEVICE={"path":"\udef0"};"#)])
    }
}
