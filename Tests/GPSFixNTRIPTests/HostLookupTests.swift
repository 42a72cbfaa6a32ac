import HostLookup
import NIOCore
import NIOPosix
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// How the daemon looks up the names of the hosts it connects to (casters, Traccar).
@Suite("Looking up the hosts connected to")
struct HostLookupTests {
    /// A lookup that answers at once, but for `hanging`, whose answer waits until released;
    /// it counts the lookups of each name.
    final class ScriptedDNS: Sendable {
        static let hanging = "hanging.example"
        private let released = Atomic<Bool>(false)
        private let answeredHanging = Atomic<Bool>(false)
        private let counts = Mutex<[String: Int]>([:])

        func count(of host: String) -> Int { counts.withLock { $0[host] ?? 0 } }
        func release() { released.store(true, ordering: .releasing) }
        /// Whether the lookup of `hanging` has returned.
        var hasAnsweredHanging: Bool { answeredHanging.load(ordering: .acquiring) }

        func lookup(_ host: String, _ port: Int) -> Result<[SocketAddress], HostLookupError> {
            counts.withLock { $0[host, default: 0] += 1 }
            if host == "unknown.example" { return .failure(HostLookupError(host: host, reason: "Name or service not known")) }
            if host == Self.hanging {
                // Ten seconds at most: a test that forgot to release fails, it does not hang.
                for _ in 0..<1000 where !released.load(ordering: .acquiring) { usleep(10_000) }
                answeredHanging.store(true, ordering: .releasing)
            }
            return Result { try [SocketAddress(ipAddress: "192.0.2.1", port: port), SocketAddress(ipAddress: "2001:db8::1", port: port)] }
                .mapError { HostLookupError(host: host, reason: "\($0)") }
        }
    }

    @Test("a name DNS does not answer is looked up once for every connection that waits for it, and holds up no other name")
    func oneLookupANameAtATime() async throws {
        let dns = ScriptedDNS()
        let lookup = HostLookup(lookup: { dns.lookup($0, $1) })
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let waiting = (0..<3).map { _ in lookup.resolver(on: loop).initiateAAAAQuery(host: ScriptedDNS.hanging, port: 2101) }
        let other = lookup.resolver(on: loop)
        let otherV6 = other.initiateAAAAQuery(host: "caster.example", port: 2101)
        let otherV4 = other.initiateAQuery(host: "caster.example", port: 2101)
        // Answered while the first name's lookup still waits.
        #expect(try await otherV4.get() == [try SocketAddress(ipAddress: "192.0.2.1", port: 2101)])
        #expect(try await otherV6.get() == [try SocketAddress(ipAddress: "2001:db8::1", port: 2101)])
        #expect(!dns.hasAnsweredHanging, "the other name waited for the hanging one")
        for _ in 0..<10_000 where dns.count(of: ScriptedDNS.hanging) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(dns.count(of: ScriptedDNS.hanging) == 1)
        dns.release()
        for connection in waiting { #expect(try await connection.get().count == 1) }
        #expect(dns.count(of: ScriptedDNS.hanging) == 1)
        // The lookup ended: the next connection looks the name up again.
        _ = try await lookup.resolver(on: loop).initiateAQuery(host: ScriptedDNS.hanging, port: 2101).get()
        #expect(dns.count(of: ScriptedDNS.hanging) == 2)
    }

    @Test("an address needs no lookup; a name not found fails both queries; the system's resolver finds localhost, and a connection to it by name is made")
    func systemResolver() async throws {
        let dns = ScriptedDNS()
        let scripted = HostLookup(lookup: { dns.lookup($0, $1) })
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        #expect(try await scripted.resolver(on: loop).initiateAQuery(host: "127.0.0.1", port: 80).get().count == 1)
        #expect(dns.count(of: "127.0.0.1") == 0)
        let unknown = scripted.resolver(on: loop)
        let unknownV6 = unknown.initiateAAAAQuery(host: "unknown.example", port: 80)
        await #expect(throws: HostLookupError.self) { try await unknown.initiateAQuery(host: "unknown.example", port: 80).get() }
        await #expect(throws: HostLookupError.self) { try await unknownV6.get() }

        let listener = try LoopbackListener.open()
        defer { close(listener.descriptor) }
        let channel = try await ClientBootstrap(group: loop)
            .resolver(HostLookup.shared.resolver(on: loop))
            .connect(host: "localhost", port: listener.port).get()
        #expect(channel.remoteAddress?.port == listener.port)
        try await channel.close()
    }
}
