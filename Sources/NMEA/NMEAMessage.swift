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
    case pgrmz(PGRMZ)
    case pgrmf(PGRMF)
    case pmgnst(PMGNST)
    case psrfepe(PSRFEPE)
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
            case .gga: self = .gga(try .decode(sentence))
            case .rmc: self = .rmc(try .decode(sentence))
            case .gsa: self = .gsa(try .decode(sentence))
            case .gsv: self = .gsv(try .decode(sentence))
            case .vtg: self = .vtg(try .decode(sentence))
            case .gll: self = .gll(try .decode(sentence))
            case .zda: self = .zda(try .decode(sentence))
            case .gst: self = .gst(try .decode(sentence))
            case .gns: self = .gns(try .decode(sentence))
            case .gbs: self = .gbs(try .decode(sentence))
            case .dtm: self = .dtm(try .decode(sentence))
            case .txt: self = .txt(try .decode(sentence))
            case .hdt: self = .hdt(try .decode(sentence))
            default: self = .unknown(sentence)
            }
        } else if address == Addresses.pgrme {
            self = .pgrme(try .decode(sentence))
        } else if address == Addresses.pgrmz {
            self = .pgrmz(try .decode(sentence))
        } else if address == Addresses.pgrmf {
            self = .pgrmf(try .decode(sentence))
        } else if address == Addresses.pmgnst {
            self = .pmgnst(try .decode(sentence))
        } else if address == Addresses.psrfepe {
            self = .psrfepe(try .decode(sentence))
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

/// The addresses of the proprietary sentences decoded, as constants (computed, so no
/// lazy global is touched).
private enum Addresses {
    static var pgrme: SentenceAddress { SentenceAddress(packed: 0x5047_524D_4500_0000, count: 5) }
    static var pgrmz: SentenceAddress { SentenceAddress(packed: 0x5047_524D_5A00_0000, count: 5) }
    static var pgrmf: SentenceAddress { SentenceAddress(packed: 0x5047_524D_4600_0000, count: 5) }
    static var pmgnst: SentenceAddress { SentenceAddress(packed: 0x504D_474E_5354_0000, count: 6) }
    static var psrfepe: SentenceAddress { SentenceAddress(packed: 0x5053_5246_4550_4500, count: 7) }
    static var pubx: SentenceAddress { SentenceAddress(packed: 0x5055_4258_0000_0000, count: 4) }
}
