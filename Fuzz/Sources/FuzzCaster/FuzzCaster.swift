// libFuzzer target: what the caster reads from its clients and from the base, from the
// input: a request head (the first byte's low bit clear) or a users file (set), then the
// rest as RTCM 3 frames built around slices of the input (so their CRCs hold), noted in
// a stream summary at times the input chooses, and the source table written from it.
// Besides not crashing, it checks that the table has one STR line of 19 fields per
// mountpoint, ends with ENDSOURCETABLE, and keeps at most 64 message numbers.

import FuzzSupport
import NTRIPCasting
import ReceiverFraming

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCaster(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    guard let selector = input.first else { return 0 }
    let split = input.count > 1 ? 1 + Int(input[1]) % max(1, input.count - 1) : input.count
    let text = Array(input[1..<min(split, input.count)])
    if selector & 1 == 0 {
        if let end = CasterRequest.headEnd(in: text), let request = CasterRequest(head: text[..<end]) {
            _ = request.basicCredentials
        }
    } else if let users = try? CasterUsers(parsing: String(decoding: text, as: UTF8.self)), !users.isHashed("rover") {
        // Plain passwords only: a hash costs its deliberate time (up to minutes at cost 31).
        _ = users.accepts(user: "rover", password: String(decoding: text.suffix(8), as: UTF8.self))
    }

    var summary = RTCMStreamSummary()
    var rest = input[min(split, input.count)...]
    var time: UInt64 = 0
    while rest.count >= 3 {
        let length = Int(rest[rest.startIndex]) % 40 + 2
        time &+= UInt64(rest[rest.startIndex + 1]) * 250_000_000
        let message = Array(rest.dropFirst(2).prefix(length))
        rest = rest.dropFirst(2 + message.count)
        summary.note(frame(message), atNanoseconds: time)
    }
    precondition(summary.messages.count <= RTCMStreamSummary.maximumMessages, "\(summary.messages.count) message numbers kept")
    let table = CasterSourceTable(
        streams: [.init(mountpoint: "BASE", summary: summary, requiresAuthentication: selector & 2 != 0)], host: "127.0.0.1",
        port: 2101, generator: "fuzz"
    ).text
    let lines = table.split(separator: "\r\n", omittingEmptySubsequences: false)
    precondition(lines.last == "" && lines.dropLast().last == "ENDSOURCETABLE", "the table does not end with ENDSOURCETABLE")
    let fields = lines[0].split(separator: ";", omittingEmptySubsequences: false)
    precondition(fields.count == 19 && fields[0] == "STR", "an STR line of \(fields.count) fields: \(lines[0])")
    return 0
}

/// An RTCM 3 frame around `message`, its CRC-24Q computed.
private func frame(_ message: [UInt8]) -> [UInt8] {
    let body: [UInt8] = [0xD3, UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    let crc = CRC24Q.checksum(body)
    return body + [UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
}

/// The entry point SwiftPM links this executable under.
@_cdecl("FuzzCaster_main")
public func fuzzCasterMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzCaster(UnsafeRawPointer(data), size) }
}
