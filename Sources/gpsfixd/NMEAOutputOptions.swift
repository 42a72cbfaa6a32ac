import ArgumentParser
import GPSFixServer

/// The options of NMEA 0183 out, for chartplotters, Signal K, OpenCPN and geoclue.
struct NMEAOutputOptions: ParsableArguments {
    @Option(help: """
        Serve the receivers' sentences as read (checksummed, CR LF, no greeting) on TCP at HOST[:PORT] \
        (port 10110 by default; loopback only, unless --allow-remote), announced over mDNS as _nmea-0183._tcp \
        when it is reachable from other hosts.
        """)
    var nmeaTcp: String?

    @Option(help: "Send each sentence as one UDP datagram to HOST:PORT (broadcast and multicast need --allow-remote).")
    var nmeaUdp: String?

    @Option(help: "Serve the same stream on a Unix socket at PATH (for geoclue's nmea-socket), readable by every local user.")
    var nmeaSocket: String?

    @Option(help: "Pass only these sentence types, by the last three letters of the address: GGA,RMC,...")
    var nmeaSentences: String?

    /// The IANA port of NMEA 0183 over IP.
    static let defaultPort = 10110

    /// The output asked for; throws on an address that cannot be used.
    func output(allowRemote: Bool) throws -> NMEAOutput {
        var output = NMEAOutput()
        if let nmeaTcp {
            let address = try GPSFixDaemon.parseAddress(nmeaTcp, option: "--nmea-tcp", defaultPort: Self.defaultPort)
            try Self.check(address.host, option: "--nmea-tcp", allowRemote: allowRemote)
            output.tcp = address
        }
        if let nmeaUdp {
            let address = try GPSFixDaemon.parseAddress(nmeaUdp, option: "--nmea-udp")
            try Self.check(address.host, option: "--nmea-udp", allowRemote: allowRemote)
            output.udp = address
        }
        output.socketPath = nmeaSocket
        let types = (nmeaSentences ?? "").split(separator: ",").map { $0.filter { $0 != " " }.uppercased() }
        if let wrong = types.first(where: { $0.count != 3 || !$0.allSatisfy(\.isLetter) }) {
            throw ValidationError("--nmea-sentences: '\(wrong)' is not a sentence type: give three letters, as GGA,RMC")
        }
        if !types.isEmpty, !output.isEnabled {
            throw ValidationError("--nmea-sentences filters NMEA out: give --nmea-tcp, --nmea-udp or --nmea-socket too")
        }
        output.sentenceTypes = Set(types)
        return output
    }

    private static func check(_ host: String, option: String, allowRemote: Bool) throws {
        if !allowRemote, !GPSFixDaemon.isLoopback(host) {
            throw ValidationError("\(option) \(host) is not a loopback address: add --allow-remote to serve other hosts")
        }
    }
}
