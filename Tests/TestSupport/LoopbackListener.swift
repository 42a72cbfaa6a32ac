import Foundation
import ProcessTable

#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on 127.0.0.1, for the tests' own servers (a fake gpsd, a caster
/// taking pushes): `port` 0 for any free one, or a given one again after a restart.
public enum LoopbackListener {
    /// The listening descriptor and the port it is bound to.
    public static func open(port: Int = 0) throws -> (descriptor: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The next connection to `listener`, waited for `seconds` at most; -1 when none came.
    public static func accept(_ listener: Int32, within seconds: Int32 = 10) -> Int32 {
        var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        return poll(&waiting, 1, seconds * 1000) > 0 ? Glibc.accept(listener, nil, nil) : -1
    }
}

/// A port on 127.0.0.1 whose SYNs go unanswered, as behind a firewall that drops them: a
/// listener with no backlog, its queue filled, so the kernel drops the next SYNs. A blocking
/// connect to it waits the kernel's two minutes. Made once the queue is full.
public final class UnansweringPort {
    public let port: Int
    private let descriptors: [Int32]
    /// The local ports of the connections that fill the queue.
    private let fillerPorts: Set<Int>

    public init() throws {
        let (listener, port) = try LoopbackListener.open()
        listen(listener, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        address.sin_port = UInt16(port).bigEndian
        var fillers: [Int32] = [], fillerPorts: Set<Int> = []
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            fillers.append(filler)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            var local = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(filler, $0, &length) } }
            fillerPorts.insert(Int(UInt16(bigEndian: local.sin_port)))
        }
        self.port = port
        self.fillerPorts = fillerPorts
        descriptors = [listener] + fillers
        // A filler's handshake may still wait in another core's queue of loopback packets
        // (a busy machine runs the kernel's softirqs late), and a SYN that reaches the
        // listener before it would be answered: the port drops SYNs only once the queue
        // holds a connection nobody accepts.
        try waitUntil("a filler's connection queued on the listener", within: 10) { Self.queuedConnections(on: listener) > 0 }
    }

    /// The connections waiting on `listener` for an accept: for a listening socket, Linux
    /// reports them in TCP_INFO's `tcpi_unacked`.
    private static func queuedConnections(on listener: Int32) -> Int {
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(listener, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return 0 }
        return Int(info.tcpi_unacked)
    }

    deinit {
        descriptors.forEach { close($0) }
    }

    /// Whether a connection to the port other than the fillers' waits for its SYN's answer
    /// (`SYN_SENT` in the kernel's table): the code under test is in its connect.
    public var isBeingConnectedTo: Bool { connectsWaiting > 0 }

    /// How many connections to the port, other than the fillers', wait for their SYN's answer.
    public var connectsWaiting: Int {
        var waiting = 0
        ProcessTable().forEachTCPSocket { socket in
            if socket.remotePort == port, socket.state == 0x02, !fillerPorts.contains(socket.localPort) { waiting += 1 }
        }
        return waiting
    }
}
