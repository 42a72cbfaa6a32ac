import Foundation
import GPSFix
import ReceiverDrivers
import ReceiverFraming
import Testing

@testable import DriverTSIP

@Suite("TSIP frames")
struct TSIPFrameRuleTests {
    /// The SMTx's first 0x8F-AB (from `trimble-smtx.log`): week 2085, 72888 s, UTC offset 18.
    static let primaryTiming: [UInt8] = [
        0x10, 0x8F, 0xAB, 0x00, 0x01, 0x1C, 0xB8, 0x08, 0x25, 0x00, 0x12, 0x00, 0x30, 0x0E, 0x14, 0x16, 0x0C, 0x07, 0xE3,
        0x10, 0x03,
    ]

    func frames(_ bytes: [UInt8]) -> (frames: [[UInt8]], refused: Int) {
        let framer = ReceiverFramer(rules: ReceiverFramer.standardRules() + [ReceiverFramer.Rule(TSIPFrameRule.self)])
        var found: [[UInt8]] = []
        bytes.withUnsafeBytes { chunk in
            framer.feed(chunk) { if case .binary(let frame) = $0 { found.append(Array(frame.bytes)) } }
        }
        return (found, framer.binaryStatistics[TSIPFrameRule.self].refused)
    }

    @Test("a packet from the SMTx holds, beside NMEA text")
    func receiversPacket() {
        let result = frames(Array("$GPTXT,01,01,01,ANTENNA OK*35\r\n".utf8) + Self.primaryTiming)
        #expect(result.frames == [Self.primaryTiming])
        #expect(result.refused == 0)
    }

    @Test("a DLE in the data is sent twice and counted once against the packet's length")
    func stuffedData() {
        // 0x46 health, two data bytes: the first a DLE.
        let health = TSIPFrameRule.frame(id: 0x46, data: [0x10, 0x00])
        #expect(health == [0x10, 0x46, 0x10, 0x10, 0x00, 0x10, 0x03])
        #expect(frames(health + Self.primaryTiming).frames == [health, Self.primaryTiming])
        // Three bytes unstuffed is no 0x46.
        #expect(frames(TSIPFrameRule.frame(id: 0x46, data: [0x10, 0x00, 0x01])).frames.isEmpty)
    }

    @Test("an id the driver does not read, or a known id of the wrong length, is refused")
    func refusals() {
        let unknown = frames([0x10, 0x40, 0x01, 0x10, 0x03] + Self.primaryTiming)
        #expect(unknown.frames == [Self.primaryTiming])
        #expect(unknown.refused >= 1)
        var short = Self.primaryTiming
        short.remove(at: 10)
        #expect(frames(short).frames.isEmpty)
        #expect(frames(TSIPFrameRule.frame(id: 0x8F, data: [0x99] + [UInt8](repeating: 0, count: 16))).frames.isEmpty)
    }

    @Test("TSIPv1: the length field and the XOR checksum are checked")
    func version1() {
        let status = TSIPFrameRule.version1Frame(id: 0xA3, sub: 0x00, data: [UInt8](repeating: 0, count: 16))
        #expect(frames(status).frames == [status])
        var corrupted = status
        corrupted[corrupted.count - 3] ^= 0x01
        #expect(frames(corrupted).frames.isEmpty)
        // One data byte fewer than the length field says, checksum recomputed.
        var body: [UInt8] = [0x00, 0x00, 0x13, 0x02] + [UInt8](repeating: 0, count: 15)
        body.append(body.reduce(0xA3, ^))
        #expect(frames(TSIPFrameRule.frame(id: 0xA3, data: body)).frames.isEmpty)
    }

    @Test("0x8F-AB decodes from the SMTx's bytes: week, time of week, UTC offset")
    func primaryTimingDecodes() throws {
        let data = Array(Self.primaryTiming[2..<(Self.primaryTiming.count - 2)])
        let timing = try #require(data.withUnsafeBytes { TSIPPrimaryTiming(FrameFields($0, bigEndian: true)) })
        #expect(timing.week == 2085)
        #expect(timing.timeOfWeek == 72888)
        #expect(timing.utcOffset == 18)
    }

    @Test("a packet shorter than its message is a counted decoding error, not a trap")
    func shortPacket() {
        let assembler = TSIPAssembler(AssemblyContext())
        var updates: [LocationUpdate] = []
        for packet in [
            TSIPFrameRule.frame(id: 0x8F, data: [0x20, 0x00, 0x01]), TSIPFrameRule.frame(id: 0x8F, data: [0xAC]),
            TSIPFrameRule.frame(id: 0x5C, data: [0x01]),
            TSIPFrameRule.version1Frame(id: 0xA1, sub: 0x11, data: [0x00, 0x02]),
        ] {
            packet.withUnsafeBytes { assembler.add($0) { updates.append($0) } }
        }
        assembler.flush { updates.append($0) }
        #expect(assembler.statistics.decodingErrors == 4)
        #expect(updates.isEmpty)
    }

