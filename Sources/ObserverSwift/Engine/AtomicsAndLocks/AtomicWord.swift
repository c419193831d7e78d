import CObserverSwiftAtomics

// The engine's atomics, on the C words of CObserverSwiftAtomics (the standard
// library's `Atomic` type needs macOS 15 / iOS 18, above the package's
// floor). The API mirrors that type's: `load(ordering:)`, `store(_:ordering:)`,
// `exchange(_:ordering:)`, `compareExchange(expected:desired:ordering:)`,
// `wrappingAdd` / `wrappingSubtract`, with the same ordering names.
//
// Storage. An atomic word needs an address that stays put while threads use
// it, and Swift gives a stored property no stable address by contract (a
// struct cannot even learn its own address: `withUnsafePointer(to: self)`
// hands it a temporary copy). A separate allocation per atomic would add
// heap memory per observer and a pointer chase per delivery. So an object
// that needs atomics keeps them inline, in memory it already allocates:
//
// Invariant (what `AtomicWords.of(_:)` relies on): the words are the
// object's FIRST stored property, in a class whose superclasses declare no
// stored properties. Swift lays a class's stored properties out in
// declaration order after the object header, so that property starts at
// `_getUnsafePointerToStoredProperties(object)` (the address swift-atomics'
// `ManagedAtomic` uses for its storage, by the same rule), for any word
// alignment up to the header's. The property is a `var` that Swift never
// reads or writes after `init`: every later access goes through an
// `AtomicWord` view, atomically. Several words go in one struct that
// names each word's byte offset as a constant: the strides of the words
// before it, in declaration order, each rounded up to its own alignment
// (how Swift lays out a struct's stored properties). Each host's layout is
// checked by `AtomicWordTests` (every stated offset equals
// `MemoryLayout.offset(of:)`, and the words seen through the views after
// atomic updates equal the stored property read back directly).
//
// A struct kept in such an object (`TriggerCounter`, `Expiry`) keeps its
// words in the object the same way: the object declares the struct's words
// first and the struct addresses them through the object. Where the
// invariant cannot hold (a subclass of a class with stored properties, a
// static, another module of this package, `DeliveryLimit`'s budget, which
// only a bounded `limit:` allocates), the word gets an allocation of its own
// (`HeapAtomicWord`), made with its owner and freed with it.

/// The ordering of an atomic load.
@frozen @usableFromInline
package struct AtomicLoadOrdering {
    @usableFromInline let order: Int32
    @inlinable init(_ order: Int32) { self.order = order }
    @inlinable package static var relaxed: Self { Self(EA_RELAXED) }
    @inlinable package static var acquiring: Self { Self(EA_ACQUIRE) }
    @inlinable package static var sequentiallyConsistent: Self { Self(EA_SEQ_CST) }
}

/// The ordering of an atomic store.
@frozen @usableFromInline
package struct AtomicStoreOrdering {
    @usableFromInline let order: Int32
    @inlinable init(_ order: Int32) { self.order = order }
    @inlinable package static var relaxed: Self { Self(EA_RELAXED) }
    @inlinable package static var releasing: Self { Self(EA_RELEASE) }
    @inlinable package static var sequentiallyConsistent: Self { Self(EA_SEQ_CST) }
}

/// The ordering of an atomic read-modify-write (a failed compare-exchange
/// loads with the load half of it).
@frozen @usableFromInline
package struct AtomicUpdateOrdering {
    @usableFromInline let order: Int32
    @inlinable init(_ order: Int32) { self.order = order }
    @inlinable package static var relaxed: Self { Self(EA_RELAXED) }
    @inlinable package static var acquiring: Self { Self(EA_ACQUIRE) }
    @inlinable package static var releasing: Self { Self(EA_RELEASE) }
    @inlinable package static var acquiringAndReleasing: Self { Self(EA_ACQ_REL) }
    @inlinable package static var sequentiallyConsistent: Self { Self(EA_SEQ_CST) }
}

/// A memory fence (the standard library's spelling of one).
@inlinable @inline(__always)
package func atomicMemoryFence(ordering: AtomicUpdateOrdering) {
    ea_fence(ordering.order)
}

/// An unsigned integer type with C atomic operations on it.
@usableFromInline
package protocol AtomicStorageWord: FixedWidthInteger & UnsignedInteger & Sendable {
    static func atomicLoad(_ word: UnsafeMutablePointer<Self>, _ order: Int32) -> Self
    static func atomicStore(_ word: UnsafeMutablePointer<Self>, _ value: Self, _ order: Int32)
    static func atomicExchange(_ word: UnsafeMutablePointer<Self>, _ value: Self, _ order: Int32) -> Self
    /// The value found; the word was set to `desired` exactly when it equals `expected`.
    static func atomicCompareExchange(
        _ word: UnsafeMutablePointer<Self>, _ expected: Self, _ desired: Self, _ order: Int32
    ) -> Self
    static func atomicFetchAdd(_ word: UnsafeMutablePointer<Self>, _ delta: Self, _ order: Int32) -> Self
    static func atomicFetchSubtract(_ word: UnsafeMutablePointer<Self>, _ delta: Self, _ order: Int32) -> Self
}

