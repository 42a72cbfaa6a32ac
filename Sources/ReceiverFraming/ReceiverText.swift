extension String {
    /// Text a receiver sent (a firmware version, a model name) as it may be shown and
    /// logged: each byte that is not printable ASCII replaced by `?`, so that no line
    /// break or terminal escape of a receiver's reaches a log line or a terminal.
    public init(receiverText bytes: some Sequence<UInt8>) {
        self.init(decoding: bytes.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
