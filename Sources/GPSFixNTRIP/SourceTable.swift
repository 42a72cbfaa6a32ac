#if canImport(Glibc)
import Glibc
#endif

/// A caster's source table: its mountpoints (`STR` records), as NTRIP defines them.
public struct SourceTable: Sendable {
    /// One mountpoint: what it sends and where its base (or network) is.
    public struct Stream: Hashable, Sendable {
        public var mountpoint: String
        public var identifier: String
        /// `RTCM 3.2`, `RTCM 3`, `CMRx`, ...
        public var format: String
        /// Message types and their rates, as `1004(1),1006(10)`.
        public var formatDetails: String
        public var navigationSystems: String
        public var network: String
        public var country: String
        public var latitude: Double?
        public var longitude: Double?
        /// Whether the mountpoint wants the client's position (GGA): a network's
        /// virtual reference station, or a caster choosing the nearest base.
        public var wantsPosition: Bool
        /// `N` none, `B` Basic, `D` Digest.
        public var authentication: String
    }

    public var streams: [Stream]

    /// Reads the `STR` records of a table; other records (`CAS`, `NET`) and malformed
    /// lines are skipped.
    public init(_ bytes: [UInt8]) {
        streams = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 12, fields[0] == "STR" else { return nil }
            return Stream(
                mountpoint: fields[1], identifier: fields[2], format: fields[3], formatDetails: fields[4],
                navigationSystems: fields[6], network: fields[7], country: fields[8], latitude: Double(fields[9]),
                longitude: Double(fields[10]), wantsPosition: fields[11] == "1",
                authentication: fields.count > 15 ? fields[15] : "")
        }
    }

    /// The streams, the nearest to `position` first (those without a position last), or
    /// in the caster's order without one.
    public func sorted(near position: (latitude: Double, longitude: Double)?) -> [(stream: Stream, kilometres: Double?)] {
        guard let position else { return streams.map { ($0, nil) } }
        let measured = streams.map { stream -> (stream: Stream, kilometres: Double?) in
            guard let latitude = stream.latitude, let longitude = stream.longitude else { return (stream, nil) }
            return (stream, Self.greatCircleKilometres(from: position, to: (latitude, longitude)))
        }
        return measured.enumerated().sorted { left, right in
            switch (left.element.kilometres, right.element.kilometres) {
            case let (a?, b?): a < b || (a == b && left.offset < right.offset)
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): left.offset < right.offset
            }
        }.map(\.element)
    }

    /// The distance along the Earth's surface (a sphere of radius 6371 km), haversine.
    static func greatCircleKilometres(from a: (latitude: Double, longitude: Double), to b: (latitude: Double, longitude: Double)) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (b.latitude - a.latitude) * radians, dLongitude = (b.longitude - a.longitude) * radians
        let h = sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(a.latitude * radians) * cos(b.latitude * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * 6371 * asin(min(1, h.squareRoot()))
    }
}
