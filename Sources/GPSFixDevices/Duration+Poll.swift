extension Duration {
    /// The duration as `poll(2)`'s timeout: whole milliseconds, rounded up (so that a wait
    /// never ends before its deadline), at least 1 and at most `Int32.max`.
    public var pollTimeout: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(1, milliseconds))
    }
}