    @Test("0x45 from the ResSMT360 names the software and hardware as gpsd 3.22 does")
    func softwareVersion() {
        let assembler = TSIPAssembler(AssemblyContext())
        let packet = TSIPFrameRule.frame(id: 0x45, data: [0x01, 0x05, 0x04, 0x03, 0x12, 0x03, 0x56, 0x02, 0x06, 0x12])
        packet.withUnsafeBytes { assembler.add($0) { _ in } }
        #expect(assembler.subtypes.subtype == "sw 1.5 18/04/2003 hw 3.86 18/02/2006")
        #expect(assembler.identityChanges == 1)
    }
}

/// Packets no capture holds (the Lassen iQ's 0x4A, 0x84, 0x56 and 0x47), built as the
/// Lassen iQ manual lays them out.
@Suite("TSIP position, velocity and signal-level packets")
struct TSIPSyntheticPacketTests {
    static func float(_ value: Float) -> [UInt8] { withUnsafeBytes(of: value.bitPattern.bigEndian) { Array($0) } }
    static func double(_ value: Double) -> [UInt8] { withUnsafeBytes(of: value.bitPattern.bigEndian) { Array($0) } }

    /// 0x41 for week 1403, 5073 s, UTC offset 14 (2006-11-26 01:24:19 UTC).
    static let gpsTime = TSIPFrameRule.frame(id: 0x41, data: float(5073) + [0x05, 0x7B] + float(14))

    func run(_ packets: [[UInt8]]) -> (fixes: [Fix], views: [SkyView], assembler: TSIPAssembler) {
        let assembler = TSIPAssembler(AssemblyContext())
        var updates: [LocationUpdate] = []
        for packet in packets { packet.withUnsafeBytes { assembler.add($0) { updates.append($0) } } }
        assembler.flush { updates.append($0) }
        let fixes = updates.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
        let views = updates.compactMap { if case .sky(let sky) = $0, !sky.satellites.isEmpty { sky } else { nil } }
        return (fixes, views, assembler)
    }

    @Test("0x84 and 0x56 of one time of fix make one fix with position and velocity")
    func positionAndVelocity() throws {
        let latitude = 53.5 * Double.pi / 180
        let longitude = -113.5 * Double.pi / 180
        let position = TSIPFrameRule.frame(
            id: 0x84, data: Self.double(latitude) + Self.double(longitude) + Self.double(950) + Self.double(0) + Self.float(5074))
        let velocity = TSIPFrameRule.frame(
            id: 0x56, data: Self.float(3) + Self.float(4) + Self.float(0.5) + Self.float(0) + Self.float(5074))
        let result = run([Self.gpsTime, position, velocity])
        let fix = try #require(result.fixes.last)
        #expect(fix.time == GPSTime(millisecondsSince1970: 1_164_504_260_000))
        #expect(abs((fix.latitude ?? 0) - 53.5) < 1e-9)
        #expect(abs((fix.longitude ?? 0) + 113.5) < 1e-9)
        #expect(fix.altitudeHAE == 950)
        #expect(fix.speed == 5)
        #expect(abs((fix.track ?? 0) - 36.8699) < 0.001)
        #expect(result.assembler.solutions == 1)
    }

    @Test("0x4A in single precision, and 0x47's level taken by the satellite of that PRN")
    func singlePrecisionAndLevels() throws {
        let position = TSIPFrameRule.frame(
            id: 0x4A,
            data: Self.float(Float(0.5)) + Self.float(Float(-1)) + Self.float(100) + Self.float(0) + Self.float(5074))
        // PRN 6 on channel 0, then PRN 9 on channel 1, signal 26, at 5074 s.
        func tracking(_ prn: UInt8, slot: UInt8) -> [UInt8] {
            TSIPFrameRule.frame(
                id: 0x5C,
                data: [prn, slot, 1, 19] + Self.float(26) + Self.float(5074) + Self.float(1) + Self.float(2) + [0, 0, 0, 1])
        }
        let levels = TSIPFrameRule.frame(id: 0x47, data: [1, 6] + Self.float(31))
        let result = run([Self.gpsTime, position, tracking(6, slot: 0x00), levels, tracking(9, slot: 0x08)])
        let fix = try #require(result.fixes.first { $0.latitude != nil })
        #expect(abs((fix.latitude ?? 0) - 0.5 * 180 / .pi) < 1e-5)
        #expect(result.views.count == 2)
        #expect(result.views.first?.satellites.map(\.snr) == [26])
        #expect(result.views.last?.satellites.map(\.identity.prn) == [6, 9])
        #expect(result.views.last?.satellites.map(\.snr) == [31, 26])
    }
}

