import DriverSiRF
import GPSFix

/// A SiRF frame around `payload`: `A0 A2`, length, payload, 15-bit sum, `B0 B3`.
func sirfFrame(_ payload: [UInt8]) -> [UInt8] {
    let sum = payload.reduce(0) { $0 + Int($1) } & 0x7FFF
    return [0xA0, 0xA2, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
        + [UInt8(sum >> 8), UInt8(sum & 0xFF), 0xB0, 0xB3]
}

/// Bytes from hexadecimal text.
func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).map {
        UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) ?? 0
    }
}

/// The first MID 2 of `bu303-stillfix.log` (offset 541), whole: 2005-06-09, week 302
/// (ten bits), a 3D fix of five satellites.
let bu303Navigation = bytes(
    hex: "a0a200290200428b070008d71c0046428affff00000000040c02012e025f683405080a04021b000000000000000657b0b3")

/// Updates from frames fed one by one to a fresh assembler.
func assemble(_ frames: [[UInt8]], assembler: SiRFAssembler = SiRFAssembler()) -> [LocationUpdate] {
    var updates: [LocationUpdate] = []
    for frame in frames {
        frame.withUnsafeBytes { assembler.add($0) { updates.append($0) } }
    }
    assembler.flush { updates.append($0) }
    return updates
}

extension LocationUpdate {
    var fix: Fix? { if case .fix(let fix) = self { fix } else { nil } }
    var sky: SkyView? { if case .sky(let sky) = self { sky } else { nil } }
}
