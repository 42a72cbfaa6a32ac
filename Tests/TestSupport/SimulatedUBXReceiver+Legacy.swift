import Foundation

/// The M8's legacy configuration messages (u-blox M8 receiver description, UBX-13003221):
/// an empty payload polls (CFG-TP5 and CFG-PRT also take an index), a full one sets; polls
/// are answered, then acknowledged, as every CFG message is.
extension ReceiverState {
    mutating func legacy(_ id: UInt8, _ payload: [UInt8]) -> [ReceiverAnswer] {
        switch id {
        case 0x00: port(payload)
        case 0x01: messageRate(payload)
        case 0x08: rate(payload)
        case 0x24: navigation(payload)
        case 0x31: timePulse(payload)
        case 0x3E: constellations(payload)
        case 0x3D: timingMode(payload)
        default: [nak(id)]
        }
    }

    private mutating func reply(_ id: UInt8, _ payload: [UInt8]) -> [ReceiverAnswer] {
        [.bytes(ubx(UBXWire.frame(0x06, id, payload))), ack(id)]
    }

    private func value(_ key: UInt32) -> UInt64 { ram[key] ?? 0 }
    private static func u16(_ p: [UInt8], _ offset: Int) -> UInt64 { UInt64(p[offset]) | UInt64(p[offset + 1]) << 8 }
    private static func u32(_ p: [UInt8], _ offset: Int) -> UInt64 { (0..<4).reduce(0) { $0 | UInt64(p[offset + $1]) << UInt64($1 * 8) } }
    private static func le(_ value: UInt64, _ count: Int) -> [UInt8] { littleEndian(value, count) }

    /// CFG-PRT of UART1, the only port modelled: 8N1, UBX and NMEA in.
    private mutating func port(_ p: [UInt8]) -> [ReceiverAnswer] {
        switch p.count {
        case 0, 1:
            guard p.first ?? 1 == 1 else { return [nak(0x00)] }
            let out = value(Self.uart1UBX) | value(Self.uart1NMEA) << 1
            return reply(0x00, [1, 0, 0, 0] + Self.le(0x8D0, 4) + Self.le(UInt64(speed), 4) + Self.le(0x07, 2) + Self.le(out, 2) + [0, 0, 0, 0])
        case 20:
            guard p[0] == 1 else { return [nak(0x00)] }
            let out = Self.u16(p, 14)
            return apply([Self.uart1Speed: Self.u32(p, 8), Self.uart1UBX: out & 1, Self.uart1NMEA: out >> 1 & 1], id: 0x00)
        default: return [nak(0x00)]
        }
    }

    /// CFG-MSG: class and id polls the rates on each port; a third byte sets this port's,
    /// six more set each port's.
    private mutating func messageRate(_ p: [UInt8]) -> [ReceiverAnswer] {
        guard p.count >= 2 else { return [nak(0x01)] }
        let key = Self.outputKeys[UInt16(p[0]) << 8 | UInt16(p[1])] ?? (0x0F00_0000 | UInt32(p[0]) << 8 | UInt32(p[1]))
        switch p.count {
        case 2: return reply(0x01, [p[0], p[1], 0, UInt8(value(key)), 0, 0, 0, 0])
        case 3: return apply([key: UInt64(p[2])], id: 0x01)
        case 8: return apply([key: UInt64(p[3])], id: 0x01)
        default: return [nak(0x01)]
        }
    }

    private mutating func rate(_ p: [UInt8]) -> [ReceiverAnswer] {
        switch p.count {
        case 0: return reply(0x08, Self.le(value(Self.measurementRate), 2) + Self.le(value(Self.navigationRate), 2) + Self.le(1, 2))
        case 6:
            guard Self.u16(p, 2) >= 1 else { return [nak(0x08)] }
            return apply([Self.measurementRate: Self.u16(p, 0), Self.navigationRate: Self.u16(p, 2)], id: 0x08)
        default: return [nak(0x08)]
        }
    }

    /// CFG-NAV5: only the dynamic model (mask bit 0) is modelled; the rest reads as zeros.
    private mutating func navigation(_ p: [UInt8]) -> [ReceiverAnswer] {
        switch p.count {
        case 0: return reply(0x24, [0xFF, 0x05, UInt8(value(Self.dynamicModel))] + [UInt8](repeating: 0, count: 33))
        case 36: return p[0] & 0x01 != 0 ? apply([Self.dynamicModel: UInt64(p[2])], id: 0x24) : [ack(0x24)]
        default: return [nak(0x24)]
        }
    }

