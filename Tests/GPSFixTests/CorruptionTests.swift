import GPSFix
import NMEA
import Testing
import TestSupport

@Suite("Corrupted streams")
struct CorruptionTests {
    /// Decodes a log; its updates and the framer's counts.
    static func decode(_ log: [UInt8]) -> (updates: [LocationUpdate], framing: FramerStatistics) {
        let decoder = ReceiverStreamDecoder(for: CaptureLog(log))
        var updates: [LocationUpdate] = []
        CaptureLog(log).payload.withUnsafeBytes { payload in
            var offset = 0
            while offset < payload.count {  // in serial-sized chunks, so injuries straddle reads
                let end = min(offset + 61, payload.count)
                decoder.feed(UnsafeRawBufferPointer(rebasing: payload[offset..<end])) { updates.append($0) }
                offset = end
            }
        }
        decoder.finish { updates.append($0) }
        return (updates, decoder.framer.nmea.statistics)
    }

    @Test(
        "10% damaged sentences: exactly the intact sentences' fixes, and a refusal counted for each injury",
        arguments: ["gpsd/haicom-305N.log", "gpsd/bu353-glonass.log", "gpsd/ublox-zed-f9p-nmea.log", "multiband-4.11.nmea"],
        [1, 2, 3] as [UInt64])
    func tenPercentCorrupted(log: String, seed: UInt64) throws {
        let corrupted = CorruptedLog(log: try Fixtures.bytes(log), fraction: 0.1, seed: seed)
        let damaged = Self.decode(corrupted.bytes)
        let intact = Self.decode(corrupted.intact)
        #expect(corrupted.injuries.values.reduce(0, +) > 0)
        #expect(damaged.framing.sentences == intact.framing.sentences)
        #expect(damaged.framing.rejected == intact.framing.rejected + corrupted.expectedRefusals, "\(corrupted.injuries)")
        #expect(damaged.updates == intact.updates)
        #expect(damaged.updates.contains { $0.fix?.mode == .threeDimensional })
    }
}
