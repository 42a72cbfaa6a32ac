extension String {
    /// At most `limit` characters of a peer's words (an upstream gpsd's ERROR, a caster's
    /// status line), as an error or a log line shows them: each character that is not
    /// printable ASCII replaced by `?`, so that no control character or line break of a
    /// peer's reaches the log.
    public func printable(limit: Int) -> String {
        String(prefix(limit).map { $0.isASCII && (32..<127).contains($0.asciiValue!) ? $0 : "?" })
    }
}
