import Foundation

/// A simulated receiver's navigation solution: standing at one place with twelve
/// satellites, on Sunday 22 November 2026 from 10:00 GPS time, at the measurement rate.
extension ReceiverState {
    /// The rate of UBX message `message` (class and id) on UART1, per solution.
    func outputRate(of message: UInt16) -> UInt64 {
        ram[Self.outputKeys[message] ?? (0x0F00_0000 | UInt32(message))] ?? 0
    }

    /// NAV-PVT (protocol 15 on), NAV-DOP, NAV-SAT, NAV-TIMELS (18 leap seconds, from GPS;
    /// no change scheduled) and NAV-EOE, in the order a receiver sends them.
    func navigationMessages() -> [(UInt16, [UInt8])] {
        let utc = utcFields()
        let pvt = Fields()
        pvt.put(timeOfWeek, 4).put(2026, 2).put(11, 1).put(utc.day, 1).put(utc.hour, 1).put(utc.minute, 1).put(utc.second, 1)
        pvt.put(0x07, 1).put(20, 4).put(utc.nanoseconds, 4).put(3, 1).put(0x01, 1).put(0, 1).put(12, 1)
        pvt.put(-927_000, 4).put(514_792_617, 4).put(72_000, 4).put(25_000, 4).put(1500, 4).put(2500, 4)
        pvt.put(0, 20).put(300, 4).put(1_000_000, 4).put(130, 2).put(0, 14)  // velocities, speed, heading, their accuracies, pDOP
        let dop = Fields()
        dop.put(timeOfWeek, 4)
        for value in [180, 130, 110, 100, 80, 60, 50] { dop.put(value, 2) }
        let sat = Fields()
        sat.put(timeOfWeek, 4).put(1, 1).put(12, 1).put(0, 2)
        for index in 0..<12 {
            sat.put(index < 8 ? 0 : 6, 1).put(index + 3, 1).put(30 + index, 1).put(20 + 5 * index, 1).put(index * 30, 2)
            sat.put(0, 2).put(0x0F | 0x08, 4)
        }
        let leap = Fields()
        leap.put(timeOfWeek, 4).put(0, 4).put(2, 1).put(18, 1).put(2, 1).put(0, 1).put(0, 4).put(0, 4).put(0, 3).put(0x03, 1)
        let end = Fields()
        end.put(timeOfWeek, 4)
        return [(0x0107, pvt.bytes), (0x0104, dop.bytes), (0x0135, sat.bytes), (0x0126, leap.bytes), (0x0161, end.bytes)]
    }

    /// GGA and RMC of the same solution, as an NMEA port sends them.
    func nmea() -> [UInt8] {
        let utc = utcFields()
        let time = String(format: "%02d%02d%02d.%02d", utc.hour, utc.minute, utc.second, utc.nanoseconds / 10_000_000)
        let sentences = [
            "GNGGA,\(time),5128.7557,N,00000.5562,W,1,12,0.60,25.0,M,47.0,M,,",
            "GNRMC,\(time),A,5128.7557,N,00000.5562,W,0.000,,\(String(format: "%02d", utc.day))1126,,,A,V",
        ]
        return sentences.flatMap { body in
            Array("$\(body)*\(String(format: "%02X", body.utf8.reduce(UInt8(0), ^)))\r\n".utf8)
        }
    }

    /// UTC (GPS time less 18 leap seconds) of the current solution.
    private func utcFields() -> (day: UInt8, hour: UInt8, minute: UInt8, second: UInt8, nanoseconds: Int) {
        let milliseconds = Int(timeOfWeek) - 18_000
        let seconds = milliseconds / 1000
        return (
            UInt8(22 + seconds / 86400), UInt8(seconds / 3600 % 24), UInt8(seconds / 60 % 60), UInt8(seconds % 60),
            milliseconds % 1000 * 1_000_000
        )
    }

}

/// Little-endian fields appended one after the other; a count past 8 appends zeros.
final class Fields {
    var bytes: [UInt8] = []

    @discardableResult
    func put(_ value: some BinaryInteger, _ count: Int) -> Fields {
        let raw = UInt64(truncatingIfNeeded: Int64(value))
        for index in 0..<count { bytes.append(index < 8 ? UInt8(truncatingIfNeeded: raw >> UInt64(index * 8)) : 0) }
        return self
    }
}
