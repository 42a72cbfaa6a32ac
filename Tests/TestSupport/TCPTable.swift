import ProcessTable

/// The kernel's table of this network namespace's TCP sockets, as the tests ask of it.
public enum TCPTable {
    /// The timers (``ProcessTable/TCPSocket/timer``: 2 is keepalive's) of the established
    /// sockets bound to local `port`: the server's side of its connections.
    public static func timersOfEstablished(localPort port: Int) -> [Int] {
        timersOfEstablished { $0.localPort == port }
    }

    /// The same of the established sockets connected to remote `port`: the client's side.
    public static func timersOfEstablished(remotePort port: Int) -> [Int] {
        timersOfEstablished { $0.remotePort == port }
    }

    private static func timersOfEstablished(where matches: (ProcessTable.TCPSocket) -> Bool) -> [Int] {
        var timers: [Int] = []
        ProcessTable().forEachTCPSocket { socket in
            if matches(socket), socket.state == 0x01 { timers.append(socket.timer) }
        }
        return timers
    }
}
