import ReceiverFraming

/// Little-endian reads at byte offsets of a UBX payload, as u-blox lays messages out.
extension UnsafeRawBufferPointer {
    @inline(__always) func u8(_ offset: Int) -> UInt8 { self[offset] }
    @inline(__always) func i8(_ offset: Int) -> Int8 { Int8(bitPattern: self[offset]) }
    @inline(__always) func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func i16(_ offset: Int) -> Int16 {
        Int16(littleEndian: loadUnaligned(fromByteOffset: offset, as: Int16.self))
    }
    @inline(__always) func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func i32(_ offset: Int) -> Int32 {
        Int32(littleEndian: loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    /// A NUL-padded text field of `length` bytes at `offset`, as MON-VER's, without its
    /// padding, printable ASCII only (``Swift/String/init(receiverText:)``).
    func text(_ offset: Int, length: Int) -> String {
        String(receiverText: self[offset..<(offset + length)].prefix { $0 != 0 })
    }
}

extension UBXFrame {
    /// The payload when the frame is message `message` and its payload holds at least
    /// `length` bytes (u-blox appends fields in later versions, never removes them).
    @inline(__always) func payload(of message: UInt16, atLeast length: Int) -> UnsafeRawBufferPointer? {
        guard self.message == message, bytes.count - UBXFrame.overhead >= length else { return nil }
        return payload
    }
}
