/// A list of at most `capacity` elements stored inline, so a sentence value that holds
/// one (GSA's satellite ids, GSV's four satellites) needs no heap allocation.
///
/// The unused slots hold a placeholder rather than optionals, which keeps the list (and
/// every message that contains it) small to copy.
public struct InlineList<let capacity: Int, Element>: RandomAccessCollection, MutableCollection {
    private var storage: InlineArray<capacity, Element>
    public private(set) var count = 0

    /// An empty list whose unused slots hold `placeholder`.
    public init(placeholder: Element) {
        storage = InlineArray(repeating: placeholder)
    }

    /// Appends `element`, or returns `false` and leaves the list alone when it is full.
    @discardableResult
    public mutating func append(_ element: Element) -> Bool {
        guard count < capacity else { return false }
        storage[count] = element
        count += 1
        return true
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "index out of range")
            return storage[position]
        }
        set {
            precondition(position >= 0 && position < count, "index out of range")
            storage[position] = newValue
        }
    }

    /// Empties the list; the storage stays where it is.
    public mutating func removeAll() {
        count = 0
    }
}

extension InlineList: Sendable where Element: Sendable {}

extension InlineList: Equatable where Element: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) }
}

extension InlineList: Hashable where Element: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for element in self { hasher.combine(element) }
    }
}
