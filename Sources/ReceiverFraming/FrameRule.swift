/// How one binary protocol's frames are found in a receiver's byte stream: the byte a
/// frame begins with, how long its header is, how its length follows from the header,
/// and how the whole frame is checked. A ``ReceiverFramer`` holds a small table of these
/// and asks them about each candidate; it knows no protocol by name.
///
/// Every requirement is static and pure, and none allocates: the framer calls them per
/// candidate frame, on the bytes it gathered into its own buffer.
///
/// Most protocols' frames are counted: the header carries the length (UBX, RTCM 3, SiRF,
/// CASIC, Skytraq). Trimble's TSIP frames are stuffed instead: they end at an escape byte
/// followed by an end byte, an escape byte within them sent twice (``stuffing``). Text
/// between frames is not a rule's: the framer hands it to its ``NMEAFramer``.
///
/// Two rules may share a first byte (SiRF's `A0 A2` and Skytraq's `A0 A1`) when their
/// headers are as long: the framer asks them in turn, and each refuses, by a `nil`
/// ``frameLength(header:)``, a header that is not its own.
public protocol FrameRule: Sendable {
    /// The protocol's name in counts and logs: `UBX`, `RTCM 3`.
    static var name: String { get }
    /// The byte every frame begins with (`B5`, `D3`, TSIP's `10`). It must be at or above
    /// `0x80`, or a control byte that text never holds (not tab, CR or LF; one such byte
    /// per framer): the framer skips eight bytes of text at a time while none is.
    static var sync: UInt8 { get }
    /// For stuffed frames, the escape and end bytes (TSIP: `10`, DLE, and `03`, ETX);
    /// `nil`, the default, for counted ones. A stuffed frame is gathered, as received,
    /// until an escape byte not paired with another is followed by the end byte; an
    /// unpaired escape followed by anything else refuses it (it begins the next frame,
    /// usually). ``frameLength(header:)`` answers how long such a frame may be at most;
    /// ``holds(_:)`` gets the frame as received, stuffing and all.
    static var stuffing: (escape: UInt8, end: UInt8)? { get }
    /// Bytes gathered, sync byte included, before ``frameLength(header:)`` can answer.
    static var headerLength: Int { get }
    /// The longest frame the protocol allows, on the wire; a framer may accept less.
    static var maximumLength: Int { get }
    /// The whole frame's length on the wire (at least ``headerLength``), from its first
    /// ``headerLength`` bytes, or `nil` when no frame has such a header (a stray sync
    /// byte, usually). For stuffed frames, whose length the header does not give, the
    /// most such a frame can be on the wire, every byte stuffed.
    static func frameLength(header: UnsafeRawBufferPointer) -> Int?
    /// Whether a whole frame, of the length its header gave, holds: its checksum.
    static func holds(_ frame: UnsafeRawBufferPointer) -> Bool
    /// The frame as the framer hands it out, borrowed from the framer's buffer; `nil`
    /// (the default) hands it out as a ``BinaryFrame`` of the rule's index, for a
    /// receiver driver to read.
    static func received(_ frame: UnsafeRawBufferPointer) -> ReceiverFrame?
}

extension FrameRule {
    public static func received(_ frame: UnsafeRawBufferPointer) -> ReceiverFrame? { nil }
    public static var stuffing: (escape: UInt8, end: UInt8)? { nil }
}

extension ReceiverFramer {
    /// A frame rule as one framer applies it: with the longest frame that framer accepts,
    /// which sizes its buffers once, at init.
    public struct Rule: Sendable {
        /// The protocol's rule.
        public let frames: any FrameRule.Type
        /// The longest frame accepted, on the wire: a longer one is refused as too long.
        public let maximumLength: Int
        /// The rule's ``FrameRule/headerLength``, read once: the framer needs it per frame.
        let headerLength: Int
        /// The rule's ``FrameRule/stuffing``, read once likewise.
        let stuffing: (escape: UInt8, end: UInt8)?

        /// `frames` with frames up to `maximumLength` bytes (the protocol's own limit
        /// when `nil`, and never above it).
        public init(_ frames: any FrameRule.Type, maximumLength: Int? = nil) {
            precondition(
                frames.sync >= 0x80 || (frames.sync < 0x20 && ![0x09, 0x0A, 0x0D].contains(frames.sync)),
                "\(frames.name)'s sync byte must be at or above 0x80, or a control byte text does not hold")
            precondition(frames.headerLength >= 1, "\(frames.name)'s header holds its sync byte")
            self.frames = frames
            self.maximumLength = min(maximumLength ?? frames.maximumLength, frames.maximumLength)
            headerLength = frames.headerLength
            stuffing = frames.stuffing
        }
    }
}
