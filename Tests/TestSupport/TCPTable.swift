import ProcessTable

/// The kernel's table of this network namespace's IPv4 TCP sockets (`/proc/net/tcp`), read
/// line by line to its end (Foundation's reading of a `/proc` file stops at its first
/// page, and a suite's sockets make it many).
public enum TCPTable {
    /// The timers (`tr`: 0 none, 1 retransmit, 2 keepalive, 3 TIME_WAIT, 4 zero-window
    /// probe) of the established sockets bound to local `port`: the server's side of its
    /// connections.
    public static func timersOfEstablished(localPort port: Int) -> [Int] {
        let local = ":" + String(port, radix: 16, uppercase: true).leftPadded(to: 4)
        var timers: [Int] = []
        _ = SmallFile.forEachLine(at: "/proc/net/tcp") { line in
            let fields = line.split(separator: " ")
            guard fields.count > 5, fields[1].hasSuffix(local), fields[3] == "01",
                let timer = fields[5].split(separator: ":").first.flatMap({ Int($0, radix: 16) })
            else { return }
            timers.append(timer)
        }
        return timers
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
