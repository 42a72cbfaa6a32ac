import ReceiverFraming

/// A capture's payload cut into what the receiver wrote one by one: each whole,
/// checksum-verified UBX frame, and the text between frames line by line (through each
/// line's end), for the replayer's pacing and its retiming.
enum CaptureUnits {
    static func units(of payload: [UInt8]) -> [Range<Int>] {
        var units: [Range<Int>] = []
        var start = 0
        var index = 0
        while index < payload.count {
            if let size = ubxFrameSize(payload, at: index) {
                if start < index { units.append(start..<index) }
                units.append(index..<(index + size))
                index += size
                start = index
            } else if payload[index] == UInt8(ascii: "\n") {
                units.append(start..<(index + 1))
                index += 1
                start = index
            } else {
                index += 1
            }
        }
        if start < payload.count { units.append(start..<payload.count) }
        return units
    }

    /// The size of the checksum-verified UBX frame at `index`, if one begins there.
    static func ubxFrameSize(_ payload: [UInt8], at index: Int) -> Int? {
        guard index + UBXFrame.overhead <= payload.count, payload[index] == UBXFrame.sync1,
            payload[index + 1] == UBXFrame.sync2
        else { return nil }
        let size = (Int(payload[index + 4]) | Int(payload[index + 5]) << 8) + UBXFrame.overhead
        guard index + size <= payload.count else { return nil }
        let valid = payload.withUnsafeBytes {
            UBXFrame(validating: UnsafeRawBufferPointer(rebasing: $0[index..<(index + size)])) != nil
        }
        return valid ? size : nil
    }
}
