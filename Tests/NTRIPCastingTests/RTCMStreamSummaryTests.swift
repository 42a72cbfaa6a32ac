#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

@testable import NTRIPCasting

@Suite("What a base's RTCM 3 stream carries, for the source table")
struct RTCMStreamSummaryTests {
    /// The frames of `fixtures/rtcm/NAME`, whole, in order.
    static func frames(of name: String) throws -> [[UInt8]] {
        RTCMWire.frames(in: try RecordedRTCM.payload(of: name))
    }

    @Test("the messages with their intervals, the constellations, the carrier and the bit rate of a network's stream")
    func network() throws {
        var summary = RTCMStreamSummary()
        let frames = try Self.frames(of: "rtcm3.bndm.log")
        // Each message every second, as if the capture had come in one second per group of 1004.
        var second: UInt64 = 0
        for frame in frames {
            if frame[3] == 0x3E, frame[4] >> 4 == 0xC { second += 1 }  // 1004 opens an epoch
            summary.note(frame, atNanoseconds: second * 1_000_000_000)
        }
        #expect(summary.messages[1004]?.count == 33)
        #expect(summary.messages[1004]?.interval == 1)
        #expect(summary.formatDetails.hasPrefix("1004(1),1006("))
        #expect(summary.navigationSystems == "GPS+GLO")
        #expect(summary.carrier == 2)
        #expect(summary.bytes == frames.map(\.count).reduce(0, +))
        #expect(summary.bitRate > 0)
        #expect(summary.stationECEF != nil)
    }

    @Test("1005's position decoded to 0.1 mm, and its latitude and longitude back to the same point")
    func stationPosition() throws {
        // A point near Delft, 52.0° N, 4.37° E, 50 m up: ECEF from WGS 84's closed form.
        let (latitude, longitude, height) = (52.0 * Double.pi / 180, 4.37 * Double.pi / 180, 50.0)
        let a = 6_378_137.0, e2 = (1 / 298.257_223_563) * (2 - 1 / 298.257_223_563)
        let n = a / (1 - e2 * sin(latitude) * sin(latitude)).squareRoot()
        let x = (n + height) * cos(latitude) * cos(longitude), y = (n + height) * cos(latitude) * sin(longitude)
        let z = (n * (1 - e2) + height) * sin(latitude)
        let tenths = (Int64((x * 1e4).rounded()), Int64((y * 1e4).rounded()), Int64((z * 1e4).rounded()))
        var summary = RTCMStreamSummary()
        summary.note(RTCMWire.stationPosition(x: tenths.0, y: tenths.1, z: -tenths.2), atNanoseconds: 0)
        // A negative coordinate too: the southern hemisphere's Z.
        #expect(summary.stationECEF?.z == Double(-tenths.2) * 1e-4)
        summary.note(RTCMWire.stationPosition(x: tenths.0, y: tenths.1, z: tenths.2), atNanoseconds: 10_000_000_000)
        let ecef = try #require(summary.stationECEF)
        #expect(ecef.x == Double(tenths.0) * 1e-4)
        #expect(ecef.y == Double(tenths.1) * 1e-4)
        let position = try #require(summary.stationPosition)
        #expect(abs(position.latitude - 52.0) < 1e-8)
        #expect(abs(position.longitude - 4.37) < 1e-8)
        #expect(summary.formatDetails == "1005(10)")
        #expect(summary.navigationSystems == "")
    }

    @Test("a message not seen for a minute is left out, and a stream of noise keeps at most 64 numbers")
    func forgetting() throws {
        var summary = RTCMStreamSummary()
        let second: UInt64 = 1_000_000_000
        summary.note(RTCMWire.frame([0x3E, 0xC0, 0, 0]), atNanoseconds: 0)  // 1004
        for number in 1...200 {
            summary.note(RTCMWire.frame([UInt8(number >> 4), UInt8(number & 0x0F) << 4, 0]), atNanoseconds: UInt64(number) * second)
        }
        #expect(summary.messages.count <= RTCMStreamSummary.maximumMessages)
        #expect(!summary.currentMessages.contains(1004))
        #expect(summary.currentMessages.allSatisfy { (140...200).contains($0) }, "\(summary.currentMessages)")
        #expect(summary.bitRate > 0)
    }

    @Test("the source table names the stream, its position, its authentication and the caster")
    func sourceTable() throws {
        var summary = RTCMStreamSummary()
        for (index, frame) in try Self.frames(of: "rtcm3.2.log").enumerated() {
            summary.note(frame, atNanoseconds: UInt64(index) * 100_000_000)
        }
        let table = CasterSourceTable(
            streams: [.init(mountpoint: "ROOF", summary: summary, requiresAuthentication: true)], host: "10.0.0.2",
            port: 2101, generator: "GPSFix test"
        ).text
        let lines = table.split(separator: "\r\n").map(String.init)
        #expect(lines.count == 3)
        let fields = lines[0].split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.count == 19)
        #expect(Array(fields[0...3]) == ["STR", "ROOF", "ROOF", "RTCM 3.3"])
        #expect(fields[4].contains("63(") && fields[4].contains("1077(") && fields[4].contains("1107("))
        #expect(fields[6] == "GPS+GLO+GAL+SBAS")
        #expect(fields[15] == "B")
        #expect(lines[1].hasPrefix("CAS;10.0.0.2;2101;"))
        #expect(lines[2] == "ENDSOURCETABLE")
        #expect(CasterSourceTable.degrees(-0.004) == "0.00")
        #expect(CasterSourceTable.degrees(-33.456) == "-33.46")
    }
}
