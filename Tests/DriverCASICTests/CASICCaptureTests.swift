import DriverCASIC
import Foundation
import GPSFix
import NMEA
import ReceiverDrivers
import TestSupport
import Testing

/// The Quectel L76K capture from gpsd's regression suite (`fixtures/gpsd-binary/`), read
/// through the decoder with every driver, against what gpsd reports for it (its `.chk`).
@Suite("CASIC, from the L76K's capture")
struct CASICCaptureTests {
    /// 2026-08-06 07:18:SS UTC, in the capture.
    static func seconds(_ second: UInt8) -> GPSTime {
        GPSTime(year: 2026, month: 8, day: 6, time: NMEATime(hour: 7, minute: 18, second: second))
    }

    /// Decodes the capture, with `between` inserted before every CASIC epoch.
    static func decode(chunkSize: Int = 4096, between: String = "") throws -> DecodedCapture {
        var bytes = Array(try Data(contentsOf: DecodedCapture.binaryFixtures.appendingPathComponent("quectel-l76k-binary.log")))
        if !between.isEmpty {
            // Before each NAV-STATUS, the first message of an epoch.
            let status: [UInt8] = [0xBA, 0xCE, 0x50, 0x00, 0x01, 0x00]
            var mixed: [UInt8] = []
            var index = 0
            while index < bytes.count {
                if bytes[index...].starts(with: status) { mixed += Array(between.utf8) }
                mixed.append(bytes[index])
                index += 1
            }
            bytes = mixed
        }
        return DecodedCapture(bytes, drivers: ReceiverDrivers.all, chunkSize: chunkSize)
    }

    @Test("one fix per epoch, 130 epochs, in any chunking; the device is named CASIC")
    func epochs() throws {
        for chunkSize in [1, 7, 4096] {
            let decoded = try Self.decode(chunkSize: chunkSize)
            #expect(decoded.fixes.count == 130)
            #expect(decoded.receiver.driver == "CASIC")
        }
    }

    @Test("NMEA from the same port does not make a second fix per epoch once CASIC carries them")
    func oneFixPerEpochBesideNMEA() throws {
        // A GGA and RMC of another place (55.7 N), as a receiver left with NMEA on would send.
        let nmea = "$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n"
        let decoded = try Self.decode(between: nmea)
        let fromNMEA = decoded.fixes.filter { ($0.latitude ?? 0) > 50 }
        // Only the sentence before the first NAV-PV can make a fix: CASIC carries them from then on.
        #expect(fromNMEA.count <= 1)
        #expect(decoded.fixes.count - fromNMEA.count == 130)
        #expect(decoded.receiver.driver == "CASIC")
    }

    @Test("the fix of 07:18:05 is gpsd's: position, altitudes, mode, speed and track")
    func fixAsGPSDReportsIt() throws {
        let fixes = try Self.decode().fixes
        let fix = try #require(fixes.first { $0.time == Self.seconds(5) })
        // gpsd: "lat":47.661958473,"lon":-122.326376312,"altHAE":56.0180,"altMSL":77.6272,"mode":3,"speed":0.000,"track":286.3458
        #expect(abs(fix.latitude! - 47.661958473) < 1e-9)
        #expect(abs(fix.longitude! - -122.326376312) < 1e-9)
        #expect(abs(fix.altitudeHAE! - 56.0180) < 1e-4)
        #expect(abs(fix.altitudeMSL! - 77.6272) < 1e-4)
        #expect(fix.mode == .threeDimensional)
        #expect(fix.speed == 0)
        #expect(abs(fix.track! - 286.3458) < 1e-4)
        // gpsd's eph and epv are the square roots of NAV-PV's variances: 1.646 and 2.306.
        #expect(abs(fix.horizontalError! - 1.646) < 1e-3)
        #expect(abs(fix.verticalError! - 2.306) < 1e-3)
    }

    @Test("the sky joins GPS, BeiDou and GLONASS: 24 in view, 17 used, NAV-DOP's DOPs")
    func sky() throws {
        let time = Self.seconds(5)
        let view = try #require(try Self.decode().views.first { $0.time == time })
        #expect(view.visibleCount == 24)
        #expect(view.usedCount == 17)
        #expect(abs(view.hdop! - 0.76) < 0.005)
        #expect(abs(view.pdop! - 1.31) < 0.005)
        // gpsd's first satellite: {"PRN":1,"az":44.0,"el":18.0,"prRes":1.9,"ss":30.0,"used":true}
        let first = try #require(view.satellites.first)
        #expect(first.identity.prn == 1)
        #expect(first.azimuth == 44 && first.elevation == 18 && first.snr == 30 && first.used)
        #expect(view.satellites.contains { $0.identity.gnss == .beidou } && view.satellites.contains { $0.identity.gnss == .glonass })
    }
}
