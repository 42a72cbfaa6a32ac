import Synchronization

/// Whether the server is holding back the reading of sources that can wait (see
/// ``ByteSource/canWait``) for a lagging client, and how often it has let them go.
///
/// A held-back source is not silent: its bytes wait in the kernel. The server sets this
/// when it pauses such sources and clears it when it resumes them; a provider's silence
/// watch reads it, so that silence is measured only on time the source was free to be
/// read. Like ``SentenceDemand``, it is the server's small value, carried to providers.
public final class ReadingHold: Sendable {
    private let holding = Atomic<Bool>(false)
    private let releases = Atomic<Int>(0)

    public init() {}

    /// Whether sources that can wait are held back now.
    public var isHolding: Bool { holding.load(ordering: .acquiring) }

    /// How many times they have been let go: a change means the source was held since.
    public var releaseCount: Int { releases.load(ordering: .acquiring) }

    /// Holds them back, or lets them go.
    public func set(holding newValue: Bool) {
        guard holding.exchange(newValue, ordering: .acquiringAndReleasing) != newValue, !newValue else { return }
        releases.add(1, ordering: .releasing)
    }
}
