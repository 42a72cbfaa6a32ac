import Foundation
@testable import GPSFixMQTT
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("libmosquitto's client")
struct MosquittoPublisherTests {
    @Test("stop() returns while the connection to the broker hangs (its SYNs dropped, as a firewall drops them)")
    func stopWhileConnecting() throws {
        let broker = try UnansweringPort()
        let publisher = try MosquittoPublisher(
            options: .init(broker: try MQTTBroker(url: "mqtt://127.0.0.1:\(broker.port)"), clientID: "gpsfix-stop-test"))
        try publisher.start { _ in }
        try waitUntil("the network thread's connect waiting for an answer", within: 10) { broker.isBeingConnectedTo }
        let stopped = Locked(false)
        let stopper = Thread {
            publisher.stop()
            stopped.withLock { $0 = true }
        }
        stopper.start()
        try waitUntil("stop() returned", within: Double(MosquittoPublisher.stopAttempts) + 10) { stopped.withLock { $0 } }
    }
}
