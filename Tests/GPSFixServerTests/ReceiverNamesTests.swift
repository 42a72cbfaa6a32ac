@testable import GPSFixServer
import Testing

/// The control socket's receivers by name (``ReceiverNames``), resolved before serving.
@Suite("Receiver names")
struct ReceiverNamesTests {
    @Test("receivers are found by their configured path and by the device it resolved to at start; a configured path wins")
    func receiverNames() {
        let links = ["/dev/serial/by-id/usb-u-blox": "/dev/ttyACM0", "/dev/ttyACM0": "/dev/ttyACM0", "/dev/gps1": "/dev/ttyUSB0"]
        let index = ReceiverNames.index(
            ["/dev/serial/by-id/usb-u-blox": "F9P", "/dev/ttyACM0": "M8T", "/dev/gps1": "NEO-6"], resolving: { links[$0] })
        #expect(index == [
            "/dev/serial/by-id/usb-u-blox": "F9P", "/dev/ttyACM0": "M8T", "/dev/gps1": "NEO-6", "/dev/ttyUSB0": "NEO-6",
        ])
        #expect(ReceiverNames.index(["/dev/gone": 1], resolving: { _ in nil }) == ["/dev/gone": 1])
    }
}
