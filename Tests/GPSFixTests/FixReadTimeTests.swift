import GPSFix
import ReceiverFraming
import Testing
import UBX

/// NAV-SOL as u-blox's interface description lays it out (52 bytes): a 3D fix whose week
/// and time of week are set.
func navSOL(iTOW: UInt32, week: Int16 = 2412) -> [UInt8] {
    var p = Payload(count: 52)
    p.set(0, iTOW)
    p.set(8, week)
    p.set(10, UInt8(3))
    p.set(11, UInt8(0x0D))  // gpsFixOK, weekSet, towSet
    p.set(12, Int32(411_000_000))  // ECEF, cm: a point in Europe
    p.set(16, Int32(69_000_000))
    p.set(20, Int32(477_000_000))
    p.set(24, UInt32(500))
    p.set(44, UInt16(150))
    p.set(47, UInt8(8))
    return UBXFrame.encode(messageClass: 0x01, id: 0x06, payload: p.bytes)
}

/// HNR-PVT as u-blox's interface description lays it out (72 bytes): a 3D fix of its own.
func hnrPVT(iTOW: UInt32, time: (Int, Int, Int, Int, Int, Int)) -> [UInt8] {
    var p = Payload(count: 72)
    p.set(0, iTOW)
    p.setCalendar(time)
    p.set(11, UInt8(0x07))  // date, time and fully resolved
    p.set(16, UInt8(3))
    p.set(17, UInt8(0x01))
    p.set(20, Int32(115_167_000))
    p.set(24, Int32(481_173_000))
    p.set(28, Int32(592_000))
    p.set(32, Int32(545_400))
    return UBXFrame.encode(messageClass: 0x28, id: 0x00, payload: p.bytes)
}

/// The time service pairs a fix's time with the moment its cycle's first frame was read:
/// paired with another cycle's read, the clock it feeds is a second wrong.
@Suite("The read a fix's time is paired with")
struct FixReadTimeTests {
    /// Feeds `epochs`, each one chunk read one second after the one before, and returns,
    /// for each fix, how many seconds after the first fix's it is, and how many after the
    /// first chunk's read the read it was paired with is: the two must agree.
    static func pairings(of epochs: [[UInt8]]) -> [(fix: Int, read: Int)] {
        let decoder = ReceiverStreamDecoder()
        let start = WallTime(seconds: 1_800_000_000)
        var seconds: [(fix: Int, read: Int)] = []
        var first: Int?
        for (index, chunk) in epochs.enumerated() {
            decoder.readAt = WallTime(seconds: start.seconds + index)
            chunk.withUnsafeBytes { bytes in
                decoder.feed(bytes) { update in
                    guard case .fix(let fix) = update, let time = fix.time, let read = decoder.emittedFixReadAt else { return }
                    let second = WallTime(time).seconds
                    first = first ?? second
                    seconds.append((second - first!, read.seconds - start.seconds))
                }
            }
        }
        return seconds
    }

    @Test("NMEA: a cycle's fix, given out as the next cycle's first sentence is read, keeps its own cycle's read")
    func nmeaCycles() {
        let epochs = (0..<4).map { second in
            Array((sentence("$GPGGA,12000\(second).00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
                + sentence("$GPRMC,12000\(second).00,A,4807.038,N,01131.000,E,0.0,0.0,261126,,,A")).utf8)
        }
        let pairings = Self.pairings(of: epochs)
        #expect(pairings.count >= 3)
        #expect(pairings.allSatisfy { $0.fix == $0.read }, "\(pairings)")
    }

    @Test("an older u-blox whose epoch opens with NAV-SOL, which reports it at once: paired with that epoch's read")
    func navSOLEpochs() {
        let pairings = Self.pairings(of: (1...4).map { navSOL(iTOW: UInt32($0) * 1000) })
        #expect(pairings.count >= 4)
        #expect(pairings.allSatisfy { $0.fix == $0.read }, "\(pairings)")
    }

    @Test("fixes read again after a false frame start is refused: paired with no read rather than a later one")
    func replayedAfterFalseStart() {
        // A NAV-SAT header of line noise claims 1208 bytes: the two seconds of NMEA after
        // it wait in the frame until its checksum fails, reads later, then are read again.
        let falseStart: [UInt8] = [0xB5, 0x62, 0x01, 0x35, 0xB8, 0x04]
        let nmea = (0..<2).map { second in
            sentence("$GPGGA,12000\(second).00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
                + sentence("$GPRMC,12000\(second).00,A,4807.038,N,01131.000,E,0.0,0.0,261126,,,A")
        }.joined()
        let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 400)
        let chunks = [falseStart + Array(nmea.utf8)] + Array(repeating: filler, count: 4)
        let decoder = ReceiverStreamDecoder()
        var reads: [WallTime?] = []
        for (index, chunk) in chunks.enumerated() {
            decoder.readAt = WallTime(seconds: 1_800_000_000 + index)
            chunk.withUnsafeBytes { bytes in
                decoder.feed(bytes) { update in
                    if case .fix = update { reads.append(decoder.emittedFixReadAt) }
                }
            }
        }
        #expect(reads.count >= 1, "the fixes reach watchers")
        #expect(reads.allSatisfy { $0 == nil || $0 == WallTime(seconds: 1_800_000_000) }, "\(reads)")
    }

    @Test("an HNR-PVT between epochs, a fix of its own frame: paired with that frame's read")
    func hnrBetweenEpochs() {
        let pairings = Self.pairings(of: [
            navPVT(iTOW: 1000, time: (2026, 11, 26, 12, 0, 0)) + navEOE(iTOW: 1000),
            hnrPVT(iTOW: 2000, time: (2026, 11, 26, 12, 0, 1)),
            navPVT(iTOW: 3000, time: (2026, 11, 26, 12, 0, 2)) + navEOE(iTOW: 3000),
        ])
        #expect(pairings.count == 3)
        #expect(pairings.allSatisfy { $0.fix == $0.read }, "\(pairings)")
    }
}