extension UInt8: AtomicStorageWord {
    @inlinable package static func atomicLoad(_ w: UnsafeMutablePointer<Self>, _ o: Int32) -> Self { ea_u8_load(w, o) }
    @inlinable package static func atomicStore(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) {
        ea_u8_store(w, v, o)
    }
    @inlinable package static func atomicExchange(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) -> Self {
        ea_u8_exchange(w, v, o)
    }
    @inlinable package static func atomicCompareExchange(
        _ w: UnsafeMutablePointer<Self>, _ e: Self, _ d: Self, _ o: Int32
    ) -> Self { ea_u8_compare_exchange(w, e, d, o) }
    @inlinable package static func atomicFetchAdd(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_u8_fetch_add(w, d, o)
    }
    @inlinable package static func atomicFetchSubtract(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_u8_fetch_sub(w, d, o)
    }
}

extension UInt32: AtomicStorageWord {
    @inlinable package static func atomicLoad(_ w: UnsafeMutablePointer<Self>, _ o: Int32) -> Self { ea_u32_load(w, o) }
    @inlinable package static func atomicStore(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) {
        ea_u32_store(w, v, o)
    }
    @inlinable package static func atomicExchange(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) -> Self {
        ea_u32_exchange(w, v, o)
    }
    @inlinable package static func atomicCompareExchange(
        _ w: UnsafeMutablePointer<Self>, _ e: Self, _ d: Self, _ o: Int32
    ) -> Self { ea_u32_compare_exchange(w, e, d, o) }
    @inlinable package static func atomicFetchAdd(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_u32_fetch_add(w, d, o)
    }
    @inlinable package static func atomicFetchSubtract(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_u32_fetch_sub(w, d, o)
    }
}

extension UInt64: AtomicStorageWord {
    @inlinable package static func atomicLoad(_ w: UnsafeMutablePointer<Self>, _ o: Int32) -> Self { ea_u64_load(w, o) }
    @inlinable package static func atomicStore(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) {
        ea_u64_store(w, v, o)
    }
    @inlinable package static func atomicExchange(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) -> Self {
        ea_u64_exchange(w, v, o)
    }
    @inlinable package static func atomicCompareExchange(
        _ w: UnsafeMutablePointer<Self>, _ e: Self, _ d: Self, _ o: Int32
    ) -> Self { ea_u64_compare_exchange(w, e, d, o) }
    @inlinable package static func atomicFetchAdd(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_u64_fetch_add(w, d, o)
    }
    @inlinable package static func atomicFetchSubtract(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_u64_fetch_sub(w, d, o)
    }
}

extension UInt: AtomicStorageWord {
    @inlinable package static func atomicLoad(_ w: UnsafeMutablePointer<Self>, _ o: Int32) -> Self {
        ea_word_load(w, o)
    }
    @inlinable package static func atomicStore(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) {
        ea_word_store(w, v, o)
    }
    @inlinable package static func atomicExchange(_ w: UnsafeMutablePointer<Self>, _ v: Self, _ o: Int32) -> Self {
        ea_word_exchange(w, v, o)
    }
    @inlinable package static func atomicCompareExchange(
        _ w: UnsafeMutablePointer<Self>, _ e: Self, _ d: Self, _ o: Int32
    ) -> Self { ea_word_compare_exchange(w, e, d, o) }
    @inlinable package static func atomicFetchAdd(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_word_fetch_add(w, d, o)
    }
    @inlinable package static func atomicFetchSubtract(_ w: UnsafeMutablePointer<Self>, _ d: Self, _ o: Int32) -> Self {
        ea_word_fetch_sub(w, d, o)
    }
}

/// A value an `AtomicWord` can hold: encoded losslessly in one storage word.
@usableFromInline
package protocol AtomicWordValue {
    associatedtype StorageWord: AtomicStorageWord
    static func encode(_ value: Self) -> StorageWord
    static func decode(_ word: StorageWord) -> Self
}

extension Bool: AtomicWordValue {
    @inlinable package static func encode(_ value: Bool) -> UInt8 { value ? 1 : 0 }
    @inlinable package static func decode(_ word: UInt8) -> Bool { word != 0 }
}

extension UInt32: AtomicWordValue {
    @inlinable package static func encode(_ value: UInt32) -> UInt32 { value }
    @inlinable package static func decode(_ word: UInt32) -> UInt32 { word }
}

