import Synchronization

/// Whether anyone wants a provider's raw sentences, or its bytes as read, right now.
///
/// Copying every sentence out of the parser's buffer is the one per-sentence allocation
/// a provider can make, so it does so only while this is on. The server turns sentences
/// on while any client watches with `nmea` or `raw:1`, and the device's bytes verbatim
/// while any client watches with `raw:2`; each off when the last such client stops. A
/// receiver's RTCM 3 frames are wanted while the caster or an NTRIP server takes them.
public final class SentenceDemand: Sendable {
    private let sentences: Atomic<Bool>
    private let bytes: Atomic<Bool>
    private let corrections = Atomic(false)

    public init(sentences: Bool = false, bytes: Bool = false) {
        self.sentences = Atomic(sentences)
        self.bytes = Atomic(bytes)
    }

    /// Whether accepted sentences are wanted (``LocationUpdate/sentence(_:)``).
    public var isWanted: Bool { sentences.load(ordering: .relaxed) }

    /// Whether the device's bytes are wanted as read (``LocationUpdate/bytes(_:)``).
    public var areBytesWanted: Bool { bytes.load(ordering: .relaxed) }

    /// Whether RTCM 3 frames are wanted (``LocationUpdate/rtcm3(_:)``).
    public var areCorrectionsWanted: Bool { corrections.load(ordering: .relaxed) }

    /// Turns the copying out of RTCM 3 frames on (the caster listens, or an NTRIP server
    /// pushes) or off.
    public func set(corrections: Bool) {
        self.corrections.store(corrections, ordering: .relaxed)
    }

    public func set(sentences: Bool, bytes: Bool) {
        self.sentences.store(sentences, ordering: .relaxed)
        self.bytes.store(bytes, ordering: .relaxed)
    }
}
