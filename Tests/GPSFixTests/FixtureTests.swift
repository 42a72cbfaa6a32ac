import Foundation
import GPSDProtocol
import GPSFix
import Testing

@Suite("Recorded fixtures")
struct FixtureTests {
    @Test(
        "each fixture's fixes agree with gpsd's for the same second (gpsd 3.22's gpsdecode -j, the .chk beside it), on every value both take from the receiver",
        arguments: ["glonass-fix", "multiband-4.11", "cold-start"])
    func fixesAgreeWithGPSD(name: String) throws {
        // gpsdecode, without the log's date in its header, places the time of day in
        // another year: the seconds are compared within the day.
        func secondOfDay(_ report: [String: Any]) -> Substring? { (report["time"] as? String)?.dropFirst(11) }
        let theirs = try String(decoding: Fixtures.bytes(name + ".nmea.chk"), as: UTF8.self).split(whereSeparator: \.isNewline)
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["class"] as? String == "TPV" }
        let bySecond = Dictionary(theirs.compactMap { report in secondOfDay(report).map { ($0, report) } }, uniquingKeysWith: { _, last in last })
        let ours = try updates(ofLog: Fixtures.bytes(name + ".nmea")).compactMap(\.fix).compactMap { fix in
            try JSONSerialization.jsonObject(with: Data(GPSDReport.tpv(fix, device: nil))) as? [String: Any]
        }
        var compared = 0
        for mine in ours {
            guard let second = secondOfDay(mine), let gpsd = bySecond[second] else { continue }
            compared += 1
            // Not magvar: gpsd computes it from its own model when the receiver gives none.
            for key in ["mode", "lat", "lon", "altHAE", "altMSL", "track", "speed", "climb", "geoidSep"] {
                #expect("\(mine[key] ?? "none")" == "\(gpsd[key] ?? "none")", "\(second), \(key)")
            }
        }
        #expect(compared >= 2 && compared == bySecond.count, "\(compared) of gpsd's \(bySecond.count) fixes compared")
    }

    @Test("decoding does not depend on how the bytes are chunked")
    func chunking() throws {
        let bytes = try Fixtures.bytes("multiband-4.11.nmea")
        let whole = updates(ofLog: bytes, chunkSize: 1 << 20)
        for size in [1, 7, 64, 333] {
            #expect(updates(ofLog: bytes, chunkSize: size) == whole, "chunk size \(size)")
        }
    }
}
