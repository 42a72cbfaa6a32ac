import NMEA

/// A satellite navigation system, numbered as gpsd's `gnssid` (u-blox's numbering).
public enum GNSS: Int, Sendable, Hashable, CaseIterable {
    case gps = 0
    case sbas = 1
    case galileo = 2
    case beidou = 3
    case imes = 4
    case qzss = 5
    case glonass = 6
    case navic = 7

    /// The system of an NMEA 4.10 system id (GSA's and GBS's last field), if known.
    public init?(nmeaSystemID: Int) {
        switch nmeaSystemID {
        case 1: self = .gps
        case 2: self = .glonass
        case 3: self = .galileo
        case 4: self = .beidou
        case 5: self = .qzss
        case 6: self = .navic
        default: return nil
        }
    }

    /// The system a talker speaks for, when it speaks for one (`GN` and `GP` do not:
    /// GP sentences also carry SBAS and QZSS satellites, told apart by their ids).
    public init?(talker: Talker) {
        switch talker {
        case .glonass: self = .glonass
        case .galileo: self = .galileo
        case .beidou, .beidouLegacy: self = .beidou
        // Quectel's PQ talker without a system id is QZSS, as gpsd reads it.
        case .qzss, .qzssLegacy, .quectel: self = .qzss
        case .navic: self = .navic
        default: return nil
        }
    }
}

/// A satellite named three ways: gpsd's PRN (GPS 1-32, SBAS 33-64 and 120-158,
/// GLONASS 65-96, IMES 173-182, QZSS 193-202, Galileo 301-336, BeiDou 401-463,
/// NavIC 801-814), and the system with the satellite's number within it.
public struct SatelliteIdentity: Hashable, Sendable {
    public var prn: Int
    public var gnss: GNSS
    public var svid: Int

    public init(prn: Int, gnss: GNSS, svid: Int) {
        self.prn = prn
        self.gnss = gnss
        self.svid = svid
    }

    /// Names the satellite a sentence calls `id`, from the talker and, when the sentence
    /// has one, its NMEA 4.10 system. `nil` for an id no scheme uses.
    ///
    /// Receivers number satellites in several overlapping ways (1-32 for BeiDou in a
    /// GB sentence, 201-237 for BeiDou from some SiRF parts, 65-96 for GLONASS); the
    /// system, when known, says which scheme applies, and otherwise the id's range does.
    public init?(nmeaID id: Int, talker: Talker?, system: GNSS? = nil) {
        guard id > 0 else { return nil }
        switch system ?? talker.flatMap(GNSS.init(talker:)) {
        case .glonass?:
            if (1...32).contains(id) {
                self.init(prn: 64 + id, gnss: .glonass, svid: id)
                return
            }
        case .galileo?:
            if (1...36).contains(id) {
                self.init(prn: 300 + id, gnss: .galileo, svid: id)
                return
            }
            if (101...136).contains(id) {  // Quectel numbers Galileo from 101
                self.init(prn: 200 + id, gnss: .galileo, svid: id - 100)
                return
            }
        case .beidou?:
            if (1...63).contains(id) {
                self.init(prn: 400 + id, gnss: .beidou, svid: id)
                return
            }
        case .qzss?:
            if (1...10).contains(id) {
                self.init(prn: 192 + id, gnss: .qzss, svid: id)
                return
            }
        case .navic?:
            if (1...14).contains(id) {
                self.init(prn: 800 + id, gnss: .navic, svid: id)
                return
            }
        default:
            break
        }
        self.init(extendedNMEAID: id)
    }

    /// The NMEA 2.x-4.0 extended numbering, where the range alone names the system.
    private init?(extendedNMEAID id: Int) {
        switch id {
        case 1...32: self.init(prn: id, gnss: .gps, svid: id)
        case 33...64: self.init(prn: id, gnss: .sbas, svid: id + 87)
        case 65...96: self.init(prn: id, gnss: .glonass, svid: id - 64)
        case 120...158: self.init(prn: id, gnss: .sbas, svid: id)
        case 173...182: self.init(prn: id, gnss: .imes, svid: id - 172)
        case 193...199: self.init(prn: id, gnss: .qzss, svid: id - 192)
        case 201...263: self.init(prn: id + 200, gnss: .beidou, svid: id - 200)
        case 301...336: self.init(prn: id, gnss: .galileo, svid: id - 300)
        case 401...463: self.init(prn: id, gnss: .beidou, svid: id - 400)
        default: return nil
        }
    }
}
