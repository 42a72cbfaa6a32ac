import ServiceAddress
import Testing

@Suite("Service addresses")
struct ServiceAddressTests {
    @Test("every part, percent escapes decoded in the user and the password")
    func parts() throws {
        let address = try ServiceAddress(parsing: "mqtts://fleet%40sea:p%3As%2Fw%40rd@broker.example:8884/boats/7", role: "broker")
        #expect(address.scheme == "mqtts")
        #expect(address.username == "fleet@sea")
        #expect(address.password == "p:s/w@rd")
        #expect(address.host == "broker.example")
        #expect(address.port == 8884)
        #expect(address.path == "boats/7")
    }

    @Test("what an address leaves out is nil; a host in brackets is IPv6")
    func leftOut() throws {
        let plain = try ServiceAddress(parsing: "ntrip://caster.example", role: "caster")
        #expect(plain.username == nil && plain.password == nil && plain.port == nil && plain.path == nil)
        let user = try ServiceAddress(parsing: "ntrip://me@[::1]:2102/", role: "caster")
        #expect(user.username == "me" && user.password == nil)
        #expect(user.host == "::1" && user.port == 2102 && user.path == "")
    }

    @Test("a malformed address says what is wrong, never with its password",
          arguments: [
            ("mqtt://u:secret@host:0", "'mqtt://u:***@host:0': the port must be a number from 1 to 65535"),
            ("mqtt://u:secret@host:x", "'mqtt://u:***@host:x': the port must be a number from 1 to 65535"),
            ("ntrip://u:secret@:2101/M", "'ntrip://u:***@:2101/M' names no caster host"),
            ("mqtt://u:se/cr@et@host:99999/boats", "'mqtt://u:***@host:99999/boats': the port must be a number from 1 to 65535"),
            ("mqtt://u:secret/@:1883", "'mqtt://u:***@:1883' names no caster host"),
            ("u:secret@host", "the caster's address has no scheme: write SCHEME://HOST"),
          ])
    func malformed(url: String, message: String) {
        let error = #expect(throws: ServiceAddressError.self) { try ServiceAddress(parsing: url, role: "caster") }
        #expect(error?.description == message)
        #expect(error?.description.contains("secret") == false)
        #expect(error?.description.contains("cr@et") == false)
    }

    @Test("the password is masked in messages and found for the command line; an address without one is left as it is")
    func masking() {
        #expect(ServiceAddress.redacted("mqtt://fleet:hunter2@broker:1883/x") == "mqtt://fleet:***@broker:1883/x")
        #expect(ServiceAddress.redacted("ntrip://a:b:c@host/M") == "ntrip://a:***@host/M")
        #expect(ServiceAddress.redacted("ntrip://user@host/M") == "ntrip://user@host/M")
        #expect(ServiceAddress.redacted("--mqtt") == "--mqtt")
        // Text without `://` that holds `USER:PASSWORD@` is an address whose scheme was
        // forgotten or mistyped: its password is masked all the same.
        #expect(ServiceAddress.redacted("rover:s3cret@caster:2101/M") == "rover:***@caster:2101/M")
        #expect(ServiceAddress.redacted("ntrip:/u:s3cret@h/M") == "ntrip:***@h/M")
        #expect(ServiceAddress.passwordRange(in: Array("--ntrip=u:pw@h/M".utf8)) == 10..<12)
        #expect(ServiceAddress.redacted("/dev/serial/by-path/pci-0000:00:14.0-usb-0:2:1.0") == "/dev/serial/by-path/pci-0000:00:14.0-usb-0:2:1.0")
        #expect(ServiceAddress.redacted("user@host") == "user@host")
        let argument = Array("--mqtt=mqtt://u:pw@h".utf8)
        #expect(ServiceAddress.passwordRange(in: argument) == 16..<18)
        #expect(ServiceAddress.passwordRange(in: Array("mqtt://u:@h".utf8)) == nil)
    }

    @Test(
        "a password holds /, @, : and % anywhere, as they are: the user and password end at the address's last @",
        arguments: [
            ("mqtt://u:pa/ss@host", "pa/ss"), ("mqtt://u:p@ss@host:1884/boats", "p@ss"), ("mqtt://u::pass:@host", ":pass:"),
            ("mqtt://u:100%@host", "100%"), ("mqtt://u:%zz/@:%@host/x", "%zz/@:%"), ("mqtt://u:/@host", "/"),
            ("mqtts://u:@/:%4@[::1]:8883", "@/:%4"), ("ntrip://u:a%2Fb/c@host/MOUNT", "a/b/c"),
        ])
    func passwordCharacters(url: String, password: String) throws {
        let address = try ServiceAddress(parsing: url, role: "broker")
        #expect(address.username == "u")
        #expect(address.password == password)
        #expect(address.host == "host" || address.host == "::1")
        // Messages and the command line lose exactly the password as written: from after
        // `u:` to the last `@`.
        let bytes = Array(url.utf8)
        let start = address.scheme.utf8.count + "://u:".utf8.count, end = try #require(bytes.lastIndex(of: UInt8(ascii: "@")))
        #expect(ServiceAddress.passwordRange(in: bytes) == start..<end)
        #expect(ServiceAddress.redacted(url) == String(decoding: bytes[..<start] + Array("***".utf8) + bytes[end...], as: UTF8.self))
    }

    @Test("the path follows the host; an address without a password keeps its host and path")
    func pathAfterPassword() throws {
        let address = try ServiceAddress(parsing: "ntrip://u:pa/ss@caster.example:2101/MOUNT", role: "caster")
        #expect(address.host == "caster.example" && address.port == 2101 && address.path == "MOUNT")
        let plain = try ServiceAddress(parsing: "mqtt://broker.local/fleet/boats", role: "broker")
        #expect(plain.host == "broker.local" && plain.path == "fleet/boats" && plain.username == nil)
    }

    @Test(
        "HOST[:PORT] split one way for every option and device: IPv6 in brackets, or bare without a port",
        arguments: [
            ("127.0.0.1:2947", "127.0.0.1", "2947"), ("[::1]:2947", "::1", "2947"), ("[::1]", "::1", nil), ("::1", "::1", nil),
            ("localhost", "localhost", nil), ("fe80::1%eth0", "fe80::1%eth0", nil), ("host:", "host", ""),
        ] as [(String, String, String?)])
    func hostAndPort(text: String, host: String, port: String?) throws {
        let split = try #require(ServiceAddress.splitHostAndPort(text[...]))
        #expect(split.host == host[...] && split.port == port.map { $0[...] })
    }

    @Test("a bracket that does not close, or text after it, is no HOST[:PORT]", arguments: ["[::1", "[::1]2947", "[::1]x:1"])
    func malformedHostAndPort(text: String) {
        #expect(ServiceAddress.splitHostAndPort(text[...]) == nil)
    }
}
