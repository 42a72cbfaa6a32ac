/// GSA: the fix type, the satellites used in the solution, and the DOPs.
///
/// The number of satellite fields varies: 12 in the standard, more from some receivers
/// (24 from the CH-4701). NMEA 4.10 appends a system id after VDOP; a GSA with exactly
/// 18 data fields is read as 12 satellites plus a system id, any other count as
/// satellites followed by the three DOPs.
public struct GSA: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 5

    public var talker: Talker?
    /// `A` automatic or `M` manual 2D/3D selection.
    public var selectionMode: UInt8?
    /// 1 no fix, 2 2D, 3 3D.
    public var fixType: Int?
    /// The ids of the satellites used, in the talker's numbering, empty fields left out
    /// (at most 32 are kept).
    public var satellites = InlineList<32, UInt16>(placeholder: 0)
    public var pdop: NMEADecimal?
    public var hdop: NMEADecimal?
    public var vdop: NMEADecimal?
    /// NMEA 4.10 GNSS system id (1 GPS, 2 GLONASS, 3 Galileo, 4 BeiDou, 5 QZSS, 6 NavIC).
    public var systemID: Int?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        talker = fields.sentence.address.talker
        let dataFields = fields.sentence.fieldCount - 1
        let hasSystemID = dataFields == 18
        let satelliteFields = dataFields - 5 - (hasSystemID ? 1 : 0)
        selectionMode = try fields.character()
        fixType = try fields.integer()
        for _ in 0..<satelliteFields {
            if let id = try fields.integer(in: 0...999) { satellites.append(UInt16(id)) }
        }
        pdop = try fields.decimal()
        hdop = try fields.decimal()
        vdop = try fields.decimal()
        // SiRF's BeiDou receivers put a decimal there (`...,2.1,1.1,1.8,1.2`): no system id
        // is said then, and the DOPs before it still stand.
        if hasSystemID { systemID = (try? fields.hexadecimal()) ?? nil }
    }
}

/// GSV: one part of the satellites-in-view report, up to four satellites per sentence.
///
/// NMEA 4.10 adds a signal id after the last satellite. It is recognised only when the
/// fields after the three-field header number 4n + 1, so a pre-4.10 GSV with four
/// satellites is never misread as having one. In Quectel's `PQGSV` that one field is a
/// system id instead (the LC79D); the EG25-G sends both, the signal id then the system
/// id (4n + 2 fields).
public struct GSV: SentenceDecodable, Hashable, Sendable {
    public static let minimumFieldCount = 3

    /// One satellite in view, in the standard's whole units (a receiver's fraction is rounded).
    public struct Satellite: Hashable, Sendable {
        /// The id in the talker's numbering (GPS 1-32, SBAS 33-64, GLONASS 65-96, ...).
        public var id: UInt16
        /// Degrees above the horizon.
        public var elevation: Int16?
        /// Degrees from true north.
        public var azimuth: Int16?
        /// Signal to noise ratio, dB-Hz; `nil` when not tracked.
        public var snr: Int16?

        public init(id: UInt16, elevation: Int16? = nil, azimuth: Int16? = nil, snr: Int16? = nil) {
            self.id = id
            self.elevation = elevation
            self.azimuth = azimuth
            self.snr = snr
        }
    }

    public var talker: Talker?
    public var messageCount: Int?
    /// 1-based number of this sentence in its group.
    public var messageNumber: Int?
    public var satellitesInView: Int?
    public var satellites = InlineList<4, Satellite>(placeholder: Satellite(id: 0))
    /// NMEA 4.11 signal id (which band: L1 C/A, L5, E1, ...), hexadecimal on the wire.
    public var signalID: Int?
    /// The system id Quectel's `PQGSV` carries (4 BeiDou, 5 QZSS): where NMEA 4.11 has
    /// the signal id (the LC79D), or after it (the EG25-G); `nil` for every other talker.
    public var systemID: Int?

