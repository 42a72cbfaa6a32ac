import Foundation
import GPSDProtocol
import GPSFix
import Testing

@Suite("Recorded fixtures")
struct FixtureTests {
    @Test("each fixture decodes to the reports beside it", arguments: ["glonass-fix", "multiband-4.11", "cold-start"])
    func decodesToExpectedReports(name: String) throws {
        let expected = String(decoding: try Fixtures.bytes(name + ".json"), as: UTF8.self)
            .split(whereSeparator: \.isNewline).map(String.init)
        let reports = updates(ofLog: try Fixtures.bytes(name + ".nmea")).compactMap {
            GPSDReport.encode($0, device: nil).map { String(decoding: $0, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "") }
        }
        #expect(reports.count == expected.count)
        for (index, (ours, theirs)) in zip(reports, expected).enumerated() {
            #expect(ours == theirs, "report \(index + 1)")
        }
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
