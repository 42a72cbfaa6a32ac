/// A message of the daemon's control socket, both ways: a type byte, a big-endian 16-bit
/// length, the payload. `H` names a device (answered `O` with its speed, `N` when the
/// daemon does not serve it, or `E` with why not; `W` first when another conversation
/// holds the receiver, and `O` when it is over), `F` carries one whole UBX frame, `S` a
/// new port speed (answered `O`).
public struct ControlMessage: Equatable, Sendable {
    /// The longest payload: a UBX frame of the framer's longest.
    public static let maximumLength = 8200

    /// `H`, `O`, `W`, `N`, `E`, `F` or `S`.
    public var type: UInt8
    public var payload: [UInt8]

    /// A message of `type` carrying `payload` (at most ``maximumLength`` bytes).
    public init(type: UInt8, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// `O`: the conversation may go on, the port at `speed` bits per second.
    public static func ok(_ speed: Int) -> ControlMessage { ControlMessage(type: UInt8(ascii: "O"), number: speed) }

    /// `W`: another conversation holds the receiver; `O` follows when this one's turn comes,
    /// within the daemon's turn limit, `seconds` (the payload, as `O`'s speed is).
    public static func waiting(seconds: Int) -> ControlMessage { ControlMessage(type: UInt8(ascii: "W"), number: seconds) }

    /// `S`: switch the port to `speed` bits per second (after the receiver was told to).
    public static func speed(_ speed: Int) -> ControlMessage { ControlMessage(type: UInt8(ascii: "S"), number: speed) }

    private init(type: UInt8, number: Int) {
        self.init(type: type, payload: (0..<4).reversed().map { UInt8(truncatingIfNeeded: number >> ($0 * 8)) })
    }

    /// The payload of `O`, `W` and `S` read as its number; `nil` for another length.
    public var number: Int? { payload.count == 4 ? payload.reduce(0) { $0 << 8 | Int($1) } : nil }

    /// `N`: the daemon does not serve that device (the tool may open it itself); the daemon
    /// closes the connection after it.
    public static let notServed = ControlMessage(type: UInt8(ascii: "N"), payload: [])

    /// `E`: why not; the daemon closes the connection after it.
    public static func error(_ reason: String) -> ControlMessage { ControlMessage(type: UInt8(ascii: "E"), payload: Array(reason.utf8)) }

    /// The message as sent.
    public var bytes: [UInt8] { [type, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload }

    /// The payload length the first message of `bytes` declares, once its header is there.
    private static func declaredLength(_ bytes: [UInt8]) -> Int? {
        bytes.count >= 3 ? Int(bytes[1]) << 8 | Int(bytes[2]) : nil
    }

    /// Whether the first message of `bytes` declares a length over ``maximumLength``.
    public static func declaresTooLong(_ bytes: [UInt8]) -> Bool {
        (declaredLength(bytes) ?? 0) > maximumLength
    }

    /// Takes the first whole message out of `bytes`, if there is one; a length over
    /// ``maximumLength`` is never whole.
    public static func take(from bytes: inout [UInt8]) -> ControlMessage? {
        guard let length = declaredLength(bytes), length <= maximumLength, bytes.count >= 3 + length else { return nil }
        defer { bytes.removeFirst(3 + length) }
        return ControlMessage(type: bytes[0], payload: Array(bytes[3..<(3 + length)]))
    }
}
