#if canImport(Glibc)
import Glibc
#endif
import CTimeService
import Foundation
import GPSFix
import GPSFixTime
import Logging
import NMEA
import TestSupport
import Testing

/// A u-blox receiver's epochs on 2026-12-31 from 00:59:55, one a second: NAV-PVT, then
/// NAV-TIMELS, then NAV-EOE. Until `announcedAt` its NAV-TIMELS knows of no change; in
/// that epoch, and only then, it announces a second inserted at the end of the day.
enum LeapAnnouncingReceiver {
    static let firstSecondOfDay = 3595  // 00:59:55

    static func stream(epochs: Int, announcedAt: Int) -> [UInt8] {
        (0..<epochs).flatMap { index -> [UInt8] in
            let secondOfDay = firstSecondOfDay + index
            let iTOW = UInt32(4 * 86_400 + secondOfDay + 18) * 1000  // a Thursday, GPS time
            var timeLS = navTIMELS(iTOW: iTOW, change: 0, secondsToEvent: -1_000_000)
            if index == announcedAt { timeLS = navTIMELS(iTOW: iTOW, change: 1, secondsToEvent: Int32(86_400 - secondOfDay)) }
            let pvt = navPVT(iTOW: iTOW, hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
            return pvt + (index <= announcedAt ? timeLS : []) + frame(id: 0x61, payload: le(iTOW))
        }
    }

    /// The time service's samples of `stream`, as the daemon takes them from its fixes.
    static func samples(of stream: [UInt8]) -> [TimeSample] {
        let decoder = ReceiverStreamDecoder()
        var sampler = ReceiverTimeSampler()
        var samples: [TimeSample] = []
        let emit: (LocationUpdate) -> Void = { update in
            guard case .fix(let fix) = update, let time = fix.time else { return }
            if let sample = sampler.sample(for: fix, readAt: WallTime(time) + .milliseconds(80)) { samples.append(sample) }
        }
        stream.withUnsafeBytes { decoder.feed($0, emit) }
        decoder.finish(emit)
        return samples
    }

    static func navPVT(iTOW: UInt32, hour: Int, minute: Int, second: Int) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: 92)
        payload.replaceSubrange(0..<4, with: le(iTOW))
        payload.replaceSubrange(4..<6, with: le(UInt16(2026)))
        payload[6] = 12
        payload[7] = 31
        (payload[8], payload[9], payload[10]) = (UInt8(hour), UInt8(minute), UInt8(second))
        payload[11] = 0x07  // valid date, valid time, fully resolved
        payload[20] = 3  // 3D
        payload[21] = 0x01  // gnssFixOK
        return frame(id: 0x07, payload: payload)
    }

    static func navTIMELS(iTOW: UInt32, change: Int8, secondsToEvent: Int32) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: 24)
        payload.replaceSubrange(0..<4, with: le(iTOW))
        (payload[8], payload[9]) = (2, 18)  // current leap seconds, from GPS
        payload[11] = UInt8(bitPattern: change)
        payload.replaceSubrange(12..<16, with: le(secondsToEvent))
        payload[23] = 0x03  // validCurrLs, validTimeToLsEvent
        return frame(id: 0x26, payload: payload)
    }

    /// A UBX NAV frame, checksummed as u-blox's interface description says (8-bit Fletcher).
    static func frame(id: UInt8, payload: [UInt8]) -> [UInt8] {
        let body = [0x01, id] + le(UInt16(payload.count)) + payload
        var (a, b): (UInt8, UInt8) = (0, 0)
        for byte in body {
            a &+= byte
            b &+= a
        }
        return [0xB5, 0x62] + body + [a, b]
    }

    static func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
}

@Suite("Leap seconds reach the clock")
struct LeapSecondTests {
    /// Announced at 00:59:59, 82,801 s before the day's end: more than gpsd's 23 hours,
    /// so the warning starts at 01:00:01, counted down from that one NAV-TIMELS.
    let stream = LeapAnnouncingReceiver.stream(epochs: 12, announcedAt: 4)
    /// Samples start at the fourth fix (00:59:58); leap = 1 from 01:00:01.
    let expected = [0, 0, 0, 1, 1, 1, 1, 1, 1]

    @Test("chrony's SOCK samples carry leap 1 (insert) once NAV-TIMELS has announced an insertion less than 23 hours ahead, 0 before the announcement and before that window")
    func chronySocket() async throws {
        let folder = try makeTemporaryFolder("leap-sock")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.path + "/chrony.clk.gps0.sock"
        let chronyd = try SockSampleSocket(path: path, timeout: .seconds(10))
        let service = TimeService(devices: [.init(name: "gps0", receiverTimeSinks: [try ChronySocket(path: path)])],
                                  logger: Logger(label: "test")) { _, _ in }
        let running = Task { await service.run() }
        defer { running.cancel() }

        let samples = LeapAnnouncingReceiver.samples(of: stream)
        #expect(samples.count == expected.count)
        for sample in samples { service.offer(sample, of: "gps0") }
        var received: [Int32] = []
        for _ in samples {
            // chronyd's reading: each datagram within the socket's timeout (a bound, not a target).
            guard let datagram = chronyd.receive() else { break }
            #expect(datagram.size == 40 && datagram.sample.magic == 0x534f_434b)
            received.append(datagram.sample.leap)
        }
        #expect(received == expected.map(Int32.init))
    }

