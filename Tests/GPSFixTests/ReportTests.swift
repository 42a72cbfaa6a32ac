import GPSDProtocol
import GPSFix
import NMEA
import Testing

@Suite("gpsd JSON reports")
struct ReportTests {
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("TPV: class first, compact, gpsd's precision, absent values left out, CR LF at the end")
    func tpv() {
        var fix = Fix()
        fix.mode = .threeDimensional
        fix.status = .differential
        fix.time = GPSTime(year: 2010, month: 6, day: 3, time: NMEATime(hour: 14, minute: 52, second: 45, nanosecond: 7_900_000))
        fix.latitude = 34.03294
        fix.longitude = -117.7471233333
        fix.altitudeMSL = 234.7
        fix.speed = 0
        fix.track = 119.27
        let report = text(GPSDReport.tpv(fix, device: "/dev/ttyUSB0"))
        #expect(report == #"{"class":"TPV","device":"/dev/ttyUSB0","status":2,"mode":3,"time":"2010-06-03T14:52:45.007Z","lat":34.032940000,"lon":-117.747123333,"altMSL":234.7000,"alt":234.7000,"track":119.2700,"speed":0.000}"# + "\r\n")
        #expect(!report.contains("null") && !report.contains(" "))
    }

    @Test("TPV: a measured velocity as velN, velE and velD after climb, gpsd's three decimals")
    func tpvVelocity() {
        var fix = Fix()
        fix.mode = .threeDimensional
        fix.climb = 0.5
        fix.velocity = NEDVelocity(north: 4, east: -0.0125, down: -0.5)
        #expect(
            text(GPSDReport.tpv(fix, device: nil))
                == #"{"class":"TPV","mode":3,"climb":0.500,"velN":4.000,"velE":-0.013,"velD":-0.500}"# + "\r\n")
    }

    @Test("a fix with nothing known is just its mode; plain GPS status is not printed")
    func emptyTPV() {
        var fix = Fix()
        fix.status = .gps
        #expect(text(GPSDReport.tpv(fix, device: nil)) == "{\"class\":\"TPV\",\"mode\":0}\r\n")
    }

    @Test("SKY lists satellites with PRN, angles, signal, used, system and signal ids")
    func sky() {
        var sky = SkyView()
        sky.hdop = 0.87
        sky.pdop = 1.58
        sky.satellites = [
            Satellite(identity: SatelliteIdentity(prn: 14, gnss: .gps, svid: 14), elevation: 86, azimuth: 335, snr: 41, used: true),
            Satellite(identity: SatelliteIdentity(prn: 307, gnss: .galileo, svid: 7), signal: 4, snr: 11),
        ]
        #expect(text(GPSDReport.sky(sky, device: nil)) == #"{"class":"SKY","hdop":0.87,"pdop":1.58,"nSat":2,"uSat":1,"satellites":[{"PRN":14,"el":86.0,"az":335.0,"ss":41.0,"used":true,"gnssid":0,"svid":14},{"PRN":307,"ss":11.0,"used":false,"gnssid":2,"svid":7,"sigid":4}]}"# + "\r\n")
    }

    @Test(
        "SKY lists at most 140 satellites (libgps reads no more): every used one, as many others as fit, in the receiver's order; nSat still all in view",
        arguments: [(used: Array(181...200), listed: Array(1...120) + Array(181...200)), (Array(stride(from: 2, through: 200, by: 10)), Array(1...134) + Array(stride(from: 142, through: 192, by: 10))), (Array(1...150), Array(1...140))])
    func skyPastLibgpsLimit(_ sky: (used: [Int], listed: [Int])) throws {
        var view = SkyView()
        view.satellites = (1...200).map { index in
            Satellite(identity: SatelliteIdentity(prn: index, gnss: .gps, svid: index), snr: 30, used: sky.used.contains(index))
        }
        let report = text(GPSDReport.sky(view, device: nil))
        let listed = report.components(separatedBy: #"{"PRN":"#).dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(listed == sky.listed)
        #expect(report.contains(#""nSat":200,"uSat":\#(sky.used.count),"#))
    }

    @Test("GST carries the receiver's error estimate")
    func gst() {
        var estimate = ErrorEstimate()
        estimate.rangeRMS = 46
        estimate.latitudeError = 4.7
        #expect(text(GPSDReport.gst(estimate, device: nil)) == #"{"class":"GST","rms":46.000,"lat":4.700}"# + "\r\n")
    }

    @Test("strings are escaped; numbers round half away from zero and never print -0")
    func writer() {
        var json = JSONWriter(class: "DEVICE")
        json.field("path", string: "/dev/\"odd\"\\\u{1}")
        json.field("a", -0.0004, decimals: 3)
        json.field("b", 2.5, decimals: 0)
        json.field("c", Double.nan, decimals: 2)
        json.field("d", -12.3456, decimals: 2)
        #expect(text(json.finish()) == #"{"class":"DEVICE","path":"/dev/\"odd\"\\\u0001","a":0.000,"b":3,"d":-12.35}"# + "\r\n")
    }
}
