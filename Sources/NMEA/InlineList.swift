/// A list of at most `capacity` elements stored inline, so a sentence value that holds
/// one (GSA's satellite ids, GSV's four satellites) needs no heap allocation.
///
/// The unused slots hold a placeholder rather than optionals, which keeps the list (and
/// every message that contains it) small to copy.
///
/// Its members are inlinable so that other modules (the assembler's tallies, the
/// satellite tracker) get code specialised for their element type rather than calls
/// through the generic entry points.
public struct InlineList<let capacity: Int, Element>: RandomAccessCollection, MutableCollection {
    @usableFromInline var storage: InlineArray<capacity, Element>
    @usableFromInline var filled: Int

    /// How many elements the list holds.
    @inlinable public var count: Int { filled }

    /// An empty list whose unused slots hold `placeholder`.
    @inlinable
    public init(placeholder: Element) {
        filled = 0
        storage = InlineArray(repeating: placeholder)
    }

    /// Appends `element`, or returns `false` and leaves the list alone when it is full.
    @inlinable @discardableResult
    public mutating func append(_ element: Element) -> Bool {
        guard filled < capacity else { return false }
        storage[filled] = element
        filled += 1
        return true
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { filled }

    // Yielding accessors borrow the element in place; a plain `get` copied the whole
    // list (hundreds of bytes) to read one element.
    @inlinable
    public subscript(position: Int) -> Element {
        _read {
            precondition(position >= 0 && position < filled, "index out of range")
            yield storage[position]
        }
        _modify {
            precondition(position >= 0 && position < filled, "index out of range")
            yield &storage[position]
        }
    }

    /// Empties the list; the storage stays where it is.
    @inlinable
    public mutating func removeAll() {
        filled = 0
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
