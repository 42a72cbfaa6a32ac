// libFuzzer target: u-blox streams through the receiver framer, the UBX decoders and the
// epoch assembler. Random bytes almost never make a frame whose checksum holds, so the
// input is read as a recipe: each record picks a message the decoders read (or any class
// and id), a payload length (at, below or past what the message needs, up to past the
// framer's limit) and what to do with the frame (checksum it, break its checksum, cut it
// short, or put NMEA text or noise before it). Besides not crashing, it checks:
// - the same stream fed whole and in chunks gives the same frames, updates and counters;
// - every UBX frame handed out has a checksum that holds, and each is counted once;
// - no frame that the recipe checksummed and kept whole is lost, whatever came before it;
// - every fix has its latitude in [-90, 90] and its longitude in [-180, 180].

import FuzzSupport
import GPSFix
import NMEA
import ReceiverFraming

/// What one pass over the stream produced.
struct Pass: Equatable {
    var frames: [[UInt8]] = []
    var updates: [LocationUpdate] = []
    var statistics = BinaryFramingStatistics()
}

/// Messages the assembler reads, so that most records reach a decoder.
let messages: [(UInt8, UInt8)] = [
    (0x01, 0x07), (0x01, 0x06), (0x01, 0x02), (0x01, 0x14), (0x01, 0x12), (0x01, 0x03), (0x01, 0x04), (0x01, 0x35),
    (0x01, 0x43), (0x01, 0x30), (0x01, 0x20), (0x01, 0x21), (0x01, 0x26), (0x01, 0x61), (0x28, 0x00), (0x0A, 0x04),
    (0x0D, 0x01), (0x05, 0x01), (0x01, 0x01),
]

/// The classes the framer accepts (u-blox's interface description lists these).
let ubxClasses: Set<UInt8> = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x09, 0x0A, 0x0B, 0x0D, 0x10, 0x13, 0x21, 0x27, 0x28, 0x29]

/// Builds the stream from the recipe; returns it with the frames that must come out.
func stream(from recipe: UnsafeRawBufferPointer) -> (bytes: [UInt8], kept: [[UInt8]]) {
    var bytes: [UInt8] = []
    var kept: [[UInt8]] = []
    var index = 0
    func next() -> UInt8 {
        defer { index += 1 }
        return index < recipe.count ? recipe[index] : 0
    }
    while index < recipe.count {
        let choice = next(), action = next(), lengthByte = next()
        let broken = action % 8 < 2
        // A broken frame keeps to the decoders' messages and has no sync byte in its
        // payload: what it covers is read again, and must hold no frame but the next ones.
        let (messageClass, id) = choice < 240 || broken ? messages[Int(choice) % messages.count] : (next(), next())
        // Mostly the sizes the decoders check, sometimes anything up to past 8 KiB.
        let length = lengthByte < 200 ? Int(lengthByte) : Int(lengthByte - 200) * 160
        var payload = [UInt8](repeating: 0, count: length)
        for position in payload.indices where index < recipe.count {
            let byte = next()
            payload[position] = broken && (byte == UBXFrame.sync1 || byte == 0xD3) ? 0 : byte
        }
        var frame = UBXFrame.encode(messageClass: messageClass, id: id, payload: payload)
        switch action % 8 {
        case 0: frame[frame.count - 1] &+= 1 + (action >> 3)  // a checksum that fails
        case 1:
            // Cut short, and followed by a byte other than the first one cut (and no sync
            // byte), so that what follows cannot make the frame whole again.
            let cut = frame.suffix(Int(action >> 3) % frame.count + 1)
            frame.removeLast(cut.count)
            frame.append(cut.first == 0 ? 1 : 0)
        case 2: bytes += Array("$GPGGA,1,2*7F\r\n".utf8)
        case 3: bytes += [0xB5, action, 0xD3, 0x00]  // false starts
        default: break
        }
        bytes += frame
        // A frame is certain to come out when it is whole, within the limit, and the
        // stream after the last certain frame cannot have swallowed it (each record
        // that precedes it is resolved before it: whole, or cut short and re-read).
        // (Only a frame of a length its message can have: the framer refuses others at
        // their header, as u-blox's layouts allow.)
        let message = UInt16(messageClass) << 8 | UInt16(id)
        if !broken, payload.count <= 8192, ubxClasses.contains(messageClass),
            UBXFrame.lengthIsPlausible(payload.count, for: message)
        {
            kept.append(frame)
        }
    }
    return (bytes, kept)
}

func decode(_ input: [UInt8], chunkSizes: [Int]) -> Pass {
    let decoder = ReceiverStreamDecoder(framing: .lenient)
    var pass = Pass()
    decoder.onBinaryFrame = { pass.frames.append(Array($0)) }
    input.withUnsafeBytes { all in
        var offset = 0
        var chunk = 0
        while offset < all.count {
            let size = chunkSizes.isEmpty ? all.count : max(1, chunkSizes[chunk % chunkSizes.count])
            let end = min(all.count, offset + size)
            decoder.feed(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { pass.updates.append($0) }
            offset = end
            chunk += 1
        }
    }
    decoder.finish { pass.updates.append($0) }
    pass.statistics = decoder.framer.binaryStatistics
    return pass
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUBX(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    // The first bytes choose the chunking, the rest is the recipe.
    let chunkSizes = input.prefix(4).map { Int($0 % 251) + 1 }
    let (bytes, kept) = stream(from: UnsafeRawBufferPointer(rebasing: input.dropFirst(min(4, input.count))))
    let whole = decode(bytes, chunkSizes: [])
    let chunked = decode(bytes, chunkSizes: chunkSizes)
    precondition(whole == chunked, "chunking changed the result")
    precondition(whole.statistics.bytes == bytes.count, "bytes counted \(whole.statistics.bytes) of \(bytes.count)")
    let ubx = whole.frames.filter { $0.first == UBXFrame.sync1 }
    let counted = whole.statistics[UBXFrameRule.self].frames
    precondition(ubx.count == counted, "UBX frames counted \(counted), handed out \(ubx.count)")
    for frame in ubx {
        precondition(frame.withUnsafeBytes { UBXFrame(validating: $0) } != nil, "a frame whose checksum fails let through")
    }
    // Every frame the recipe kept whole comes out, in order, among whatever else does;
    // unless bytes of broken frames and what follows them made a frame of their own by
    // chance (a checksum holds one time in 65,536), which may overlap a kept one.
    let byChance = ubx.contains { !kept.contains($0) }
    var found = ubx.makeIterator()
    for frame in kept where !byChance {
        var match = false
        while let next = found.next() {
            if next == frame {
                match = true
                break
            }
        }
        precondition(match, "a whole frame was lost: \(frame.prefix(6))")
    }
    for case .fix(let fix) in whole.updates {
        if let latitude = fix.latitude { precondition((-90...90).contains(latitude), "latitude \(latitude)") }
        if let longitude = fix.longitude { precondition((-180...180).contains(longitude), "longitude \(longitude)") }
    }
    return 0
}

/// The entry point SwiftPM links this executable under.
@_cdecl("FuzzUBX_main")
public func fuzzUBXMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzUBX(UnsafeRawPointer(data), size) }
}