extension UInt64: AtomicWordValue {
    @inlinable package static func encode(_ value: UInt64) -> UInt64 { value }
    @inlinable package static func decode(_ word: UInt64) -> UInt64 { word }
}

extension UInt: AtomicWordValue {
    @inlinable package static func encode(_ value: UInt) -> UInt { value }
    @inlinable package static func decode(_ word: UInt) -> UInt { word }
}

extension Int: AtomicWordValue {
    @inlinable package static func encode(_ value: Int) -> UInt { UInt(bitPattern: value) }
    @inlinable package static func decode(_ word: UInt) -> Int { Int(bitPattern: word) }
}

/// A pointer an `AtomicWord` can hold as an optional: its address in one
/// word, nil as 0.
@usableFromInline
package protocol AtomicPointer {
    init?(atomicAddress: UInt)
    var atomicAddress: UInt { get }
}

extension UnsafeMutableRawPointer: AtomicPointer {
    @inlinable package init?(atomicAddress: UInt) { self.init(bitPattern: atomicAddress) }
    @inlinable package var atomicAddress: UInt { UInt(bitPattern: self) }
}

extension Unmanaged: AtomicPointer {
    @inlinable package init?(atomicAddress: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: atomicAddress) else { return nil }
        self = Unmanaged.fromOpaque(pointer)
    }
    @inlinable package var atomicAddress: UInt { UInt(bitPattern: toOpaque()) }
}

extension Optional: AtomicWordValue where Wrapped: AtomicPointer {
    @inlinable package static func encode(_ value: Wrapped?) -> UInt { value?.atomicAddress ?? 0 }
    @inlinable package static func decode(_ word: UInt) -> Wrapped? { Wrapped(atomicAddress: word) }
}

/// One atomic word's storage: a plain integer, accessed only through an
/// `AtomicWord` once its owner is shared (see the invariant above).
@frozen @usableFromInline
package struct AtomicWordStorage<Value: AtomicWordValue> {
    @usableFromInline var word: Value.StorageWord

    @inlinable
    package init(_ value: Value) { word = Value.encode(value) }

    /// The value, read plainly: for the owner's `init` and for tests that
    /// check a layout, never while other threads may access the word.
    @inlinable
    var plainValue: Value { Value.decode(word) }
}

/// Where an object keeps its atomic words: the start of its stored
/// properties (the invariant above).
@usableFromInline
package enum AtomicWords {
    /// The words `object` keeps as its first stored property, typed as
    /// `Words`. `object` must satisfy the invariant, and must outlive every
    /// use of the pointer.
    @inlinable @inline(__always)
    package static func of<Words>(_ object: AnyObject, as _: Words.Type) -> UnsafeMutablePointer<Words> {
        _getUnsafePointerToStoredProperties(object).assumingMemoryBound(to: Words.self)
    }

    /// The word `object` keeps as its first stored property, when that
    /// property is a single `AtomicWordStorage<Value>`.
    @inlinable @inline(__always)
    package static func first<Value>(_ object: AnyObject, as _: Value.Type = Value.self) -> AtomicWord<Value> {
        AtomicWord(at: of(object, as: AtomicWordStorage<Value>.self))
    }

    /// The word `offset` bytes into the words `object` keeps first. The
    /// words' type states each word's offset as a constant (a key path's
    /// offset is looked up at run time in code specialized in another
    /// module), and a layout test checks it against
    /// `MemoryLayout.offset(of:)`.
    @inlinable @inline(__always)
    package static func word<Value>(_ object: AnyObject, at offset: Int, as _: Value.Type = Value.self) -> AtomicWord<
        Value
    > {
        let start = UnsafeMutableRawPointer(_getUnsafePointerToStoredProperties(object))
        return AtomicWord(at: (start + offset).assumingMemoryBound(to: AtomicWordStorage<Value>.self))
    }
}

