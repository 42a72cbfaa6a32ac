import GPSFixDevices
import Testing

@Suite("A peer's words in a log line")
struct PeerTextTests {
    @Test("control characters, line breaks (CR LF is one character) and non-ASCII become '?'; the length is bounded")
    func printable() {
        let error = "{\"class\":\"ERROR\",\"message\":\"no \u{1B}[31mdevice\r\nFAKE LOG LINE é\u{7F}\"}"
        #expect(error.printable(limit: 200) == "{\"class\":\"ERROR\",\"message\":\"no ?[31mdevice?FAKE LOG LINE ??\"}")
        #expect(String(repeating: "x", count: 16 * 1024).printable(limit: 200).count == 200)
    }
}
