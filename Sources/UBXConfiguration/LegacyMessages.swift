import ReceiverFraming

/// The configuration messages of receivers before protocol 27 (LEA-5/6, M8): each sets
/// one part of the configuration in RAM and is acknowledged. Where a message sets more
/// than is asked (a port, a time pulse, the constellations), the receiver's own is polled
/// first and only the asked fields change.
public enum LegacyMessages {
    /// UBX-CFG-PRT.
    public static let port: UInt16 = 0x0600
    /// UBX-CFG-MSG.
    public static let messageRate: UInt16 = 0x0601
    /// UBX-CFG-RST.
    public static let reset: UInt16 = 0x0604
    /// UBX-CFG-RATE.
    public static let rate: UInt16 = 0x0608
    /// UBX-CFG-CFG.
    public static let saveLoad: UInt16 = 0x0609
    /// UBX-CFG-NAV5.
    public static let navigation: UInt16 = 0x0624
    /// UBX-CFG-TP5.
    public static let timePulse: UInt16 = 0x0631
    /// UBX-CFG-GNSS.
    public static let constellations: UInt16 = 0x063E
    /// UBX-CFG-TMODE2.
    public static let timingMode2: UInt16 = 0x063D
    /// UBX-CFG-TMODE3.
    public static let timingMode3: UInt16 = 0x0671

    /// A frame of `message` (class and id) with `payload`; an empty payload polls.
    public static func frame(_ message: UInt16, _ payload: [UInt8] = []) -> [UInt8] {
        UBXFrame.encode(messageClass: UInt8(message >> 8), id: UInt8(message & 0xFF), payload: payload)
    }

    /// CFG-MSG: `message`'s rate on the port the frame arrives on, per navigation solution.
    public static func setRate(of message: OutputMessage, to rate: UInt8) -> [UInt8] {
        setRate(of: message.classAndID, to: rate)
    }

    /// CFG-MSG: the rate of the message of class and id `message` on the port the frame
    /// arrives on.
    public static func setRate(of message: (UInt8, UInt8), to rate: UInt8) -> [UInt8] {
        frame(messageRate, [message.0, message.1, rate])
    }

    /// CFG-NAV5 that changes the dynamic model only (mask bit 0).
    public static func setDynamicModel(_ model: DynamicModel) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: 36)
        payload[0] = 0x01
        payload[2] = model.code
        return frame(navigation, payload)
    }

    /// CFG-TMODE3's payload (protocol 20 on) from `current` with `mode`: off, survey-in, or
    /// a fixed position in degrees and metres to 1e-9° and 0.1 mm; the rest as it was.
    public static func timingMode3(_ mode: TimingMode, from current: [UInt8]) -> [UInt8] {
        var payload = Array(current.prefix(40))
        payload[2] = 0
        payload[3] &= ~0x01
        switch mode {
        case .navigate: break
        case .surveyIn(let seconds, let metres):
            payload[2] = 1
            payload.put(seconds, at: 24)
            payload.put(UInt32(clamping: Int((metres * 1e4).rounded())), at: 28)
        case .fixed(let latitude, let longitude, let height):
            payload[2] = 2
            payload[3] |= 0x01  // LLA: latitude, longitude and height rather than ECEF
            let (lat, latHP) = TimingMode.split(degrees: latitude)
            let (lon, lonHP) = TimingMode.split(degrees: longitude)
            let (alt, altHP) = TimingMode.split(metres: height)
            payload.put(UInt32(bitPattern: lat), at: 4)
            payload.put(UInt32(bitPattern: lon), at: 8)
            payload.put(UInt32(bitPattern: alt), at: 12)
            payload[16] = UInt8(bitPattern: latHP)
            payload[17] = UInt8(bitPattern: lonHP)
            payload[18] = UInt8(bitPattern: altHP)
        }
        return payload
    }

    /// CFG-TMODE2's payload (timing receivers) from `current` with `mode`: a fixed position
    /// to 1e-7° and 1 cm, survey-in accuracy in mm; the rest as it was.
    public static func timingMode2(_ mode: TimingMode, from current: [UInt8]) -> [UInt8] {
        var payload = Array(current.prefix(28))
        payload[0] = 0
        payload[2] &= ~0x01
        switch mode {
        case .navigate: break
        case .surveyIn(let seconds, let metres):
            payload[0] = 1
            payload.put(seconds, at: 20)
            payload.put(UInt32(clamping: Int((metres * 1e3).rounded())), at: 24)
        case .fixed(let latitude, let longitude, let height):
            payload[0] = 2
            payload[2] |= 0x01  // LLA
            payload.put(UInt32(bitPattern: Int32((latitude * 1e7).rounded())), at: 4)
            payload.put(UInt32(bitPattern: Int32((longitude * 1e7).rounded())), at: 8)
            payload.put(UInt32(bitPattern: Int32((height * 100).rounded())), at: 12)
        }
        return payload
    }

    /// CFG-CFG that saves the whole current configuration to battery-backed RAM, and with
    /// `toFlash` to flash too.
    public static func save(toFlash: Bool) -> [UInt8] {
        frame(saveLoad, [0, 0, 0, 0, 0x1F, 0x1F, 0, 0, 0, 0, 0, 0, toFlash ? 0x03 : 0x01])
    }

    /// CFG-CFG that clears every saved setting and loads the defaults, in battery-backed
    /// RAM and flash.
    static let restoreDefaults = frame(saveLoad, [0x1F, 0x1F, 0, 0, 0, 0, 0, 0, 0x1F, 0x1F, 0, 0, 0x03])

    /// CFG-RST: a restart with `navBbrMask` of the navigation data cleared (hot 0, warm 1,
    /// cold 0xFFFF) and `resetMode` (0x00 a hardware reset at once, 0x01 a controlled
    /// software reset, 0x02 of the GNSS only).
    public static func restart(navBbrMask: UInt16, resetMode: UInt8) -> [UInt8] {
        frame(reset, [UInt8(navBbrMask & 0xFF), UInt8(navBbrMask >> 8), resetMode, 0])
    }
}

extension [UInt8] {
    /// Writes `value` little-endian at `offset`.
    mutating func put(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { self[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(index * 8)) }
    }

    mutating func put(_ value: UInt16, at offset: Int) {
        self[offset] = UInt8(value & 0xFF)
        self[offset + 1] = UInt8(value >> 8)
    }

    func u16(_ offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    func u32(_ offset: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(self[offset + $1]) << UInt32($1 * 8) } }
    func i32(_ offset: Int) -> Int32 { Int32(bitPattern: u32(offset)) }
}
