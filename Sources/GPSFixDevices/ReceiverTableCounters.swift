/// What keeping a receiver at its `[receiver]` table did: the daemon's keeper counts, the
/// metrics and the status line read.
public struct ReceiverTableCounters: Sendable, Equatable {
    /// Conversations held to compare the receiver with its table, counted as each ends.
    public var conversations = 0
    /// Conversations that gave the receiver its table.
    public var applied = 0
    /// Conversations that failed (the receiver silent, a speed not taken, a refusal): each
    /// is logged only when its reason changes, so a receiver failing again and again shows here.
    public var failed = 0
    /// Frames written to the receiver's flash (once per table and receiver).
    public var flashWrites = 0
    /// Conversations that found a difference the receiver keeps after being given the
    /// table, and left it (it is reported, not retried).
    public var differencesKept = 0

    public init() {}
}
