import GPSFix

extension TSIPAssembler {
    /// The receiver's identity, as gpsd 3.22 prints DEVICE's subtypes: 0x45 (software
    /// version) gives `subtype` until 0x1C-81 (firmware) replaces it; 0x1C-83 (hardware)
    /// gives `subtype1`, serial number included (current gpsd leaves it out).
    func readIdentity(id: UInt8, _ data: FrameFields) {
        var subtype = subtypes.subtype
        var subtype1 = subtypes.subtype1
        switch (id, data.u8(0)) {
        case (0x45, _):
            // gpsd reads byte 3 as the year and byte 4 as the day (the manual: day, year).
            guard let b0 = data.u8(0), let b1 = data.u8(1), let b2 = data.u8(2), let b3 = data.u8(3),
                let b4 = data.u8(4), let h0 = data.u8(5), let h1 = data.u8(6), let h2 = data.u8(7),
                let h3 = data.u8(8), let h4 = data.u8(9)
            else { return countUndecoded() }
            let software = "sw \(b0).\(b1) \(Self.two(b4))/\(Self.two(b2))/\(2000 + Int(b3))"
            subtype = software + " hw \(h0).\(h1) \(Self.two(h4))/\(Self.two(h2))/\(2000 + Int(h3))"
        case (0x1C, 0x81):
            guard let major = data.u8(2), let minor = data.u8(3), let build = data.u8(4), let month = data.u8(5),
                let day = data.u8(6), let year = data.u16(7), let name = Self.text(data, lengthAt: 9)
            else { return countUndecoded() }
            subtype = "fw \(major).\(minor) \(build) \(Self.two(day))/\(Self.two(month))/\(year) \(name)"
        case (0x1C, 0x83):
            guard let serial = data.u32(1), let day = data.u8(5), let month = data.u8(6), let year = data.u16(7),
                let hour = data.u8(9), let code = data.u16(10), let name = Self.text(data, lengthAt: 12)
            else { return countUndecoded() }
            subtype1 = "hw \(serial) \(Self.two(day))/\(Self.two(month))/\(year) \(hour) \(code) \(name)"
        default:
            // 0x4B, the machine id, names nothing gpsd 3.22 reports once 0x45 or 0x1C have.
            return
        }
        if subtype != subtypes.subtype || subtype1 != subtypes.subtype1 {
            subtypes = (subtype, subtype1)
            identityChanges &+= 1
        }
    }

    private func countUndecoded() { reports.statistics.decodingErrors += 1 }

    private static func two(_ value: UInt8) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// A string of printable ASCII sent after its length byte at `offset`.
    private static func text(_ data: FrameFields, lengthAt offset: Int) -> String? {
        guard let length = data.u8(offset), data.holds(Int(length), at: offset + 1) else { return nil }
        var characters = ""
        for index in 0..<Int(length) {
            let byte = data.bytes[offset + 1 + index]
            if byte >= 0x20 && byte < 0x7F { characters.unicodeScalars.append(Unicode.Scalar(byte)) }
        }
        return characters
    }
}