/// TSIPv1's A1-11 as the RES 720's interface description lays it out: mask bit 1 says
/// the position is Earth-centred (metres), bit 3 that the velocity is.
@Suite("TSIPv1 positions")
struct TSIPVersion1PositionTests {
    /// A1-11, a 3D fix: `mask`, three doubles, three floats.
    static func position(mask: UInt8, _ a: Double, _ b: Double, _ c: Double, velocity: (Float, Float, Float)) -> [UInt8] {
        var data = [mask, 2]
        for value in [a, b, c] { data += TSIPSyntheticPacketTests.double(value) }
        for value in [velocity.0, velocity.1, velocity.2] { data += TSIPSyntheticPacketTests.float(value) }
        data += [UInt8](repeating: 0, count: 50 - data.count)
        return TSIPFrameRule.version1Frame(id: 0xA1, sub: 0x11, data: data)
    }

    @Test("an Earth-centred position and velocity (mask 0x0A): the place and the motion they are")
    func earthCentred() throws {
        // 48.1° N, 11.5° E, 500 m above the ellipsoid; moving 10 m/s east there.
        let east = (x: -sin(11.5 * Double.pi / 180) * 10, y: cos(11.5 * Double.pi / 180) * 10)
        let packet = Self.position(
            mask: 0x0A, 4_182_105.1215081774, 850_858.9034024683, 4_724_681.421027345,
            velocity: (Float(east.x), Float(east.y), 0))
        let timing = TSIPTimeTrustTests.version1Second(0, flags: 0x03)[0]
        let end = TSIPFrameRule.version1Frame(id: 0xA3, sub: 0x11, data: [UInt8](repeating: 0, count: 23))
        let fix = try #require(TSIPSyntheticPacketTests().run([timing, packet, end]).fixes.first { $0.latitude != nil })
        let (latitude, longitude) = (try #require(fix.latitude), try #require(fix.longitude))
        let (height, speed, track) = (try #require(fix.altitudeHAE), try #require(fix.speed), try #require(fix.track))
        #expect(abs(latitude - 48.1) < 1e-7 && abs(longitude - 11.5) < 1e-7)
        #expect(abs(height - 500) < 0.01)
        #expect(abs(speed - 10) < 0.01 && abs(track - 90) < 0.1)
    }
}

/// 0x46, the receiver's health: whether it is doing fixes (the Lassen iQ manual's codes).
@Suite("TSIP receiver health")
struct TSIPHealthTests {
    static func gpsTime(_ seconds: Float) -> [UInt8] {
        TSIPFrameRule.frame(id: 0x41, data: TSIPSyntheticPacketTests.float(seconds) + [0x05, 0x7B] + TSIPSyntheticPacketTests.float(14))
    }
    /// 0x6D: a 3D fix, no satellites listed.
    static let threeDimensional = TSIPFrameRule.frame(id: 0x6D, data: [0x04] + [1.5, 0.9, 1.2, 0.8].flatMap(TSIPSyntheticPacketTests.float))

    /// The modes of the fixes of three seconds, the health `status` sent in the second.
    static func modes(healthStatus status: UInt8) -> [FixMode] {
        let health = TSIPFrameRule.frame(id: 0x46, data: [status, 0x00])
        let result = TSIPSyntheticPacketTests().run([gpsTime(5073), threeDimensional, gpsTime(5074), health, gpsTime(5075)])
        return result.fixes.map(\.mode)
    }

    @Test("a status 0 after it gives the mode back; so does the next 0x6D")
    func healthRecovers() {
        let noFix = TSIPFrameRule.frame(id: 0x46, data: [0x08, 0x00])
        let fixing = TSIPFrameRule.frame(id: 0x46, data: [0x00, 0x00])
        let result = TSIPSyntheticPacketTests().run([
            Self.gpsTime(5073), Self.threeDimensional, Self.gpsTime(5074), noFix, Self.gpsTime(5075), fixing, Self.gpsTime(5076),
            noFix, Self.gpsTime(5077), Self.threeDimensional, Self.gpsTime(5078),
        ])
        #expect(result.fixes.map(\.mode).prefix(5) == [.threeDimensional, .noFix, .threeDimensional, .noFix, .threeDimensional])
    }

    @Test("no usable satellites, too few, PDOP too high, no GPS time yet: the fix ends with the report", arguments: [UInt8(0x08), 0x0A, 0x03, 0x01])
    func noFix(status: UInt8) {
        #expect(Self.modes(healthStatus: status).prefix(2) == [.threeDimensional, .noFix])
    }

    @Test("doing fixes, or a status the manuals do not list (a timing receiver's 0xBB): the mode stays", arguments: [UInt8(0x00), 0xBB])
    func modeStays(status: UInt8) {
        #expect(Self.modes(healthStatus: status).prefix(2) == [.threeDimensional, .threeDimensional])
    }
}

/// What a receiver sends is input: absurd values, and stray packets in another protocol's stream.
@Suite("TSIP from a receiver that lies")
struct TSIPHostileInputTests {
    @Test("a 0x41 whose UTC offset is 1e19 or -1e30 is no leap-second count, and no crash", arguments: [Float(1e19), -1e30])
    func absurdOffset(offset: Float) throws {
        let packet = TSIPFrameRule.frame(id: 0x41, data: TSIPSyntheticPacketTests.float(5073) + [0x05, 0x7B]
            + TSIPSyntheticPacketTests.float(offset))
        let result = TSIPSyntheticPacketTests().run([packet])
        let fix = try #require(result.fixes.first)
        #expect(fix.leapSeconds == nil)
    }

    @Test("a stray TSIP packet in an NMEA stream does not make the device a Trimble")
    func strayPacket() {
        let decoder = ReceiverStreamDecoder(drivers: ReceiverDrivers.all)
        // 0x46, receiver health: a packet TSIP's rule knows (so it is framed), no epoch.
        let stream = Array("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n".utf8)
            + TSIPFrameRule.frame(id: 0x46, data: [0x00, 0x00])
            + Array("$GPGGA,081413.000,5541.1959,N,03737.2894,E,1,5,4.87,66.2,M,14.5,M,,*69\r\n".utf8)
        stream.withUnsafeBytes { decoder.feed($0) { _ in } }
        #expect(decoder.framer.binaryStatistics[TSIPFrameRule.self].frames == 1)
        #expect(decoder.receiver.driver == "NMEA0183")
    }

    @Test("a stray GPS-time packet in an NMEA stream, which opens an epoch, does not make the device a Trimble either")
    func strayTimePacket() {
        let decoder = ReceiverStreamDecoder(drivers: ReceiverDrivers.all)
        func float(_ value: Float) -> [UInt8] { withUnsafeBytes(of: value.bitPattern.bigEndian, Array.init) }
        // 0x41: time of week 5073 s, week 2048, UTC offset 18 s.
        let stream = Array("$GPGGA,081412.000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,*6A\r\n".utf8)
            + TSIPFrameRule.frame(id: 0x41, data: float(5073) + [0x08, 0x00] + float(18))
            + Array("$GPGGA,081413.000,5541.1959,N,03737.2894,E,1,5,4.87,66.2,M,14.5,M,,*69\r\n".utf8)
        stream.withUnsafeBytes { decoder.feed($0) { _ in } }
        #expect(decoder.framer.binaryStatistics[TSIPFrameRule.self].frames == 1)
        #expect(decoder.receiver.driver == "NMEA0183")
        #expect(!decoder.receiver.readsBinary)
    }

    @Test("a stray DLE in an NMEA stream (a bit of a '0' lost) holds back no sentence: each is read with its own chunk")
    func strayEscape() {
        let decoder = ReceiverStreamDecoder(drivers: ReceiverDrivers.all)
        let start = WallTime(seconds: 1_800_000_000)
        var reads: [(fix: Int, read: WallTime?)] = []
        for second in 0..<5 {
            func sentence(_ body: String) -> String {
                body + String(format: "*%02X\r\n", body.utf8.dropFirst().reduce(UInt8(0), ^))
            }
            var chunk = Array(
                (sentence("$GPGGA,08141\(second).000,5541.1956,N,03737.2877,E,1,5,4.87,66.2,M,14.5,M,,")
                    + sentence("$GPRMC,08141\(second).000,A,5541.1956,N,03737.2877,E,0.0,0.0,261126,,,A")).utf8)
            if second == 1 { chunk.insert(0x10, at: 0) }
            decoder.readAt = WallTime(seconds: start.seconds + second)
            chunk.withUnsafeBytes { bytes in
                decoder.feed(bytes) { update in
                    guard case .fix(let fix) = update, let time = fix.time else { return }
                    reads.append((WallTime(time).seconds % 10, decoder.emittedFixReadAt))
                }
            }
            #expect(decoder.framer.nmea.statistics.sentences == 2 * (second + 1), "after the chunk of second \(second)")
        }
        #expect(reads.count >= 4)
        #expect(reads.allSatisfy { $0.read == WallTime(seconds: start.seconds + $0.fix) }, "\(reads)")
    }
}
