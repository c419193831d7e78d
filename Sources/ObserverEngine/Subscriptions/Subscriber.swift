import CObserverCore

/// The root of every box stored in a slot. It has no stored properties, so
/// the plainest subscription costs one object header plus its closure.
@_documentation(visibility: internal) open class Subscriber: @unchecked Sendable {
    // @unchecked: boxes are created on the subscribing thread and called on
    // sending threads by design; their stored state is immutable or atomic.
    // Handlers are plain closures: the threading contract (a handler runs on
    // the sending thread unless given a queue or the main actor) is documented.

    public init() {}

    /// Called once, right after the box has been stored under `handle`.
    open func didAdd(handle: SlotHandle) {}

    /// True once the box will never deliver again and can be swept.
    open var isExpired: Bool { false }

    /// Whether the subscription can still deliver; expires it when not.
    open func checkLiveness() -> Bool { true }

    /// Whether this subscription was made for a target (`subscribe(target)`),
    /// dead or alive.
    open var hasTarget: Bool { false }

    /// Whether the box ends itself, through ``checkLiveness()``, once its
    /// target is deallocated (what the writers' amortized sweep of dead
    /// targets looks for). Boxes whose owner drops them instead (a
    /// registry's records) say false.
    package var expiresWithTarget: Bool { false }

    /// Ends the subscription (as a send meeting it would) when its target
    /// has started its deinit; for boxes that ``expiresWithTarget``. Takes
    /// no reference to the target, so it never runs the target's deinit.
    package func expireIfTargetIsGone() {}

    /// Whether `object` is this subscription's target, alive now: what
    /// `unsubscribe(_:)` matches. Compares the live reference, or an address
    /// whose memory the subscription keeps allocated, so an object allocated
    /// at a dead target's address is never taken for it.
    open func isTarget(_ object: AnyObject) -> Bool { false }
}

/// State for boxes stored once in one list that can expire on their own: a
/// deallocated target or an exhausted delivery limit. Knows its box's handle
/// so it can remove it.
///
/// Its atomic words (`Expiry.Words`) are its box's first stored property
/// (see `AtomicWord`): every box that keeps an expiry derives from
/// `Subscriber` through classes that declare no stored properties, declares
/// the words first, and passes itself to each call (`of: self`).
@usableFromInline
package struct Expiry: ~Copyable {
    // Unowned: the list outlives every send (sends hold its event strongly),
    // and `expire()` is only reached from a send or a writer of that list.
    private unowned(unsafe) let list: AnySlotList

    @usableFromInline
    package struct Words {
        // The box's handle, in two atomics: `sequence` is 0 until `didAdd`;
        // `index` is stored before it and read after it (see `didAdd`).
        package var sequence = AtomicWordStorage<UInt64>(0)
        package var index = AtomicWordStorage<UInt32>(0)
        package var expired = AtomicWordStorage<Bool>(false)
        /// Set once this box's removal was done (or found done already).
        package var removed = AtomicWordStorage<Bool>(false)

        @usableFromInline
        package init() {}

        // An 8-byte word, a 4-byte word, then two bytes.
        package static var sequenceOffset: Int { 0 }
        package static var indexOffset: Int { MemoryLayout<UInt64>.stride }
        package static var expiredOffset: Int { indexOffset + MemoryLayout<UInt32>.stride }
        package static var removedOffset: Int { expiredOffset + MemoryLayout<UInt8>.stride }
    }

    private func sequence(of box: AnyObject) -> AtomicWord<UInt64> { AtomicWords.word(box, at: Words.sequenceOffset) }
    private func index(of box: AnyObject) -> AtomicWord<UInt32> { AtomicWords.word(box, at: Words.indexOffset) }
    private func expired(of box: AnyObject) -> AtomicWord<Bool> { AtomicWords.word(box, at: Words.expiredOffset) }
    private func removed(of box: AnyObject) -> AtomicWord<Bool> { AtomicWords.word(box, at: Words.removedOffset) }

    @usableFromInline
    package init(list: AnySlotList) {
        self.list = list
    }

    @usableFromInline
    package func isExpired(of box: AnyObject) -> Bool { expired(of: box).load(ordering: .acquiring) }

    @usableFromInline
    package func didAdd(handle: SlotHandle, of box: AnyObject) {
        // Dekker with `expire()`: both sides store then load, sequentially
        // consistent, so at least one of them sees the other and removes.
        // The index is stored first (relaxed); the sequentially consistent
        // store of the sequence releases it to whoever loads the sequence.
        index(of: box).store(handle.index, ordering: .relaxed)
        sequence(of: box).store(handle.sequence, ordering: .sequentiallyConsistent)
        if expired(of: box).load(ordering: .sequentiallyConsistent) {
            list.remove(handle)
        }
    }

    /// Whether a delivery this box enqueued should still run: the box ended
    /// on its own (a spent limit's last deliveries were claimed before it
    /// expired; a dead target is checked again by the delivery itself), or it
    /// is still stored in `list`, that is, not cancelled. The caller passes
    /// the list it holds strongly (this one is unowned, and a queued delivery
    /// may outlive it).
    @usableFromInline
    package func isSubscribed(in list: AnySlotList, of box: AnyObject) -> Bool {
        guard !isExpired(of: box) else { return true }
        guard let handle = storedHandle(of: box) else { return false }
        if list.contains(handle) { return true }
        // Not stored: cancelled, or expired since the first load (a spent
        // limit expires the box before removing it, so a removal seen here
        // comes with `expired` set; acquire pairs with that exchange).
        return isExpired(of: box)
    }

    /// The box's handle, or nil before `didAdd`. Sequentially consistent:
    /// `expire()`'s side of the Dekker pairing with `didAdd`.
    package func storedHandle(of box: AnyObject) -> SlotHandle? {
        let sequence = sequence(of: box).load(ordering: .sequentiallyConsistent)
        if sequence == 0 { return nil }
        return SlotHandle(sequence: sequence, index: index(of: box).load(ordering: .relaxed))
    }

    /// The list, strongly: only while a send or writer of it runs.
    package var retainedList: AnySlotList { list }

    /// Marks the box expired and removes it without blocking. Called again
    /// (a later send met the box still stored, because the writer lock was
    /// busy the first time), it retries the removal until one succeeds.
    @usableFromInline
    package func expire(of box: AnyObject) {
        if expired(of: box).exchange(true, ordering: .sequentiallyConsistent) {
            // Relaxed: a stale false only costs one more non-blocking try.
            if removed(of: box).load(ordering: .relaxed) { return }
        }
        if let handle = storedHandle(of: box), list.removeFromSendPath(handle) {
            removed(of: box).store(true, ordering: .relaxed)
        }
    }
}
