import DriverSkytraq
import GPSFix
import Testing

/// Skytraq's binary messages give GPS time and no leap seconds: its UTC is the driver's
/// assumption (18 s), right until the next leap second, then wrong by a whole second with
/// no warning. Shown to watchers, as gpsd shows it; never given to a clock.
@Suite("Skytraq: a time built on an assumed leap second feeds no clock")
struct SkytraqTimeTrustTests {
    /// 0xDF for `second` seconds into week 2412 (March 2026): a 3D fix in Bavaria.
    static func navigationStatus(second: Int) -> [UInt8] {
        func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        var payload = [UInt8](repeating: 0, count: SkytraqNavigationStatus.length)
        payload[0] = SkytraqNavigationStatus.id
        payload[1] = UInt8(truncatingIfNeeded: second)  // issue of data
        payload[2] = 3
        payload.replaceSubrange(3..<5, with: bigEndian(UInt16(2412)))
        for (offset, value) in [(5, 72_000.0 + Double(second)), (13, 4_156_000.0), (21, 841_000.0), (29, 4_748_000.0)] {
            payload.replaceSubrange(offset..<(offset + 8), with: bigEndian(value.bitPattern))
        }
        for offset in stride(from: 61, through: 77, by: 4) {
            payload.replaceSubrange(offset..<(offset + 4), with: bigEndian(Float(1.2).bitPattern))
        }
        return SkytraqFrameRule.frame(payload: payload)
    }

    @Test("ten seconds of 3D fixes: shown with their time, and no time sample from any of them")
    func noSamples() throws {
        let assembler = SkytraqAssembler(AssemblyContext())
        var sampler = ReceiverTimeSampler()
        var fixes: [Fix] = []
        var samples: [TimeSample] = []
        for second in 0..<10 {
            Self.navigationStatus(second: second).withUnsafeBytes { bytes in
                assembler.add(bytes) { update in
                    guard case .fix(let fix) = update else { return }
                    fixes.append(fix)
                    if let sample = sampler.sample(for: fix, readAt: WallTime(seconds: 1_800_000_000 + second)) { samples.append(sample) }
                }
            }
        }
        #expect(fixes.count >= 9)
        #expect(fixes.allSatisfy { $0.mode == .threeDimensional && $0.time != nil && $0.timeIsUnconfirmed })
        #expect(samples.isEmpty, "\(samples.count) samples")
    }
}
