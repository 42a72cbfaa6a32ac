/// The memory a ``JSONWriter`` writes into: owned, grown by doubling, and handed from
/// one report's writer to the next, so that a stream of reports (`gpsfix decode`'s) is
/// written into one block that is reused after each flush, with no allocation or copy
/// per report.
public struct JSONBytes: ~Copyable {
    // Usable from inlinable code: a report's fields are written where they are named.
    @usableFromInline var storage: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var written = 0

    /// How many bytes have been written.
    public var count: Int { written }

    /// Empty, with room for `capacity` bytes before it grows.
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 1)
        storage = .allocate(capacity: self.capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// Whether nothing has been written.
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the bytes written, borrowed for the call.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// Forgets the bytes written, keeping the memory for the next.
    public mutating func removeAll() {
        written = 0
    }

    /// Makes room for `additional` more bytes, so that writing them does not grow the memory.
    public mutating func reserve(_ additional: Int) {
        if count + additional > capacity { grow(toHold: count + additional) }
    }

    /// The bytes written, copied into an array.
    var array: [UInt8] {
        [UInt8](UnsafeBufferPointer(start: storage, count: count))
    }

    /// The bytes written, as text.
    var text: String {
        String(decoding: UnsafeBufferPointer(start: storage, count: count), as: UTF8.self)
    }

    /// Lets `body` write up to `maximumCount` bytes at the end, `body` returning how many
    /// it wrote: one capacity check per token instead of per byte.
    @inlinable @inline(always)
    mutating func appendToken(maximumCount: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        if written + maximumCount > capacity { grow(toHold: written + maximumCount) }
        written += body(storage + written)
    }

    /// Makes room for `maximumCount` more bytes and returns where the next one goes: the
    /// start of a run written through a ``JSONCursor`` and ended by ``endRun(at:)``, with
    /// nothing else written between.
    @inline(always)
    mutating func beginRun(maximumCount: Int) -> UnsafeMutablePointer<UInt8> {
        if written + maximumCount > capacity { grow(toHold: written + maximumCount) }
        return storage + written
    }

    /// Ends the run begun by ``beginRun(maximumCount:)`` at `end`, just past its last byte.
    @inline(always)
    mutating func endRun(at end: UnsafeMutablePointer<UInt8>) {
        // The room a run asks for is counted by hand: the tests' debug builds check it.
        assert(storage.distance(to: end) <= capacity, "a run wrote past the room it asked for")
        written = storage.distance(to: end)
    }

    @usableFromInline
    mutating func grow(toHold minimumCapacity: Int) {
        capacity = max(capacity * 2, minimumCapacity)
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        larger.update(from: storage, count: count)
        storage.deallocate()
        storage = larger
    }
}
