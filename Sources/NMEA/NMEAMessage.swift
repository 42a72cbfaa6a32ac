/// A decoded sentence: one case per sentence type GPSFix reads, and ``unknown`` for
/// everything else, which is never an error.
///
/// Values are decoded from a borrowed ``NMEASentence``; the cases that keep borrowed
/// bytes (``txt``, ``pubxSatellites``, ``unknown``) are valid only during the framer's
/// callback. Every other case is a plain value.
public enum NMEAMessage {
    case gga(GGA)
    case rmc(RMC)
    case gsa(GSA)
    case gsv(GSV)
    case vtg(VTG)
    case gll(GLL)
    case zda(ZDA)
    case gst(GST)
    case gns(GNS)
    case gbs(GBS)
    case dtm(DTM)
    case txt(TXT)
    case hdt(HDT)
    case pgrme(PGRME)
    case pubxPosition(PUBXPosition)
    case pubxSatellites(PUBXSatellites)
    /// A sentence of a type not listed above (AIS, other makers' proprietary sentences,
    /// rarer standard ones): its fields stay readable through the sentence.
    case unknown(NMEASentence)

    /// Decodes `sentence` by its address. Any talker is accepted for standard sentences.
    ///
    /// Throws only when a known sentence type has a malformed field or too few fields.
    public init(decoding sentence: NMEASentence) throws(NMEADecodingError) {
        let address = sentence.address
        if let formatter = address.formatter {
            switch formatter {
            case Formatters.gga: self = .gga(try .decode(sentence))
            case Formatters.rmc: self = .rmc(try .decode(sentence))
            case Formatters.gsa: self = .gsa(try .decode(sentence))
            case Formatters.gsv: self = .gsv(try .decode(sentence))
            case Formatters.vtg: self = .vtg(try .decode(sentence))
            case Formatters.gll: self = .gll(try .decode(sentence))
            case Formatters.zda: self = .zda(try .decode(sentence))
            case Formatters.gst: self = .gst(try .decode(sentence))
            case Formatters.gns: self = .gns(try .decode(sentence))
            case Formatters.gbs: self = .gbs(try .decode(sentence))
            case Formatters.dtm: self = .dtm(try .decode(sentence))
            case Formatters.txt: self = .txt(try .decode(sentence))
            case Formatters.hdt: self = .hdt(try .decode(sentence))
            default: self = .unknown(sentence)
            }
        } else if address == Addresses.pgrme {
            self = .pgrme(try .decode(sentence))
        } else if address == Addresses.pubx {
            let id = sentence.field(1)
            if id.count == 2, id[0] == UInt8(ascii: "0"), id[1] == UInt8(ascii: "0") {
                self = .pubxPosition(try .decode(sentence))
            } else if id.count == 2, id[0] == UInt8(ascii: "0"), id[1] == UInt8(ascii: "3") {
                self = .pubxSatellites(try .decode(sentence))
            } else {
                self = .unknown(sentence)
            }
        } else {
            self = .unknown(sentence)
        }
    }
}

/// The formatters of the standard sentences decoded, built once.
private enum Formatters {
    static let gga: SentenceFormatter = "GGA"
    static let rmc: SentenceFormatter = "RMC"
    static let gsa: SentenceFormatter = "GSA"
    static let gsv: SentenceFormatter = "GSV"
    static let vtg: SentenceFormatter = "VTG"
    static let gll: SentenceFormatter = "GLL"
    static let zda: SentenceFormatter = "ZDA"
    static let gst: SentenceFormatter = "GST"
    static let gns: SentenceFormatter = "GNS"
    static let gbs: SentenceFormatter = "GBS"
    static let dtm: SentenceFormatter = "DTM"
    static let txt: SentenceFormatter = "TXT"
    static let hdt: SentenceFormatter = "HDT"
}

/// The addresses of the proprietary sentences decoded.
private enum Addresses {
    static let pgrme = SentenceAddress("PGRME")
    static let pubx = SentenceAddress("PUBX")
}
