import DriverCASIC
import Foundation
import GPSFix
import ReceiverFraming
import Synchronization
import TestSupport
import Testing

/// CASIC's driver, counting the assemblers decoders make of it.
private enum CountingCASICDriver: ReceiverDriver {
    static let assemblersMade = Atomic<Int>(0)
    static var name: String { CASICDriver.name }
    static var frames: any FrameRule.Type { CASICDriver.frames }

    static func makeAssembler(_ context: AssemblyContext) -> any DriverAssembler {
        assemblersMade.add(1, ordering: .relaxed)
        return CASICDriver.makeAssembler(context)
    }
}

/// A decoder makes a driver's assembler when the stream first sends a frame of its
/// protocol: a receiver speaks one protocol or two, and the others' assemblers would
/// only hold memory.
@Suite("A driver's assembler, made with its protocol's first frame")
struct AssemblerCreationTests {
    @Test("NMEA makes none, and the driver's counts read zero; the first CASIC frame makes one, and only one")
    func madeWithTheFirstFrame() throws {
        let before = CountingCASICDriver.assemblersMade.load(ordering: .relaxed)
        let decoder = ReceiverStreamDecoder(drivers: [CountingCASICDriver.self])
        var fixes: [Fix] = []
        func feed(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { chunk in
                decoder.feed(chunk) { if case .fix(let fix) = $0 { fixes.append(fix) } }
            }
        }
        feed(Array("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n".utf8))
        #expect(CountingCASICDriver.assemblersMade.load(ordering: .relaxed) == before)
        var counts: [String: EpochReports.Statistics] = [:]
        decoder.driverStatistics { name, statistics in counts[name] = statistics }
        #expect(counts == [CASICDriver.frames.name: EpochReports.Statistics()])
        #expect(decoder.receiver.driver == "NMEA0183")

        let capture = try Data(contentsOf: DecodedCapture.binaryFixtures.appendingPathComponent("quectel-l76k-binary.log"))
        feed(Array(capture))
        decoder.finish { if case .fix(let fix) = $0 { fixes.append(fix) } }
        #expect(CountingCASICDriver.assemblersMade.load(ordering: .relaxed) == before + 1)
        #expect(decoder.receiver.driver == "CASIC")
        decoder.driverStatistics { name, statistics in counts[name] = statistics }
        #expect(counts[CASICDriver.frames.name]?.epochs == 130)
        #expect(fixes.filter { ($0.latitude ?? 0) < 50 }.count == 130)
    }
}
