import Synchronization

/// Whether anyone wants a provider's raw sentences right now.
///
/// Copying every sentence out of the parser's buffer is the one per-sentence allocation
/// a provider can make, so it does so only while this is on. The server turns it on while
/// any client watches with `nmea` or `raw`, and off when the last one stops.
public final class SentenceDemand: Sendable {
    private let wanted: Atomic<Bool>

    public init(_ wanted: Bool = false) {
        self.wanted = Atomic(wanted)
    }

    public var isWanted: Bool { wanted.load(ordering: .relaxed) }

    public func set(_ isWanted: Bool) {
        wanted.store(isWanted, ordering: .relaxed)
    }
}