    @Test("the NTP shared-memory segment's leap is LEAP_ADDSECOND (1) from the same sample on, 0 before")
    func sharedMemory() throws {
        // A unit far above any ntpd's, removed afterwards.
        let unit = 4000 + Int(getpid() % 1000)
        let sink = try SharedMemoryRefclock(unit: unit)
        let attached = try AttachedSegment(unit: unit)
        defer { withExtendedLifetime(attached) {} }
        let segment = attached.segment
        var written: [Int32] = []
        for sample in LeapAnnouncingReceiver.samples(of: stream) {
            try sink.send(sample, precision: -1)
            #expect(segment.pointee.clockTimeStampSec == sample.real.seconds)
            written.append(segment.pointee.leap)
        }
        #expect(written == expected.map(Int32.init))
    }

    @Test("a warning outside June and December is not passed on, as gpsd's writers refuse it; a pulse's sample carries its receiver time's")
    func monthsAndPulses() {
        let december = WallTime(GPSTime(year: 2026, month: 12, day: 31, time: NMEATime(hour: 12, minute: 0, second: 0)))
        var sampler = ReceiverTimeSampler()
        func fix(_ time: WallTime) -> Fix {
            var fix = Fix()
            fix.mode = .threeDimensional
            fix.time = GPSTime(millisecondsSince1970: time.seconds * 1000)
            fix.leapSecondWarning = .insertion
            return fix
        }
        let march = december - .seconds(275 * 86_400)
        let inMarch = (0..<5).compactMap { sampler.sample(for: fix(march + .seconds($0)), readAt: march + .seconds($0)) }
        #expect(inMarch.count == 2 && inMarch.allSatisfy { $0.leap == .none })
        sampler.restart()
        let inDecember = (0..<5).compactMap { sampler.sample(for: fix(december + .seconds($0)), readAt: december + .seconds($0)) }
        #expect(inDecember.count == 2 && inDecember.allSatisfy { $0.leap == .insertion })

        var pairing = PulsePairing()
        pairing.note(inDecember[0])
        let pulse = pairing.pair(inDecember[0].clock + .milliseconds(900))
        #expect((try? pulse.get().leap) == .insertion)
    }

    @Test("at a warned day's end, the pulse of the inserted second is dropped (it has no number of its own) and, with a second deleted, the pulse after 23:59:58 marks midnight, with no warning left")
    func pulsesAtTheDaysEnd() {
        let midnight = WallTime(GPSTime(year: 2027, month: 1, day: 1, time: NMEATime(hour: 0, minute: 0, second: 0)))
        var pairing = PulsePairing()
        pairing.note(TimeSample(real: midnight - .seconds(1), clock: midnight - .milliseconds(900), leap: .insertion))
        #expect(pairing.pair(midnight) == .failure(.leapSecond))
        pairing.note(TimeSample(real: midnight - .seconds(2), clock: midnight - .milliseconds(1900), leap: .deletion))
        let afterDeletion = try? pairing.pair(midnight - .seconds(1)).get()
        // Midnight begins a new month: a warning carried there would be one for its end
        // (ntpd schedules a leap at the end of the month it is told in).
        #expect(afterDeletion?.real == midnight && afterDeletion?.leap == LeapSecondWarning.none)
        pairing.note(TimeSample(real: midnight - .seconds(1), clock: midnight - .milliseconds(900)))
        #expect((try? pairing.pair(midnight).get().real) == midnight, "no leap second, said: the next second, as always")
    }

    @Test("a receiver that cannot warn (NMEA): the pulse after 23:59:59 on the last day of June or December may be 23:59:60, and is dropped; on other days it marks midnight")
    func pulsesAtTheDaysEndUnwarned() {
        let newYear = WallTime(GPSTime(year: 2027, month: 1, day: 1, time: NMEATime(hour: 0, minute: 0, second: 0)))
        var pairing = PulsePairing()
        pairing.note(TimeSample(real: newYear - .seconds(1), clock: newYear - .milliseconds(900), leap: .unknown))
        #expect(pairing.pair(newYear) == .failure(.leapSecond))
        let december5 = WallTime(GPSTime(year: 2026, month: 12, day: 5, time: NMEATime(hour: 0, minute: 0, second: 0)))
        pairing.note(TimeSample(real: december5 - .seconds(1), clock: december5 - .milliseconds(900), leap: .unknown))
        #expect((try? pairing.pair(december5).get().real) == december5)
    }

    @Test("an NMEA receiver's samples say nothing is known of leap seconds in June and December, and chrony and ntpd are told none")
    func unwarnedSamples() throws {
        var fix = Fix()
        fix.mode = .threeDimensional
        var sampler = ReceiverTimeSampler()
        let december = WallTime(GPSTime(year: 2026, month: 12, day: 31, time: NMEATime(hour: 12, minute: 0, second: 0)))
        let samples = (0..<5).compactMap { offset -> TimeSample? in
            fix.time = GPSTime(millisecondsSince1970: (december.seconds + offset) * 1000)
            return sampler.sample(for: fix, readAt: december + .seconds(offset))
        }
        #expect(samples.count == 2 && samples.allSatisfy { $0.leap == .unknown })
        #expect(LeapSecondWarning.unknown.clockDisciplineValue == 0)
        #expect([LeapSecondWarning.none, .insertion, .deletion].map(\.clockDisciplineValue) == [0, 1, 2])
    }
}
