@testable import GPSFixServer
import NIOCore
import Testing

/// The caps' counting (``ConnectionCount``) and the sides of listeners: pure values, no
/// sockets.
@Suite("Connection caps")
struct ConnectionCapTests {
    static let limits = SessionLimits(
        network: ConnectionCap(connections: 3, perListener: 2), local: ConnectionCap(connections: 2, perListener: 2))

    @Test("a full network side leaves the local side its room, and the other way round")
    func sidesAreCountedApart() {
        var count = ConnectionCount<String>(limits: Self.limits)
        count.add(on: "v4", of: .network)
        count.add(on: "v4", of: .network)
        count.add(on: "v6", of: .network)
        #expect(count.room(on: "v6", of: .network) == .fullSide)
        #expect(count.room(on: "v4", of: .network) == .fullListener)
        #expect(count.room(on: "unix", of: .local) == .free)
        count.add(on: "unix", of: .local)
        #expect(count.room(on: "control", of: .local) == .free)
        count.add(on: "control", of: .local)
        #expect(count.room(on: "unix", of: .local) == .fullSide)
        count.remove(on: "v4", of: .network)
        #expect(count.room(on: "v6", of: .network) == .free)
        #expect(count.count(on: .network) == 2 && count.count(on: .local) == 2)
    }

    @Test("a listener is local when it is a Unix-domain socket, network otherwise")
    func sideByAddress() throws {
        #expect(ListenerSide(listeningOn: try SocketAddress(unixDomainSocketPath: "/run/gpsfixd/gpsfixd.sock")) == .local)
        #expect(ListenerSide(listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 2947)) == .network)
        #expect(ListenerSide(listeningOn: try SocketAddress(ipAddress: "::1", port: 2947)) == .network)
    }
}
