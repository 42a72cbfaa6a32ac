import NMEA
import Testing

@Suite("Sentence handlers")
struct HandlerTests {
    /// Writes down which method each sentence reached, and one value it carried.
    struct Recorder: NMEASentenceHandler {
        var calls: [String] = []

        mutating func handle(_ gga: GGA, in sentence: NMEASentence) { calls.append("GGA \(gga.satellitesUsed ?? -1)") }
        mutating func handle(_ rmc: RMC, in sentence: NMEASentence) { calls.append("RMC \(rmc.isValid ?? false)") }
        mutating func handle(_ gsa: GSA, in sentence: NMEASentence) { calls.append("GSA \(gsa.satellites.count)") }
        mutating func handle(_ gsv: GSV, in sentence: NMEASentence) { calls.append("GSV \(gsv.satellites.count)") }
        mutating func handle(_ vtg: VTG, in sentence: NMEASentence) { calls.append("VTG") }
        mutating func handle(_ gll: GLL, in sentence: NMEASentence) { calls.append("GLL") }
        mutating func handle(_ zda: ZDA, in sentence: NMEASentence) { calls.append("ZDA \(zda.date?.year ?? 0)") }
        mutating func handle(_ gst: GST, in sentence: NMEASentence) { calls.append("GST") }
        mutating func handle(_ gns: GNS, in sentence: NMEASentence) { calls.append("GNS") }
        mutating func handle(_ gbs: GBS, in sentence: NMEASentence) { calls.append("GBS") }
        mutating func handle(_ dtm: DTM, in sentence: NMEASentence) { calls.append("DTM") }
        mutating func handle(_ txt: TXT, in sentence: NMEASentence) { calls.append("TXT") }
        mutating func handle(_ hdt: HDT, in sentence: NMEASentence) { calls.append("HDT") }
        mutating func handle(_ ths: THS, in sentence: NMEASentence) { calls.append("THS \(ths.isValid ?? false)") }
        mutating func handle(_ pgrme: PGRME, in sentence: NMEASentence) { calls.append("PGRME") }
        mutating func handle(_ pgrmz: PGRMZ, in sentence: NMEASentence) { calls.append("PGRMZ") }
        mutating func handle(_ pgrmf: PGRMF, in sentence: NMEASentence) { calls.append("PGRMF") }
        mutating func handle(_ pmgnst: PMGNST, in sentence: NMEASentence) { calls.append("PMGNST") }
        mutating func handle(_ psrfepe: PSRFEPE, in sentence: NMEASentence) { calls.append("PSRFEPE") }
        mutating func handle(_ pubx: PUBXPosition, in sentence: NMEASentence) { calls.append("PUBX,00") }
        mutating func handle(_ pubx: PUBXSatellites, in sentence: NMEASentence) { calls.append("PUBX,03 \(pubx.count)") }
        mutating func handle(_ pashr: PASHRPosition, in sentence: NMEASentence) { calls.append("PASHR,POS") }
        mutating func handle(_ pashr: PASHRSatellites, in sentence: NMEASentence) { calls.append("PASHR,SAT \(pashr.count)") }
        mutating func handle(_ psti: PSTIPosition, in sentence: NMEASentence) { calls.append("PSTI,030 \(psti.mode.map { Character(Unicode.Scalar($0.rawValue)) } ?? "-")") }
        mutating func handleUnknown(_ sentence: NMEASentence) { calls.append("unknown \(sentence.address)") }
        mutating func handleFailure(_ error: NMEADecodingError, in sentence: NMEASentence) {
            calls.append("failure \(error.address) field \(error.field)")
        }
    }

    @Test("each sentence reaches the one method for its type; unknown and malformed sentences are told apart")
    func dispatch() {
        let lines = [
            "$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,",
            "$GNRMC,003956.00,A,4552.65403,S,17030.00668,E,0.025,,120419,,,A,V",
            "$PQGSV,1,1,01,419,35,120,40,4",
            "$GNGSA,A,3,05,13,15,,,,,,,,,,1.8,1.0,1.5,1",
            "$BDZDA,081411.000,26,05,2014,,",
            "$PUBX,03,1,5,U,319,45,39,064",
            "$PUBX,41,1,0007,0003,19200,0",
            "$PGRMM,WGS 84",
            "$PSRFEPE,100542.000,A,0.7,6.82,10.69,0.0,180.0",
            "$GPGSV,1,1,01,05,91,100,40",
            "$PASHR,POS,0,06,151449.50,3723.4705,N,12202.2618,W,00029.6,,137.2,000.3,+000.1,02.3,01.4,01.8,01.1,GG00",
            "$PASHR,SAT,2,03,103,56,50,U,23,225,42,47,-",
            "$PASHR,204132.000,010.51,T,+00.39,-00.79,-00.84,0.151,0.075,0.555,1,0",
            "$PSTI,030,033010.000,A,2447.0895508,N,12100.5234656,E,94.615,0.00,-0.01,0.04,111219,R,0.999,3.724",
            "$PSTI,032,041457.000,170316,A,R,0.603,-0.837,-0.089,1.036,144.22,,,,,",
            "$PSTI,030,033010.000,A,2447.0895508",
            "$GNTHS,77.52,A",
        ]
        var recorder = Recorder()
        let framer = NMEAFramer(configuration: .lenient)
        frameEach(Array(lines.map { withChecksum($0) + "\r\n" }.joined().utf8), framer) { $0.decode(into: &recorder) }
        #expect(
            recorder.calls == [
                "GGA 5", "RMC true", "GSV 1", "GSA 3", "ZDA 2014", "PUBX,03 1", "unknown PUBX", "unknown PGRMM",
                "PSRFEPE", "failure GPGSV field 5", "PASHR,POS", "PASHR,SAT 2", "unknown PASHR",
                "PSTI,030 R", "unknown PSTI", "failure PSTI field 4", "THS true",
            ])
    }

    @Test("an address read as one word equals the address read byte by byte, for every length")
    func addressWord() {
        // Addresses of 2 to 10 characters, with and without fields, so lines of 6 bytes
        // (read byte by byte) and of 9 bytes or more (read as a word) are both met.
        var bodies: [String] = []
        for length in 2...10 {
            let address = String("GPGGAXYZWV".prefix(length))
            bodies += ["$" + address, "$" + address + ",1", "$P" + address.dropFirst() + ",A,B"]
        }
        let framer = NMEAFramer(configuration: .lenient)
        var compared = 0
        frameEach(Array(bodies.map { withChecksum($0) + "\r\n" }.joined().utf8), framer) { sentence in
            #expect(sentence.address == SentenceAddress(sentence.field(0)), "\(sentence.text)")
            compared += 1
        }
        #expect(compared == bodies.count)
    }
}
