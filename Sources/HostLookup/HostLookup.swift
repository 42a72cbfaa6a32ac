#if canImport(Glibc)
import Glibc
#endif
import GPSFixDevices
import NIOCore
import NIOPosix
import Synchronization

/// Looks up the names of the hosts the daemon connects to (NTRIP casters, Traccar) for
/// SwiftNIO's client bootstraps: `bootstrap.resolver(HostLookup.shared.resolver(on: loop))`.
///
/// SwiftNIO's own resolver calls `getaddrinfo` on a serial queue of the connecting event
/// loop's. While DNS does not answer, a lookup lasts as long as the system resolver's
/// timeouts (half a minute with three name servers), every later connection made from
/// that loop waits behind it, whatever its name, and each retry queues one more: a caster
/// whose name no longer resolves stops the corrections of a caster that is fine. Here each
/// name is looked up on a thread of its own, one lookup of a name at a time: a connection
/// to a name being looked up takes that lookup's answer, and other names are looked up
/// meanwhile. The threads waiting for DNS are at most the names connected to.
public final class HostLookup: Sendable {
    /// Looks `host` up, blocking, for a connection to `port`.
    public typealias Lookup = @Sendable (_ host: String, _ port: Int) -> Result<[SocketAddress], HostLookupError>

    /// The daemon's: the system's resolver (`getaddrinfo`).
    public static let shared = HostLookup(lookup: systemLookup)

    private struct Name: Hashable {
        var host: String
        var port: Int
    }

    private typealias Answer = @Sendable (Result<[SocketAddress], HostLookupError>) -> Void

    private let lookup: Lookup
    /// The names being looked up, and who waits for each answer.
    private let waiting = Mutex<[Name: [Answer]]>([:])

    /// Looks names up with `lookup` (tests give one of their own).
    public init(lookup: @escaping Lookup) {
        self.lookup = lookup
    }

    /// A resolver for one connection, its answers on `eventLoop`.
    public func resolver(on eventLoop: any EventLoop) -> any Resolver & Sendable {
        ConnectionResolver(lookup: self, eventLoop: eventLoop)
    }

    /// Calls `answer` with the addresses of `host` (at once for an address), from the
    /// lookup of it under way if there is one, else from a new one.
    func find(host: String, port: Int, _ answer: @escaping @Sendable (Result<[SocketAddress], HostLookupError>) -> Void) {
        if let address = try? SocketAddress(ipAddress: host, port: port) { return answer(.success([address])) }
        let name = Name(host: host, port: port)
        let isFirst = waiting.withLock { waiting in
            defer { waiting[name, default: []].append(answer) }
            return waiting[name] == nil
        }
        guard isFirst else { return }
        let lookup = self.lookup
        if !DeviceThread.start(named: "gpsfix-lookup", { self.finish(name, with: lookup(host, port)) }) {
            finish(name, with: .failure(HostLookupError(host: host, reason: "no thread to look it up on")))
        }
    }

    private func finish(_ name: Name, with result: Result<[SocketAddress], HostLookupError>) {
        let answers = waiting.withLock { $0.removeValue(forKey: name) ?? [] }
        for answer in answers { answer(result) }
    }

    /// `getaddrinfo` for a TCP connection, as SwiftNIO's resolver calls it.
    private static let systemLookup: Lookup = { host, port in
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0 else { return .failure(HostLookupError(host: host, reason: String(cString: gai_strerror(status)))) }
        defer { freeaddrinfo(found) }
        var addresses: [SocketAddress] = []
        var entry = found
        while let info = entry?.pointee {
            switch info.ai_family {
            case AF_INET: addresses.append(SocketAddress(UnsafeRawPointer(info.ai_addr).load(as: sockaddr_in.self), host: host))
            case AF_INET6: addresses.append(SocketAddress(UnsafeRawPointer(info.ai_addr).load(as: sockaddr_in6.self), host: host))
            default: break
            }
            entry = info.ai_next
        }
        return addresses.isEmpty ? .failure(HostLookupError(host: host, reason: "no IPv4 or IPv6 address")) : .success(addresses)
    }
}

/// A name that could not be looked up, and why (the system resolver's words).
public struct HostLookupError: Error, CustomStringConvertible {
    /// The name looked up.
    public var host: String
    /// Why it was not found: `Name or service not known`, `Temporary failure in name resolution`.
    public var reason: String

    /// The failure to look `host` up, for `reason`.
    public init(host: String, reason: String) {
        self.host = host
        self.reason = reason
    }

    /// `HOST: REASON`.
    public var description: String { "\(host): \(reason)" }
}

/// The resolver of one connection: SwiftNIO asks it for the AAAA and then the A records,
/// and one lookup answers both, as SwiftNIO's own resolver does.
private final class ConnectionResolver: Resolver, Sendable {
    private let lookup: HostLookup
    private let v4: EventLoopPromise<[SocketAddress]>
    private let v6: EventLoopPromise<[SocketAddress]>
    private let started = Atomic<Bool>(false)

    init(lookup: HostLookup, eventLoop: any EventLoop) {
        self.lookup = lookup
        v4 = eventLoop.makePromise()
        v6 = eventLoop.makePromise()
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        start(host: host, port: port)
        return v4.futureResult
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        start(host: host, port: port)
        return v6.futureResult
    }

    /// A lookup cannot be stopped: its answer, when it comes, goes to nobody.
    func cancelQueries() {}

    private func start(host: String, port: Int) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let (v4, v6) = (self.v4, self.v6)
        lookup.find(host: host, port: port) { result in
            switch result {
            case .success(let addresses):
                v4.succeed(addresses.filter { $0.protocol == .inet })
                v6.succeed(addresses.filter { $0.protocol == .inet6 })
            case .failure(let error):
                v4.fail(error)
                v6.fail(error)
            }
        }
    }
}
