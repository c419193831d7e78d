/// The words an ``ObservableValue`` keeps first (see `AtomicWord`): 56
/// bytes, then the storage's two copies; with an `Int` value the object is
/// 88 bytes (a 96-byte heap block). Everything else is made on first use:
/// the slot list (first subscribe), the trigger counter's padded lines
/// (first send from a second thread) and the ``ValueExtras`` (first read,
/// first contended or reentrant set; at `init` for a value that skips
/// duplicates).
///
/// The engine's view of a value object: its first stored property is
/// these words, its second the storage's two copies of the value (see
/// ``ValueStorage``); the views below find each part there.
@usableFromInline
struct ObservableValueWords {
    @usableFromInline var observers = EventObserverWords()
    /// The turn's claim word (see ``NotificationTurn``).
    @usableFromInline var turn = AtomicWordStorage<UInt>(0)
    /// ``ValueStorage``'s `current` and `readers`.
    @usableFromInline var current = AtomicWordStorage<Int>(0)
    @usableFromInline var readers = AtomicWordStorage<UInt>(0)
    /// The ``TypedValueExtras`` (retained), nil before their first use.
    @usableFromInline var extras = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
    @usableFromInline init() {}

    /// Words whose extras are `extras` (retained here), made with the value.
    @usableFromInline
    init(extras: AnyObject) {
        self.extras = AtomicWordStorage(Unmanaged.passRetained(extras).toOpaque())
    }

    @inlinable static var observersOffset: Int { 0 }
    @inlinable static var turnOffset: Int { MemoryLayout<EventObserverWords>.stride }
    @inlinable static var currentOffset: Int { turnOffset + MemoryLayout<UInt>.stride }
    @inlinable static var readersOffset: Int { currentOffset + MemoryLayout<Int>.stride }
    @inlinable static var extrasOffset: Int { readersOffset + MemoryLayout<UInt>.stride }
}

extension ObservableValueWords {
    /// The observers of the value object `owner`.
    @inlinable @inline(__always)
    static func observers<Value>(of owner: AnyObject) -> EventObservers<Value> {
        EventObservers(in: owner, at: observersOffset)
    }

    /// The notification turn of the value object `owner`.
    @inlinable @inline(__always)
    static func turn(of owner: AnyObject) -> NotificationTurn {
        NotificationTurn(word: turnWord(of: owner), extrasWord: AtomicWords.word(owner, at: extrasOffset))
    }

    /// The turn's claim word of the value object `owner`.
    @inlinable @inline(__always)
    static func turnWord(of owner: AnyObject) -> AtomicWord<UInt> {
        AtomicWords.word(owner, at: turnOffset)
    }

    /// The storage of the value object `owner`, whose copies are of `Value`.
    @inlinable @inline(__always)
    static func storage<Value>(of owner: AnyObject) -> ValueStorage<Value> {
        let start = UnsafeMutableRawPointer(_getUnsafePointerToStoredProperties(owner))
        return ValueStorage(
            current: AtomicWords.word(owner, at: currentOffset),
            readers: AtomicWords.word(owner, at: readersOffset),
            copies: (start + copiesOffset(of: Value.self)).assumingMemoryBound(to: Value.self))
    }

    /// The extras of the value object `owner`, made on first use.
    @inlinable @inline(__always)
    static func extras<Extras: AnyObject>(of owner: AnyObject) -> LazyObjectWord<Extras> {
        LazyObjectWord(AtomicWords.word(owner, at: extrasOffset))
    }

    /// Where the copies start, from the start of the stored properties:
    /// after the words, at `Value`'s alignment. Swift lays a class's stored
    /// properties out in declaration order from the end of the object's
    /// header, each at its alignment; `AtomicWordTests` checks the copies
    /// read through this offset against the property.
    @inlinable
    static func copiesOffset<Value>(of _: Value.Type) -> Int {
        let header = 2 * MemoryLayout<UnsafeRawPointer>.size
        let end = header + MemoryLayout<ObservableValueWords>.size
        let alignment = MemoryLayout<Value>.alignment
        return (end + alignment - 1) / alignment * alignment - header
    }
}