    /// CFG-TP5 of TIMEPULSE (index 0), version 1, defined by period and length in µs.
    private mutating func timePulse(_ p: [UInt8]) -> [ReceiverAnswer] {
        switch p.count {
        case 0, 1:
            guard p.first ?? 0 == 0 else { return [nak(0x31)] }
            let flags: UInt64 = value(Self.pulseEnabled) | 0x02 | value(Self.pulseUsesLocked) << 2 | 0x10 | 0x20 | 0x40
            return reply(
                0x31,
                [0, 1, 0, 0, 50, 0, 0, 0] + Self.le(value(Self.pulsePeriod), 4) + Self.le(value(Self.pulsePeriodLocked), 4)
                    + Self.le(value(Self.pulseLength), 4) + Self.le(value(Self.pulseLengthLocked), 4) + Self.le(0, 4)
                    + Self.le(flags, 4))
        case 32:
            let flags = Self.u32(p, 28)
            guard p[0] == 0, flags & 0x08 == 0, flags & 0x10 != 0 else { return [nak(0x31)] }  // modelled: period and length only
            return apply(
                [
                    Self.pulseEnabled: flags & 1, Self.pulseUsesLocked: flags >> 2 & 1, Self.pulsePeriod: Self.u32(p, 8),
                    Self.pulsePeriodLocked: Self.u32(p, 12), Self.pulseLength: Self.u32(p, 16), Self.pulseLengthLocked: Self.u32(p, 20),
                ], id: 0x31)
        default: return [nak(0x31)]
        }
    }

    /// CFG-GNSS: seven systems on 32 channels; a write changes the enable bits.
    private mutating func constellations(_ p: [UInt8]) -> [ReceiverAnswer] {
        let channels: [(UInt8, UInt8, UInt8)] = [(0, 8, 16), (1, 1, 3), (2, 4, 8), (3, 8, 16), (4, 0, 8), (5, 0, 3), (6, 8, 14)]
        switch p.count {
        case 0:
            var payload: [UInt8] = [0, 32, 32, UInt8(channels.count)]
            for (id, reserved, maximum) in channels {
                let enabled = Self.systems.first { $0.gnssID == id }.map { value($0.key) } ?? 0
                payload += [id, reserved, maximum, 0] + Self.le(enabled | 0x01_0000, 4)
            }
            return reply(0x3E, payload)
        case let count where count >= 4 && count == 4 + 8 * Int(p[3]):
            var values: [UInt32: UInt64] = [:]
            for block in 0..<Int(p[3]) {
                let offset = 4 + 8 * block
                if let key = Self.systems.first(where: { $0.gnssID == p[offset] })?.key { values[key] = Self.u32(p, offset + 4) & 1 }
            }
            return apply(values, id: 0x3E)
        default: return [nak(0x3E)]
        }
    }

    /// CFG-TMODE2 (the timing firmware's): off, survey-in, or fixed in latitude, longitude
    /// and height (1e-7° and cm: no high-precision part); accuracies in mm.
    private mutating func timingMode(_ p: [UInt8]) -> [ReceiverAnswer] {
        let keys: [UInt32] = [0x4003_0009, 0x4003_000A, 0x4003_000B]
        switch p.count {
        case 0:
            var payload: [UInt8] = [UInt8(value(Self.timingMode)), 0, UInt8(value(0x2003_0002)), 0]
            for key in keys { payload += Self.le(value(key), 4) }
            // The model keeps accuracies in 0.1 mm, as the configuration interface does.
            for key: UInt32 in [0x4003_000F, 0x4003_0010, 0x4003_0011] {
                payload += Self.le(key == 0x4003_0010 ? value(key) : value(key) / 10, 4)
            }
            return reply(0x3D, payload)
        case 28:
            guard p[0] <= 2 else { return [nak(0x3D)] }
            var values: [UInt32: UInt64] = [
                Self.timingMode: UInt64(p[0]), 0x2003_0002: UInt64(p[2] & 1), 0x4003_000F: Self.u32(p, 16) * 10,
                0x4003_0010: Self.u32(p, 20), 0x4003_0011: Self.u32(p, 24) * 10,
                0x2003_000C: 0, 0x2003_000D: 0, 0x2003_000E: 0,
            ]
            for (index, key) in keys.enumerated() { values[key] = Self.u32(p, 4 + 4 * index) }
            return apply(values, id: 0x3D)
        default: return [nak(0x3D)]
        }
    }
}
