import ReceiverFraming
import UBX

/// Where CFG-VALSET writes and CFG-VALGET reads: the configuration layers of a receiver
/// from protocol 27 on.
public struct ConfigurationLayers: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The configuration in use, lost at power off.
    public static let ram = ConfigurationLayers(rawValue: 0x01)
    /// Battery-backed RAM: survives while the backup supply lasts.
    public static let batteryBacked = ConfigurationLayers(rawValue: 0x02)
    /// Flash: survives any power cycle, and wears with each write.
    public static let flash = ConfigurationLayers(rawValue: 0x04)
}

/// A key and its value as carried on the wire (little-endian, of the key's size).
public struct ConfigurationItem: Hashable, Sendable, CustomStringConvertible {
    public var key: UInt32
    public var value: UInt64

    public init(_ key: ConfigurationKey, _ value: UInt64) {
        self.key = key.id
        self.value = value
    }

    /// A signed value, two's complement at the key's size.
    public init(_ key: ConfigurationKey, signed value: Int64) {
        self.key = key.id
        let bits = key.valueSize * 8
        self.value = UInt64(bitPattern: value) & (bits == 64 ? .max : (1 << UInt64(bits)) - 1)
    }

    public init(id: UInt32, value: UInt64) {
        key = id
        self.value = value
    }

    public var description: String {
        "\(ConfigurationKeys.named(key)?.name ?? "0x" + String(key, radix: 16))=\(value)"
    }

    fileprivate func append(to payload: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { payload.append(UInt8(truncatingIfNeeded: key >> UInt32(shift))) }
        for index in 0..<ConfigurationKey.valueSize(of: key) { payload.append(UInt8(truncatingIfNeeded: value >> UInt64(index * 8))) }
    }
}

/// CFG-VALSET, CFG-VALGET and the acknowledgements: the configuration interface's frames.
public enum ValueMessages {
    /// UBX-CFG-VALSET's class and id.
    public static let valueSet: UInt16 = 0x068A
    /// UBX-CFG-VALGET's class and id.
    public static let valueGet: UInt16 = 0x068B
    /// How many items one CFG-VALSET or CFG-VALGET may carry.
    public static let maximumItems = 64

    /// Frames that write `items` to `layers` as one transaction: applied together when the
    /// last frame is acknowledged, or not at all (version 1's begin, continue and end). A
    /// single frame is sent without a transaction, which applies it as a whole too.
    public static func set(_ items: [ConfigurationItem], in layers: ConfigurationLayers) -> [[UInt8]] {
        let chunks = stride(from: 0, to: items.count, by: maximumItems).map { Array(items[$0..<min($0 + maximumItems, items.count)]) }
        return chunks.enumerated().map { index, chunk in
            let transaction: UInt8 = switch (chunks.count, index) {
            case (1, _): 0  // none: a single message applies as a whole
            case (_, 0): 1  // begin
            case (_, chunks.count - 1): 3  // end, and apply
            default: 2  // continue
            }
            var payload: [UInt8] = [chunks.count == 1 ? 0 : 1, layers.rawValue, transaction, 0]
            for item in chunk { item.append(to: &payload) }
            return UBXFrame.encode(messageClass: 0x06, id: 0x8A, payload: payload)
        }
    }

    /// A CFG-VALGET poll for `keys` from the RAM layer (what the receiver runs with).
    public static func get(_ keys: [ConfigurationKey]) -> [[UInt8]] {
        stride(from: 0, to: keys.count, by: maximumItems).map { start in
            var payload: [UInt8] = [0, 0, 0, 0]  // version 0, layer RAM, position 0
            for key in keys[start..<min(start + maximumItems, keys.count)] {
                for shift in stride(from: 0, to: 32, by: 8) { payload.append(UInt8(truncatingIfNeeded: key.id >> UInt32(shift))) }
            }
            return UBXFrame.encode(messageClass: 0x06, id: 0x8B, payload: payload)
        }
    }

    /// The items of a CFG-VALGET reply (version 1); `nil` for any other frame, or one
    /// whose items do not fill it exactly.
    public static func items(of frame: UBXFrame) -> [ConfigurationItem]? {
        guard frame.message == valueGet, frame.payload.count >= 4, frame.payload[0] == 1 else { return nil }
        return items(after: 4, in: frame.payload)
    }

    /// The layers and items a CFG-VALSET frame writes, for printing what a dry run would send.
    public static func itemsWritten(by frame: UBXFrame) -> (layers: ConfigurationLayers, items: [ConfigurationItem])? {
        guard frame.message == valueSet, frame.payload.count >= 4, let items = items(after: 4, in: frame.payload) else { return nil }
        return (ConfigurationLayers(rawValue: frame.payload[1]), items)
    }

    /// Key and value pairs from `offset` to the end of `payload`, each value of its key's size.
    private static func items(after offset: Int, in payload: UnsafeRawBufferPointer) -> [ConfigurationItem]? {
        var items: [ConfigurationItem] = []
        var offset = offset
        while offset + 4 <= payload.count {
            let id = (0..<4).reduce(UInt32(0)) { $0 | UInt32(payload[offset + $1]) << UInt32($1 * 8) }
            let size = ConfigurationKey.valueSize(of: id)
            guard size > 0, offset + 4 + size <= payload.count else { return nil }
            let value = (0..<size).reduce(UInt64(0)) { $0 | UInt64(payload[offset + 4 + $1]) << UInt64($1 * 8) }
            items.append(ConfigurationItem(id: id, value: value))
            offset += 4 + size
        }
        return offset == payload.count ? items : nil
    }
}

/// The receiver's answer to a configuration message: ACK-ACK or ACK-NAK for that message.
public enum Acknowledgement: Hashable, Sendable {
    case acknowledged, refused

    /// The acknowledgement `frame` gives of `message` (class and id), if it is one.
    public init?(_ frame: UBXFrame, of message: UInt16) {
        guard frame.messageClass == 0x05, frame.payload.count >= 2,
            UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) == message
        else { return nil }
        switch frame.messageID {
        case 0x01: self = .acknowledged
        case 0x00: self = .refused
        default: return nil
        }
    }
}