    @inline(__always)
    public init(fields: inout FieldCursor) throws(NMEADecodingError) {
        talker = fields.sentence.address.talker
        messageCount = try fields.integer()
        messageNumber = try fields.integer()
        satellitesInView = try fields.integer()
        let satelliteFields = fields.remaining
        // After the satellites: NMEA 4.11's signal id (4n + 1 fields), or Quectel's
        // signal id and system id (4n + 2, `PQGSV` from the EG25-G).
        let trailingFields = satelliteFields % 4 == 1 ? 1 : talker == .quectel && satelliteFields % 4 == 2 ? 2 : 0
        let groupFields = satelliteFields - trailingFields
        let groups = min(4, (groupFields + 3) / 4)
        for _ in 0..<groups {
            let id = try fields.integer(in: 0...999)
            let elevation = try fields.wholeNumber(in: -90...90)
            let azimuth = try fields.wholeNumber(in: 0...360)
            let snr = try fields.wholeNumber(in: 0...99)
            if let id { satellites.append(Satellite(id: UInt16(id), elevation: elevation, azimuth: azimuth, snr: snr)) }
        }
        guard trailingFields > 0 else { return }
        fields.skip(groupFields - 4 * groups)
        switch (trailingFields, talker) {
        case (1, .quectel?): systemID = try fields.hexadecimal()  // the LC79D: a system id alone
        case (1, _): signalID = try fields.hexadecimal()
        default:
            signalID = try fields.hexadecimal()
            systemID = try fields.hexadecimal()
        }
    }

    /// Whether this is the last sentence of its group.
    public var isLast: Bool {
        guard let messageCount, let messageNumber else { return true }
        return messageNumber >= messageCount
    }
}

extension FieldCursor {
    /// A number rounded half away from zero to a whole one in `range`: GSV's elevation,
    /// azimuth and SNR, which some receivers send with a fraction (`45.6`).
    ///
    /// Read digit by digit rather than through ``NMEADecimal``: GSV is a third of what
    /// receivers send, and these three fields are most of every GSV. The common case,
    /// two or three plain digits, is read here, inline and without a loop; anything else
    /// goes to ``wholeNumber(_:field:in:)``.
    @inline(__always)
    mutating func wholeNumber(in range: ClosedRange<Int16>) throws(NMEADecodingError) -> Int16? {
        let field = index
        let bytes = raw()
        guard let cursor = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return nil }
        if bytes.count == 2 || bytes.count == 3 {
            let first = Int(cursor[0] &- UInt8(ascii: "0"))
            let second = Int(cursor[1] &- UInt8(ascii: "0"))
            let third = bytes.count == 3 ? Int(cursor[2] &- UInt8(ascii: "0")) : 0
            let value = bytes.count == 3 ? first &* 100 &+ second &* 10 &+ third : first &* 10 &+ second
            if first | second | third < 10, value >= Int(range.lowerBound), value <= Int(range.upperBound) {
                return Int16(value)
            }
        }
        return try wholeNumber(bytes, field: field, in: range)
    }

    /// ``wholeNumber(in:)`` for any other form: a sign, a fraction, one digit, or a
    /// value to refuse.
    @inline(never)
    func wholeNumber(_ bytes: UnsafeRawBufferPointer, field: Int, in range: ClosedRange<Int16>)
        throws(NMEADecodingError) -> Int16
    {
        var cursor = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let end = cursor + bytes.count
        let negative = cursor.pointee == UInt8(ascii: "-")
        if negative || cursor.pointee == UInt8(ascii: "+") { cursor += 1 }
        var magnitude = 0
        var digits = 0
        while cursor < end, case let digit = cursor.pointee &- UInt8(ascii: "0"), digit < 10 {
            // Past five digits the value is out of any range here; stop growing it.
            magnitude = min(magnitude &* 10 &+ Int(digit), 100_000)
            digits += 1
            cursor += 1
        }
        if cursor < end {
            guard cursor.pointee == UInt8(ascii: ".") else { throw failure(.notANumber, at: field) }
            cursor += 1
            if cursor < end, cursor.pointee >= UInt8(ascii: "5"), cursor.pointee <= UInt8(ascii: "9") { magnitude += 1 }
            while cursor < end {
                guard cursor.pointee &- UInt8(ascii: "0") < 10 else { throw failure(.notANumber, at: field) }
                digits += 1
                cursor += 1
            }
        }
        guard digits > 0 else { throw failure(.notANumber, at: field) }
        let value = negative ? -magnitude : magnitude
        guard value >= Int(range.lowerBound), value <= Int(range.upperBound) else {
            throw failure(.outOfRange, at: field)
        }
        return Int16(value)
    }
}