/// An atomic view of one `AtomicWordStorage`, with the standard library's
/// `Atomic` API. Holds no storage: copy it freely; it is valid while the object owning
/// the storage lives.
@frozen @usableFromInline
package struct AtomicWord<Value: AtomicWordValue>: @unchecked Sendable {
    // @unchecked: a view that only ever accesses its word atomically.

    @usableFromInline let word: UnsafeMutablePointer<Value.StorageWord>

    @inlinable @inline(__always)
    init(at storage: UnsafeMutablePointer<AtomicWordStorage<Value>>) {
        // A single-field frozen struct has its field's layout.
        word = UnsafeMutableRawPointer(storage).assumingMemoryBound(to: Value.StorageWord.self)
    }

    @inlinable @inline(__always)
    package func load(ordering: AtomicLoadOrdering) -> Value {
        Value.decode(Value.StorageWord.atomicLoad(word, ordering.order))
    }

    @inlinable @inline(__always)
    package func store(_ desired: Value, ordering: AtomicStoreOrdering) {
        Value.StorageWord.atomicStore(word, Value.encode(desired), ordering.order)
    }

    @inlinable @inline(__always)
    @discardableResult
    package func exchange(_ desired: Value, ordering: AtomicUpdateOrdering) -> Value {
        Value.decode(Value.StorageWord.atomicExchange(word, Value.encode(desired), ordering.order))
    }

    /// Stores `desired` if the value is `expected`. `original` is the value
    /// found (equal to `expected` when `exchanged`).
    @inlinable @inline(__always)
    package func compareExchange(
        expected: Value, desired: Value, ordering: AtomicUpdateOrdering
    ) -> (exchanged: Bool, original: Value) {
        let expectedWord = Value.encode(expected)
        let found = Value.StorageWord.atomicCompareExchange(word, expectedWord, Value.encode(desired), ordering.order)
        return (found == expectedWord, Value.decode(found))
    }
}

extension AtomicWord where Value: FixedWidthInteger {
    /// Adds `operand`, wrapping on overflow.
    @inlinable @inline(__always)
    @discardableResult
    package func wrappingAdd(_ operand: Value, ordering: AtomicUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        let old = Value.decode(Value.StorageWord.atomicFetchAdd(word, Value.encode(operand), ordering.order))
        return (old, old &+ operand)
    }

    /// Subtracts `operand`, wrapping on overflow.
    @inlinable @inline(__always)
    @discardableResult
    package func wrappingSubtract(_ operand: Value, ordering: AtomicUpdateOrdering) -> (
        oldValue: Value, newValue: Value
    ) {
        let old = Value.decode(Value.StorageWord.atomicFetchSubtract(word, Value.encode(operand), ordering.order))
        return (old, old &- operand)
    }
}

extension AtomicWord where Value == UnsafeMutableRawPointer? {
    /// ``LazyObjectWord/made(_:)`` on this word: the object, made by `make`
    /// on first use. The owner's `deinit` calls ``releaseObject(_:)``.
    @inlinable
    package func objectMadeOnFirstUse<Object: AnyObject>(_ make: () -> Object) -> Object {
        LazyObjectWord<Object>(self).made(make).takeUnretainedValue()
    }

    /// ``LazyObjectWord/release()`` on this word.
    @inlinable
    package func releaseObject<Object: AnyObject>(_: Object.Type) {
        LazyObjectWord<Object>(self).release()
    }
}

/// An atomic value in an allocation of its own, freed with the value: for an
/// atomic that cannot be among its owner's first stored property's words (a
/// subclass's, a struct's, a static one, or one in another module of this
/// package). Costs an allocation and a pointer load per access; the engine's
/// per-delivery atomics stay inline (`AtomicWords`).
@usableFromInline
package struct HeapAtomicWord<Value: AtomicWordValue>: ~Copyable, @unchecked Sendable {
    // @unchecked: the word is only accessed atomically, through `view`.
    @usableFromInline let view: AtomicWord<Value>

    @inlinable
    package init(_ value: Value) {
        let storage = UnsafeMutablePointer<AtomicWordStorage<Value>>.allocate(capacity: 1)
        storage.initialize(to: AtomicWordStorage(value))
        view = AtomicWord(at: storage)
    }

    deinit {
        view.word.deallocate()
    }

    @inlinable @inline(__always)
    package func load(ordering: AtomicLoadOrdering) -> Value { view.load(ordering: ordering) }

    @inlinable @inline(__always)
    package func store(_ desired: Value, ordering: AtomicStoreOrdering) { view.store(desired, ordering: ordering) }

    @inlinable @inline(__always)
    @discardableResult
    package func exchange(_ desired: Value, ordering: AtomicUpdateOrdering) -> Value {
        view.exchange(desired, ordering: ordering)
    }

    @inlinable @inline(__always)
    package func compareExchange(
        expected: Value, desired: Value, ordering: AtomicUpdateOrdering
    ) -> (exchanged: Bool, original: Value) {
        view.compareExchange(expected: expected, desired: desired, ordering: ordering)
    }
}

extension HeapAtomicWord where Value: FixedWidthInteger {
    @inlinable @inline(__always)
    @discardableResult
    package func wrappingAdd(_ operand: Value, ordering: AtomicUpdateOrdering) -> (oldValue: Value, newValue: Value) {
        view.wrappingAdd(operand, ordering: ordering)
    }

    @inlinable @inline(__always)
    @discardableResult
    package func wrappingSubtract(_ operand: Value, ordering: AtomicUpdateOrdering) -> (
        oldValue: Value, newValue: Value
    ) {
        view.wrappingSubtract(operand, ordering: ordering)
    }
}
