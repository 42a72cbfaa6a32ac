/// Reads of a frame's fields at byte offsets, bounds-checked: `nil` past the end, so a
/// frame shorter than its message is a decoding error, never a trap. Big-endian for TSIP,
/// SiRF and Skytraq; little-endian for CASIC.
public struct FrameFields {
    /// The bytes the offsets count from.
    public let bytes: UnsafeRawBufferPointer
    /// Whether multi-byte fields are sent most significant byte first.
    public let bigEndian: Bool

    public init(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) {
        self.bytes = bytes
        self.bigEndian = bigEndian
    }

    /// Whether `count` bytes from `offset` lie within the frame.
    public func holds(_ count: Int, at offset: Int) -> Bool { offset >= 0 && count >= 0 && offset <= bytes.count - count }

    public func u8(_ offset: Int) -> UInt8? { holds(1, at: offset) ? bytes[offset] : nil }
    public func i8(_ offset: Int) -> Int8? { u8(offset).map { Int8(bitPattern: $0) } }
    public func u16(_ offset: Int) -> UInt16? { load(offset, as: UInt16.self) }
    public func i16(_ offset: Int) -> Int16? { u16(offset).map { Int16(bitPattern: $0) } }
    public func u32(_ offset: Int) -> UInt32? { load(offset, as: UInt32.self) }
    public func i32(_ offset: Int) -> Int32? { u32(offset).map { Int32(bitPattern: $0) } }
    public func u64(_ offset: Int) -> UInt64? { load(offset, as: UInt64.self) }
    /// An IEEE single; `nil` for NaN and infinities too.
    public func f32(_ offset: Int) -> Float? { u32(offset).map { Float(bitPattern: $0) }.flatMap { $0.isFinite ? $0 : nil } }
    /// An IEEE double; `nil` for NaN and infinities too.
    public func f64(_ offset: Int) -> Double? { u64(offset).map { Double(bitPattern: $0) }.flatMap { $0.isFinite ? $0 : nil } }

    private func load<T: FixedWidthInteger>(_ offset: Int, as type: T.Type) -> T? {
        guard holds(MemoryLayout<T>.size, at: offset) else { return nil }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }
}
