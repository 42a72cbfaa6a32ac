/// Receives each sentence decoded into its type, straight from the framer's bytes.
///
/// `sentence.decode(into: &handler)` reads the address once, decodes the fields into
/// the matching type on the stack and passes it on: there is no enum to build and take
/// apart again, and no copy of a value hundreds of bytes long. This is the decoder's
/// fast path. ``NMEAMessage`` is built on it, for callers who want one value per
/// sentence; GPSFix's assembler is a handler too, merging each value into its cycle as
/// it arrives.
///
/// Values are borrowed for the call: those holding bytes (``TXT``, ``PUBXSatellites``,
/// ``PASHRSatellites``) point into the framer's memory and must be copied out to be kept.
public protocol NMEASentenceHandler {
    mutating func handle(_ gga: GGA, in sentence: NMEASentence)
    mutating func handle(_ rmc: RMC, in sentence: NMEASentence)
    mutating func handle(_ gsa: GSA, in sentence: NMEASentence)
    mutating func handle(_ gsv: GSV, in sentence: NMEASentence)
    mutating func handle(_ vtg: VTG, in sentence: NMEASentence)
    mutating func handle(_ gll: GLL, in sentence: NMEASentence)
    mutating func handle(_ zda: ZDA, in sentence: NMEASentence)
    mutating func handle(_ gst: GST, in sentence: NMEASentence)
    mutating func handle(_ gns: GNS, in sentence: NMEASentence)
    mutating func handle(_ gbs: GBS, in sentence: NMEASentence)
    mutating func handle(_ dtm: DTM, in sentence: NMEASentence)
    mutating func handle(_ txt: TXT, in sentence: NMEASentence)
    mutating func handle(_ hdt: HDT, in sentence: NMEASentence)
    mutating func handle(_ ths: THS, in sentence: NMEASentence)
    mutating func handle(_ pgrme: PGRME, in sentence: NMEASentence)
    mutating func handle(_ pgrmz: PGRMZ, in sentence: NMEASentence)
    mutating func handle(_ pgrmf: PGRMF, in sentence: NMEASentence)
    mutating func handle(_ pmgnst: PMGNST, in sentence: NMEASentence)
    mutating func handle(_ psrfepe: PSRFEPE, in sentence: NMEASentence)
    mutating func handle(_ pubx: PUBXPosition, in sentence: NMEASentence)
    mutating func handle(_ pubx: PUBXSatellites, in sentence: NMEASentence)
    mutating func handle(_ pashr: PASHRPosition, in sentence: NMEASentence)
    mutating func handle(_ pashr: PASHRSatellites, in sentence: NMEASentence)
    mutating func handle(_ psti: PSTIPosition, in sentence: NMEASentence)
    /// A sentence of a type not decoded (AIS, other makers' proprietary sentences, rarer
    /// standard ones), which is never an error.
    mutating func handleUnknown(_ sentence: NMEASentence)
    /// A sentence of a decoded type with a malformed field or too few fields.
    mutating func handleFailure(_ error: NMEADecodingError, in sentence: NMEASentence)
}

extension NMEASentence {
    /// Decodes the sentence by its address and passes the value to `handler`: the one
    /// table from addresses to sentence types. Any talker is accepted for standard
    /// sentences.
    ///
    /// Inlinable so that each handler gets the table specialised for it: its methods are
    /// called directly and the decoded value is built where the method reads it.
    @inlinable
    public func decode<Handler: NMEASentenceHandler>(into handler: inout Handler) {
        do throws(NMEADecodingError) {
            let address = self.address
            if let formatter = address.formatter {
                switch formatter {
                case .gga: handler.handle(try GGA.decode(self), in: self)
                case .rmc: handler.handle(try RMC.decode(self), in: self)
                case .gsa: handler.handle(try GSA.decode(self), in: self)
                case .gsv: handler.handle(try GSV.decode(self), in: self)
                case .vtg: handler.handle(try VTG.decode(self), in: self)
                case .gll: handler.handle(try GLL.decode(self), in: self)
                case .zda: handler.handle(try ZDA.decode(self), in: self)
                case .gst: handler.handle(try GST.decode(self), in: self)
                case .gns: handler.handle(try GNS.decode(self), in: self)
                case .gbs: handler.handle(try GBS.decode(self), in: self)
                case .dtm: handler.handle(try DTM.decode(self), in: self)
                case .txt: handler.handle(try TXT.decode(self), in: self)
                case .hdt: handler.handle(try HDT.decode(self), in: self)
                case .ths: handler.handle(try THS.decode(self), in: self)
                default: handler.handleUnknown(self)
                }
            } else if address == Addresses.pgrme {
                handler.handle(try PGRME.decode(self), in: self)
            } else if address == Addresses.pgrmz {
                handler.handle(try PGRMZ.decode(self), in: self)
            } else if address == Addresses.pgrmf {
                handler.handle(try PGRMF.decode(self), in: self)
            } else if address == Addresses.pmgnst {
                handler.handle(try PMGNST.decode(self), in: self)
            } else if address == Addresses.psrfepe {
                handler.handle(try PSRFEPE.decode(self), in: self)
            } else if address == Addresses.pubx, field(1, is: "00") {
                handler.handle(try PUBXPosition.decode(self), in: self)
            } else if address == Addresses.pubx, field(1, is: "03") {
                handler.handle(try PUBXSatellites.decode(self), in: self)
            } else if address == Addresses.pashr, field(1, is: "POS") {
                // Ashtech's subtypes; OxTS attitude sentences share the address.
                handler.handle(try PASHRPosition.decode(self), in: self)
            } else if address == Addresses.pashr, field(1, is: "SAT") {
                handler.handle(try PASHRSatellites.decode(self), in: self)
            } else if address == Addresses.psti, field(1, is: "030") {
                // SkyTraq's other subtypes (RTK baselines, attitude, status) carry no fix.
                handler.handle(try PSTIPosition.decode(self), in: self)
            } else {
                handler.handleUnknown(self)
            }
        } catch {
            handler.handleFailure(error, in: self)
        }
    }
}

/// The addresses of the proprietary sentences decoded, as constants (computed, so no
/// lazy global is touched).
@usableFromInline
enum Addresses {
    @inlinable static var pgrme: SentenceAddress { SentenceAddress(packed: 0x5047_524D_4500_0000, count: 5) }
    @inlinable static var pgrmz: SentenceAddress { SentenceAddress(packed: 0x5047_524D_5A00_0000, count: 5) }
    @inlinable static var pgrmf: SentenceAddress { SentenceAddress(packed: 0x5047_524D_4600_0000, count: 5) }
    @inlinable static var pmgnst: SentenceAddress { SentenceAddress(packed: 0x504D_474E_5354_0000, count: 6) }
    @inlinable static var psrfepe: SentenceAddress { SentenceAddress(packed: 0x5053_5246_4550_4500, count: 7) }
    @inlinable static var pubx: SentenceAddress { SentenceAddress(packed: 0x5055_4258_0000_0000, count: 4) }
    @inlinable static var pashr: SentenceAddress { SentenceAddress(packed: 0x5041_5348_5200_0000, count: 5) }
    @inlinable static var psti: SentenceAddress { SentenceAddress(packed: 0x5053_5449_0000_0000, count: 4) }
}
