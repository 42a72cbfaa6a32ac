/// Text from elsewhere (a receiver's version, a peer's answer, a server's report) as a log
/// line, an error or a terminal may be given it: no line break or escape sequence of
/// theirs reaches it. One place for the three forms the daemon and the tool need.
extension String {
    /// Text a receiver sent (a firmware version, a model name): each byte that is not
    /// printable ASCII replaced by `?`. Inlinable, so that a decoder's slice of a frame is
    /// read as its own type, not byte by byte through a generic sequence's witnesses.
    @inlinable
    public init(receiverText bytes: some Sequence<UInt8>) {
        self.init(decoding: bytes.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// At most `limit` characters of a peer's words (an upstream gpsd's ERROR, a caster's
    /// status line), as an error or a log line shows them: each character that is not
    /// printable ASCII replaced by `?`.
    public func printable(limit: Int) -> String {
        String(prefix(limit).map { $0.isASCII && (32..<127).contains($0.asciiValue!) ? $0 : "?" })
    }

    /// The text with each control character (C0, DEL, C1; a tab, a line break) as `?`,
    /// and every other character kept: for a terminal, where a server's UTF-8 names
    /// should read as they are. JSON lines hold none: JSON escapes them.
    public var withoutControlCharacters: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }
}
