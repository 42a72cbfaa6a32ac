import DriverTSIP
import Foundation
import GPSFix
import GPSFixTime
import Logging
import ReceiverFraming
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Pulses no receiver sends here: no /dev/pps* exists and a pseudo-terminal has no carrier
/// detect line. Each edge is made at a wall-clock second's start less a sawtooth
/// quantisation error, as a u-blox receiver places its pulse on its oscillator's ticks.
struct SimulatedPulses: PulseSource {
    let error: @Sendable (Int) -> Duration
    var name: String { "simulated pulses" }

    func pulses() -> AsyncThrowingStream<PulseEdge, any Error> {
        let error = self.error
        return AsyncThrowingStream { continuation in
            let task = Task {
                while !Task.isCancelled {
                    let now = WallTime.systemNow()
                    try await Task.sleep(for: .nanoseconds(1_000_000_000 - now.nanoseconds))
                    let second = now.seconds + 1
                    continuation.yield(PulseEdge(time: WallTime(seconds: second) - error(second)))
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// The sawtooth: -20 to +20 ns, changing every second as a 48 MHz tick drifts past the second.
@Sendable func sawtooth(_ second: Int) -> Duration { .nanoseconds((second * 7) % 41 - 20) }

/// UBX-TIM-TP for the pulse of `second` (UTC time base), its quantisation error in picoseconds.
func timTP(second: Int, quantisationError: Duration) -> [UInt8] {
    let gps = second - 315_964_800
    var payload = [UInt8](repeating: 0, count: 16)
    func put<T: FixedWidthInteger>(_ offset: Int, _ value: T) {
        withUnsafeBytes(of: value.littleEndian) { payload.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }
    put(0, UInt32(gps % 604_800 * 1000))
    put(8, Int32(quantisationError.components.attoseconds / 1_000_000))
    put(12, UInt16(gps / 604_800))
    put(14, UInt8(0x03))  // UTC time base, UTC available
    return UBXFrame.encode(messageClass: 0x0D, id: 0x01, payload: payload)
}

/// Trimble's 0x8F-AB and 0x8F-AC for the pulse of `second` just past, as an SMT 360 sends
/// them after it: GPS time, 18 leap seconds, the time certain; the quantisation error in
/// nanoseconds at 0x8F-AC bytes 60-63.
func tsipTiming(second: Int, quantisationError: Duration) -> [UInt8] {
    let leapSeconds = 18
    let gps = second - 315_964_800 + leapSeconds
    let time = GPSTime(millisecondsSince1970: (second + leapSeconds) * 1000)
    func put<T: FixedWidthInteger>(_ value: T, at offset: Int, in data: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { data.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }
    var primary = [UInt8](repeating: 0, count: 17)
    primary[0] = 0xAB
    put(UInt32(gps % 604_800), at: 1, in: &primary)
    put(UInt16(gps / 604_800), at: 5, in: &primary)
    put(Int16(leapSeconds), at: 7, in: &primary)
    primary[9] = 0  // GPS time, pulse on GPS seconds, time set, UTC parameters known, from the satellites
    primary[10...13] = [time.time.second, time.time.minute, time.time.hour, UInt8(time.day)]
    primary[14] = UInt8(time.month)
    put(UInt16(time.year), at: 15, in: &primary)
    var supplemental = [UInt8](repeating: 0, count: 68)
    supplemental[0] = 0xAC
    supplemental[1] = 7  // overdetermined clock
    let nanoseconds = Double(quantisationError.components.attoseconds) / 1e9
    put(Float(nanoseconds).bitPattern, at: 60, in: &supplemental)
    return TSIPFrameRule.frame(id: 0x8F, data: primary) + TSIPFrameRule.frame(id: 0x8F, data: supplemental)
}

@Suite("A receiver's quantisation error (u-blox TIM-TP, Trimble 0x8F-AB/0x8F-AC and TSIPv1 A1-00), through the time service into chronyd", .serialized,
       .enabled(if: installedOrInCI(TestChronyd.isUsable), "needs root and chronyd (Debian chrony)"))
struct PulseCorrectionTests {
    @Test("simulated pulses paired with TIM-TP, or with TSIP's or TSIPv1's timing packets after them, reach chronyd at the seconds' true starts; uncorrected, they carry the sawtooth")
    func correction() async throws {
        let folder = try makeTemporaryFolder("qerr")
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o700)
        let configuration = """
            refclock SOCK \(folder.path)/raw.sock refid RAW poll 0 noselect
            refclock SOCK \(folder.path)/ubx.sock refid UBX poll 0 noselect
            refclock SOCK \(folder.path)/tsip.sock refid TSIP poll 0 noselect
            refclock SOCK \(folder.path)/tsip1.sock refid TSV1 poll 0 noselect
            bindcmdaddress \(folder.path)/chronyc.sock
            cmdport 0
            pidfile \(folder.path)/chronyd.pid
            """
        try configuration.write(to: folder.appendingPathComponent("chrony.conf"), atomically: true, encoding: .utf8)
        let chronyd = try RunningProcess(TestChronyd.executable, ["-x", "-d", "-u", "root", "-f", folder.appendingPathComponent("chrony.conf").path])
        defer { chronyd.stop() }
        try waitUntil("chronyd's sockets") { FileManager.default.fileExists(atPath: folder.appendingPathComponent("tsip1.sock").path) }

        let pulses = SimulatedPulses(error: sawtooth)
        let reports = Locked<[String: [TimeReport]]>([:])
        let service = TimeService(
            devices: try ["raw", "ubx", "tsip", "tsip1"].map { name in
                .init(name: name, pulseSinks: [try ChronySocket(path: folder.appendingPathComponent("\(name).sock").path)], pulses: pulses)
            },
            logger: Logger(label: "test")
        ) { report, device in reports.withLock { $0[device, default: []].append(report) } }
        let running = Task { await service.run() }
        defer { running.cancel() }

        // chronyd's sourcestats: refid → (samples, standard deviation in seconds).
        func statistics() throws -> (text: String, sources: [String: (samples: Int, deviation: Double)]) {
            let text = try run("/usr/bin/chronyc", ["-h", folder.appendingPathComponent("chronyc.sock").path, "-n", "-c", "sourcestats"])
            var sources: [String: (Int, Double)] = [:]
            // name,samples,runs,span,frequency,skew,offset,stddev
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: ",").map(String.init)
                if fields.count >= 8, let samples = Int(fields[1]), let value = Double(fields[7]) { sources[fields[0]] = (samples, value) }
            }
            return (text, sources)
        }

        // Each second, after its pulse: the receiver's time of that second, TIM-TP for the
        // next pulse and TSIP's timing packets for the one just past, decoded as the daemon
        // decodes them; until chronyd holds 6 samples of each (it keeps about 9; 40 s at
        // the most: a sanitised run is slower).
        let decoder = ReceiverStreamDecoder()
        let tsipDecoder = ReceiverStreamDecoder(drivers: [TSIPDriver.self])
        let version1Decoder = ReceiverStreamDecoder(drivers: [TSIPDriver.self])
        let refids = ["RAW", "UBX", "TSIP", "TSV1"]
        for round in 0..<40 {
            if round >= 10, let sources = try? statistics().sources, refids.allSatisfy({ (sources[$0]?.samples ?? 0) >= 6 }) {
                break
            }
            let now = WallTime.systemNow()
            try await Task.sleep(for: .nanoseconds(1_100_000_000 - now.nanoseconds))
            let second = now.seconds + 1
            for device in ["raw", "ubx", "tsip", "tsip1"] {
                service.offer(TimeSample(real: WallTime(seconds: second), clock: WallTime.systemNow()), of: device)
            }
            timTP(second: second + 1, quantisationError: sawtooth(second + 1)).withUnsafeBytes { bytes in
                decoder.feed(bytes) { update in
                    if case .nextPulse(let announcement) = update { service.offer(announcement, of: "ubx") }
                }
            }
            tsipTiming(second: second, quantisationError: sawtooth(second)).withUnsafeBytes { bytes in
                tsipDecoder.feed(bytes) { update in
                    if case .nextPulse(let announcement) = update { service.offer(announcement, of: "tsip") }
                }
            }
            tsipVersion1Timing(second: second, quantisationError: sawtooth(second)).withUnsafeBytes { bytes in
                version1Decoder.feed(bytes) { update in
                    if case .nextPulse(let announcement) = update { service.offer(announcement, of: "tsip1") }
                }
            }
        }
        let (text, sources) = try statistics()
        let raw = try #require(sources["RAW"]?.deviation, "chronyc sourcestats: \(text)")
        let ubx = try #require(sources["UBX"]?.deviation, "chronyc sourcestats: \(text)")
        let tsip = try #require(sources["TSIP"]?.deviation, "chronyc sourcestats: \(text)")
        let version1 = try #require(sources["TSV1"]?.deviation, "chronyc sourcestats: \(text)")
        #expect(refids.allSatisfy { (sources[$0]?.samples ?? 0) >= 6 }, "chronyc sourcestats: \(text)")
        print(String(format: "simulated pulses, chronyd's std dev: uncorrected %.1f ns, with TIM-TP's qErr %.1f ns, with TSIP's %.1f ns, TSIPv1's %.1f ns",
                     raw * 1e9, ubx * 1e9, tsip * 1e9, version1 * 1e9))
        #expect(raw > 4e-9, "the sawtooth reaches chronyd uncorrected: \(text)")
        #expect(ubx < raw / 4, "TIM-TP's correction removes it: \(text)")
        #expect(tsip < raw / 4, "0x8F-AC's correction, applied to the pulse 0x8F-AB timed, removes it: \(text)")
        // gpsd's PPS report carries the error applied, in picoseconds.
        #expect(version1 < raw / 4, "A1-00's correction, applied to the pulse it timed, removes it: \(text)")
        for device in ["ubx", "tsip", "tsip1"] {
            let applied = reports.withLock { $0[device, default: []].compactMap(\.quantisationError) }
            #expect(applied.count >= 8, "\(device)")
            #expect(applied.allSatisfy { $0 >= .nanoseconds(-20) && $0 <= .nanoseconds(20) }, "\(device)")
        }
    }
}

/// TSIPv1's A1-00 for the pulse of `second` just past, as a RES 720 sends it after the
/// pulse: GPS time base, time and UTC valid, 18 leap seconds, the quantisation error in
/// nanoseconds at bytes 18-21 (after the mode byte); `id sub lenHi lenLo mode data ck`, the
/// length counting mode, data and checksum, the checksum the XOR of id through data.
func tsipVersion1Timing(second: Int, quantisationError: Duration) -> [UInt8] {
    let leapSeconds = 18
    let gps = second - 315_964_800 + leapSeconds
    let time = GPSTime(millisecondsSince1970: (second + leapSeconds) * 1000)
    var data = [UInt8](repeating: 0, count: 30)
    func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeBytes(of: value.bigEndian) { data.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }
    put(UInt32(gps % 604_800), at: 0)
    put(UInt16(gps / 604_800), at: 4)
    data[6...10] = [time.time.hour, time.time.minute, time.time.second, UInt8(time.month), UInt8(time.day)]
    put(UInt16(time.year), at: 11)
    data[15] = 0x03  // time valid, UTC valid
    put(Int16(leapSeconds), at: 16)
    let nanoseconds = Double(quantisationError.components.attoseconds) / 1e9
    put(Float(nanoseconds).bitPattern, at: 18)
    let length = UInt16(1 + data.count + 1)
    var body: [UInt8] = [0x00, UInt8(length >> 8), UInt8(length & 0xFF), 0x02] + data
    body.append(body.reduce(0xA1, ^))
    return TSIPFrameRule.frame(id: 0xA1, data: body)
}
