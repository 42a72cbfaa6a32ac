/// A decoded sentence: one case per sentence type GPSFix reads, and ``unknown`` for
/// everything else, which is never an error.
///
/// Values are decoded from a borrowed ``NMEASentence``; the cases that keep borrowed
/// bytes (``txt``, ``pubxSatellites``, ``pashrSatellites``, ``unknown``) are valid only during the framer's
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
    case ths(THS)
    case pgrme(PGRME)
    case pgrmz(PGRMZ)
    case pgrmf(PGRMF)
    case pmgnst(PMGNST)
    case psrfepe(PSRFEPE)
    case pubxPosition(PUBXPosition)
    case pubxSatellites(PUBXSatellites)
    case pashrPosition(PASHRPosition)
    case pashrSatellites(PASHRSatellites)
    case pstiPosition(PSTIPosition)
    /// A sentence of a type not listed above (AIS, other makers' proprietary sentences,
    /// rarer standard ones): its fields stay readable through the sentence.
    case unknown(NMEASentence)

    /// Decodes `sentence` by its address (``NMEASentence/decode(into:)``). Any talker
    /// is accepted for standard sentences.
    ///
    /// Throws only when a known sentence type has a malformed field or too few fields.
    public init(decoding sentence: NMEASentence) throws(NMEADecodingError) {
        var builder = MessageBuilder(message: .unknown(sentence))
        sentence.decode(into: &builder)
        if let error = builder.error { throw error }
        self = builder.message
    }
}

/// The handler behind ``NMEAMessage/init(decoding:)``: wraps whatever it is handed.
private struct MessageBuilder: NMEASentenceHandler {
    var message: NMEAMessage
    var error: NMEADecodingError?

    mutating func handle(_ gga: GGA, in sentence: NMEASentence) { message = .gga(gga) }
    mutating func handle(_ rmc: RMC, in sentence: NMEASentence) { message = .rmc(rmc) }
    mutating func handle(_ gsa: GSA, in sentence: NMEASentence) { message = .gsa(gsa) }
    mutating func handle(_ gsv: GSV, in sentence: NMEASentence) { message = .gsv(gsv) }
    mutating func handle(_ vtg: VTG, in sentence: NMEASentence) { message = .vtg(vtg) }
    mutating func handle(_ gll: GLL, in sentence: NMEASentence) { message = .gll(gll) }
    mutating func handle(_ zda: ZDA, in sentence: NMEASentence) { message = .zda(zda) }
    mutating func handle(_ gst: GST, in sentence: NMEASentence) { message = .gst(gst) }
    mutating func handle(_ gns: GNS, in sentence: NMEASentence) { message = .gns(gns) }
    mutating func handle(_ gbs: GBS, in sentence: NMEASentence) { message = .gbs(gbs) }
    mutating func handle(_ dtm: DTM, in sentence: NMEASentence) { message = .dtm(dtm) }
    mutating func handle(_ txt: TXT, in sentence: NMEASentence) { message = .txt(txt) }
    mutating func handle(_ hdt: HDT, in sentence: NMEASentence) { message = .hdt(hdt) }
    mutating func handle(_ ths: THS, in sentence: NMEASentence) { message = .ths(ths) }
    mutating func handle(_ pgrme: PGRME, in sentence: NMEASentence) { message = .pgrme(pgrme) }
    mutating func handle(_ pgrmz: PGRMZ, in sentence: NMEASentence) { message = .pgrmz(pgrmz) }
    mutating func handle(_ pgrmf: PGRMF, in sentence: NMEASentence) { message = .pgrmf(pgrmf) }
    mutating func handle(_ pmgnst: PMGNST, in sentence: NMEASentence) { message = .pmgnst(pmgnst) }
    mutating func handle(_ psrfepe: PSRFEPE, in sentence: NMEASentence) { message = .psrfepe(psrfepe) }
    mutating func handle(_ pubx: PUBXPosition, in sentence: NMEASentence) { message = .pubxPosition(pubx) }
    mutating func handle(_ pubx: PUBXSatellites, in sentence: NMEASentence) {
        message = .pubxSatellites(pubx)
    }
    mutating func handle(_ pashr: PASHRPosition, in sentence: NMEASentence) { message = .pashrPosition(pashr) }
    mutating func handle(_ pashr: PASHRSatellites, in sentence: NMEASentence) {
        message = .pashrSatellites(pashr)
    }
    mutating func handle(_ psti: PSTIPosition, in sentence: NMEASentence) { message = .pstiPosition(psti) }
    mutating func handleUnknown(_ sentence: NMEASentence) { message = .unknown(sentence) }
    mutating func handleFailure(_ error: NMEADecodingError, in sentence: NMEASentence) { self.error = error }
}
