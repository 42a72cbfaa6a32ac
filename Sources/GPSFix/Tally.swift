import NMEA

/// Counts occurrences of keys: the first 32 distinct keys in fixed inline storage,
/// searched by plain comparison, further ones in a dictionary, up to ``maximumKeys``.
///
/// A receiver sends a dozen kinds of sentence, so counting them per sentence costs a
/// few integer compares and no hashing or allocation; a stream with more kinds still
/// has each counted, up to a bound no receiver comes near: a stream of ever new
/// addresses (8 characters each) would otherwise grow the dictionary for as long as
/// it ran. Occurrences of keys past the bound are counted together, as ``uncounted``.
struct Tally<Key: Hashable> {
    /// The most distinct keys counted.
    static var maximumKeys: Int { 256 }

    private struct Entry {
        var key: Key
        var count: Int
    }

    private var entries: InlineList<32, Entry>
    private var overflow: [Key: Int] = [:]
    /// Occurrences of keys that found no place: ``maximumKeys`` others were counted first.
    private(set) var uncounted = 0

    /// An empty tally; `placeholder` fills the unused inline slots.
    init(placeholder: Key) {
        entries = InlineList(placeholder: Entry(key: placeholder, count: 0))
    }

    // Plain index loops: the collection algorithms (`firstIndex(where:)`) copy the whole
    // inline storage, 32 entries, on every call.
    mutating func count(_ key: Key) {
        for index in 0..<entries.count where entries[index].key == key {
            entries[index].count += 1
            return
        }
        guard !entries.append(Entry(key: key, count: 1)) else { return }
        if let index = overflow.index(forKey: key) {
            overflow.values[index] += 1
        } else if entries.count + overflow.count < Self.maximumKeys {
            overflow[key] = 1
        } else {
            uncounted += 1
        }
    }

    // Inlined: a call would copy the whole tally, its inline entries too, to lend it.
    @inline(__always)
    func occurrences(of key: Key) -> Int {
        for index in 0..<entries.count where entries[index].key == key { return entries[index].count }
        return overflow[key] ?? 0
    }

    /// Every key counted, with its count.
    var counts: [(key: Key, count: Int)] {
        entries.map { ($0.key, $0.count) } + overflow.map { ($0.key, $0.value) }
    }

    mutating func reset() {
        entries.removeAll()
        overflow.removeAll()
        uncounted = 0
    }
}
