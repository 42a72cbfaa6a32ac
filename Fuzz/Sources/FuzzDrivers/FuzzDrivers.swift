// libFuzzer target: every registered driver's frames through the receiver framer and the
// driver's assembler. Random bytes almost never make a frame that holds, so the input is
// read as a recipe: each record picks a protocol (CASIC, SiRF, Skytraq, TSIP, TSIPv1), a
// message (mostly one its assembler reads), a payload of any length taken from the input,
// and what to do with the frame (send it whole, cut it short, flip a byte, or send the
// payload as bare noise or text). The frames are built with each protocol's own envelope,
// so payload values of every size and sign reach the decoders. Besides not crashing, it checks:
// - the same stream fed whole and in chunks gives the same updates and counters;
// - every fix has its latitude in [-90, 90] and its longitude in [-180, 180], and leap
//   seconds only a receiver's GPS - UTC offset can be.

import DriverCASIC
import DriverSiRF
import DriverSkytraq
import DriverTSIP
import FuzzSupport
import GPSFix
import ReceiverDrivers
import ReceiverFraming

/// Messages each assembler reads, so that most records reach a decoder.
let casicMessages: [UInt8] = [0x00, 0x01, 0x03, 0x10, 0x20, 0x21, 0x22]
let sirfMessages: [UInt8] = [2, 4, 6, 7, 9, 10, 11, 12, 13, 27, 41, 52, 98, 255]
let skytraqMessages: [UInt8] = [0xA8, 0xDC, 0xDD, 0xDE, 0xDF, 0xE0, 0x80]
let tsipMessages: [UInt8] = [0x13, 0x1C, 0x41, 0x45, 0x46, 0x47, 0x4A, 0x4B, 0x54, 0x55, 0x56, 0x5C, 0x5D, 0x6C, 0x6D, 0x82, 0x84, 0x8F]
let tsipVersion1Messages: [(UInt8, UInt8)] = [(0xA1, 0x00), (0xA1, 0x11), (0xA2, 0x00), (0xA3, 0x00), (0xA3, 0x11), (0x90, 0x00)]

/// Builds the stream from the recipe.
func stream(from recipe: UnsafeRawBufferPointer) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = 0
    func next() -> UInt8 {
        defer { index += 1 }
        return index < recipe.count ? recipe[index] : 0
    }
    while index < recipe.count {
        let kind = next(), choice = next()
        let length = Int(next()) | Int(next() & 0x03) << 8
        let payload = (0..<length).map { _ in next() }
        let message = { (list: [UInt8]) in choice < 0xE0 ? list[Int(choice) % list.count] : choice }
        var frame: [UInt8]
        switch kind & 0x07 {
        case 0:
            frame = CASICFrameRule.frame(class: choice < 0xF0 ? 0x01 : choice & 0x0F, id: message(casicMessages),
                                         payload: Array(payload.prefix(payload.count & ~3)))
        case 1: frame = SiRFFrameRule.frame(payload: [message(sirfMessages)] + payload)
        case 2: frame = SkytraqFrameRule.frame(payload: [message(skytraqMessages)] + payload)
        case 3: frame = TSIPFrameRule.frame(id: message(tsipMessages), data: payload)
        case 4:
            let (id, sub) = tsipVersion1Messages[Int(choice) % tsipVersion1Messages.count]
            frame = TSIPFrameRule.version1Frame(id: id, sub: sub, data: payload)
        default:
            frame = payload
        }
        // The kind's upper bits spoil some frames: cut short, or one byte flipped.
        switch kind >> 6 {
        case 1 where frame.count > 1: frame.removeLast(1 + Int(choice) % (frame.count - 1))
        case 2 where !frame.isEmpty: frame[Int(choice) % frame.count] ^= 0x5A
        default: break
        }
        bytes += frame
    }
    return bytes
}

/// What one pass over the stream produced.
struct Pass: Equatable {
    var updates: [LocationUpdate] = []
    var statistics = BinaryFramingStatistics()
    var epochs: [Int] = []
}

func decode(_ bytes: [UInt8], chunkSize: Int) -> Pass {
    let decoder = ReceiverStreamDecoder(drivers: ReceiverDrivers.all)
    var pass = Pass()
    bytes.withUnsafeBytes { all in
        var start = 0
        while start < all.count {
            let end = min(start + chunkSize, all.count)
            decoder.feed(UnsafeRawBufferPointer(rebasing: all[start..<end])) { pass.updates.append($0) }
            start = end
        }
    }
    decoder.finish { pass.updates.append($0) }
    pass.statistics = decoder.framer.binaryStatistics
    decoder.driverStatistics { _, statistics in pass.epochs.append(statistics.epochs) }
    return pass
}

@_cdecl("FuzzDrivers_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in
        guard let data, size > 1 else { return 0 }
        let recipe = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
        let bytes = stream(from: recipe)
        let whole = decode(bytes, chunkSize: max(bytes.count, 1))
        let chunked = decode(bytes, chunkSize: Int(data[0] % 64) + 1)
        precondition(whole == chunked, "the stream's chunking changed what was decoded")
        for case .fix(let fix) in whole.updates {
            if let latitude = fix.latitude { precondition((-90...90).contains(latitude), "latitude \(latitude)") }
            if let longitude = fix.longitude { precondition((-180...180).contains(longitude), "longitude \(longitude)") }
            if let leap = fix.leapSeconds { precondition(ValueRanges.receiverLeapSeconds.contains(leap), "leap seconds \(leap)") }
        }
        return 0
    }
}
