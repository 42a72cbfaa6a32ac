/// A caster's source table (NTRIP 2.0, annex: `STR`, `CAS` and `ENDSOURCETABLE` lines),
/// built from what the base sends: one `STR` line a mountpoint, then the caster's `CAS`.
public struct CasterSourceTable: Sendable {
    /// One mountpoint: its name, what its stream carries, and whether it wants a user.
    public struct Stream: Sendable {
        public var mountpoint: String
        /// What the stream carried so far, for the `STR` line's format, systems and position.
        public var summary: RTCMStreamSummary
        /// Whether a client must give a user and password (`B`, Basic), or none (`N`).
        public var requiresAuthentication: Bool

        public init(mountpoint: String, summary: RTCMStreamSummary, requiresAuthentication: Bool) {
            self.mountpoint = mountpoint
            self.summary = summary
            self.requiresAuthentication = requiresAuthentication
        }
    }

    public var streams: [Stream]
    /// The caster's host and port as clients reach it, for the `CAS` line.
    public var host: String
    public var port: Int
    /// Who generates the streams (`GPSFix 1.4.0`).
    public var generator: String

    public init(streams: [Stream], host: String, port: Int, generator: String) {
        self.streams = streams
        self.host = host
        self.port = port
        self.generator = generator
    }

    /// The table's text, `ENDSOURCETABLE` included, each line ended by CR LF.
    public var text: String {
        var lines = streams.map { stream -> String in
            let summary = stream.summary
            let position = summary.stationPosition
            return [
                "STR", stream.mountpoint, stream.mountpoint, "RTCM 3.3", summary.formatDetails, "\(summary.carrier)",
                summary.navigationSystems, "GPSFix", "", Self.degrees(position?.latitude), Self.degrees(position?.longitude),
                "0", "0", generator, "none", stream.requiresAuthentication ? "B" : "N", "N", "\(summary.bitRate)", "",
            ].map(Self.field).joined(separator: ";")
        }
        let first = streams.first?.summary.stationPosition
        lines.append(
            ["CAS", host, "\(port)", "GPSFix", "GPSFix", "0", "", Self.degrees(first?.latitude), Self.degrees(first?.longitude),
             "0.0.0.0", "0", ""].map(Self.field).joined(separator: ";"))
        lines.append("ENDSOURCETABLE")
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// Degrees to two decimals, as source tables give them (a kilometre or so: a table
    /// tells rovers which base is near, not where its antenna stands); `0.00` unknown.
    static func degrees(_ value: Double?) -> String {
        guard let value, value.isFinite, abs(value) <= 360 else { return "0.00" }
        let hundredths = Int((value * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let whole = abs(hundredths) / 100, fraction = abs(hundredths) % 100
        return "\(sign)\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// A field without the table's separators or line ends.
    private static func field(_ text: String) -> String {
        String(text.map { $0 == ";" || $0 == "\r" || $0 == "\n" ? " " : $0 })
    }
}
