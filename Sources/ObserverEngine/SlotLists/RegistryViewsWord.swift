/// The word a protocol registry keeps for its protocol views, in one of
/// three forms:
/// - 0: no view and no sole stored observer;
/// - a view node's address (bit 0 clear): the newest node of the list of
///   views, which links to the older ones; the owner keeps the nodes;
/// - a ``SoleStoredObserver``'s address with bit 0 set: the one observer
///   the registry calls without views, retained by the word.
///
/// A view of a word its owner keeps (see `AtomicWord`), holding nothing
/// itself: copy it freely; it is valid while the owner lives. Writers change
/// the word under the owner's writer lock; senders load it with acquire
/// inside a read section, so a sole stored observer taken out
/// (``retireSoleStored()``) is released only after every section in
/// progress has ended.
@usableFromInline
package struct RegistryViewsWord<Node: AnyObject> {
    @usableFromInline
    let word: AtomicWord<UInt>

    /// The word at `offset` bytes into `owner`'s first stored property.
    @inlinable @inline(__always)
    package init(in owner: AnyObject, at offset: Int) {
        word = AtomicWords.word(owner, at: offset)
    }

    /// Bit 0: the word holds a ``SoleStoredObserver`` (objects are at least
    /// 8-byte aligned, so no address has it).
    @inlinable
    static var soleStoredTag: UInt { 1 }

    /// The sole stored observer a loaded word holds, or nil when it holds
    /// none (nothing, or a view node).
    @inlinable @inline(__always)
    static func soleStored(in loaded: UInt) -> Unmanaged<SoleStoredObserver>? {
        guard loaded & soleStoredTag != 0 else { return nil }
        return Unmanaged(atomicAddress: loaded & ~soleStoredTag)
    }

    // MARK: The list of views

    /// The newest view node, or nil when the word holds none (no view was
    /// made, or it holds the sole stored observer). Acquiring pairs with
    /// ``publish(head:)``: the node's fields are visible.
    @inlinable @inline(__always)
    package func loadHead(ordering: AtomicLoadOrdering) -> Unmanaged<Node>? {
        let loaded = word.load(ordering: ordering)
        if loaded & Self.soleStoredTag != 0 { return nil }
        return Unmanaged(atomicAddress: loaded)
    }

    /// Publishes `node`, already linked to the head it replaces, as the
    /// newest view node. Writers, the sole stored observer taken out first.
    @inlinable
    package func publish(head node: Unmanaged<Node>) {
        word.store(node.atomicAddress, ordering: .releasing)
    }

    // MARK: The sole stored observer

    /// Calls `body` with the sole stored observer borrowed (no retain), or
    /// returns nil when the word holds none. Inside a read section that
    /// lasts as long as `body`'s use of it.
    @inlinable @inline(__always)
    package func withSoleStored<Result>(_ body: (SoleStoredObserver) -> Result) -> Result? {
        // Acquire: pairs with the release in `publish(soleStored:)`.
        guard let stored = Self.soleStored(in: word.load(ordering: .acquiring)) else { return nil }
        // A closure literal, not `body` passed on: so the optimizer
        // specializes a sender's closure through this call (callgrind, a
        // registry's send to its one observer: 148 instructions, 190 with
        // `body` passed on).
        return stored._withUnsafeGuaranteedRef { body($0) }
    }

    /// The sole stored observer, unretained (the word keeps it), or nil.
    /// Writers, under the owner's writer lock.
    package var soleStored: SoleStoredObserver? {
        Self.soleStored(in: word.load(ordering: .relaxed))?.takeUnretainedValue()
    }

    /// Publishes `stored`, retained by the word, in place of nothing.
    /// Writers, when the word holds 0.
    package func publish(soleStored stored: SoleStoredObserver) {
        let address = Unmanaged.passRetained(stored).atomicAddress
        word.store(address | Self.soleStoredTag, ordering: .releasing)
    }

    /// Takes the sole stored observer out (the word becomes 0) and gives
    /// back the word's reference once every read section in progress has
    /// ended. Does nothing when the word holds none. Writers.
    package func retireSoleStored() {
        guard let stored = Self.soleStored(in: word.load(ordering: .relaxed)) else { return }
        word.store(0, ordering: .releasing)
        SoleStoredObserver.retire(stored)
    }

    /// Gives back the word's reference to the sole stored observer at once,
    /// if it holds one: for the owner's `deinit`, when no sender runs.
    package func releaseSoleStored() {
        guard let stored = Self.soleStored(in: word.load(ordering: .acquiring)) else { return }
        word.store(0, ordering: .relaxed)
        stored.release()
    }
}
