import CObserverCore

/// The keys and handles of one keyed subscription: one box stored under
/// each of its keys. Shared by the subscription's token (which cancels it)
/// and, for boxes that can expire on their own (a weak target died, a
/// delivery limit is spent), by the box.
///
/// Adding a key and expiring are serialized by a mutex, so a subscription
/// that expires while its keys are still being added (a send to its first
/// key spends a limit of 1) removes every key, including those added later.
/// A send takes that mutex only in the rare call that expires the box.
final class KeyedRegistration<Key: Hashable>: SubscriptionRegistration, SubscriptionCanceller, @unchecked Sendable {
    // @unchecked: mutable state is behind `state`'s lock; `ended` is atomic;
    // the engine is immutable and internally synchronized.

    /// First stored property: the words of `ended` and `expired` (see `AtomicWord`).
    var words = Words()

    struct Words {
        var ended = AtomicWordStorage<Bool>(false)
        var expired = AtomicWordStorage<Bool>(false)
        static var endedOffset: Int { 0 }
        static var expiredOffset: Int { MemoryLayout<UInt8>.stride }
    }

    private struct State {
        var entries: [KeyedSlot] = []
        var ended = false
    }

    /// Strong, as `Subscription` holds an `Event`'s list: a weak reference
    /// would give the engine a side table and send every retain and release
    /// of it down the runtime's slow path. A token (or box) that outlives its
    /// `KeyedEvent` keeps only the emptied map alive: the event removes every
    /// subscription when it is deallocated, which also ends the cycle engine →
    /// box → registration → engine.
    private let engine: AnyKeyedSlotLists
    /// The keys are only copied under the lock. (The value is not zero-sized
    /// on purpose: ThreadSanitizer misreports accesses to an empty `inout`
    /// value guarded by a lock as races.)
    private let state = Locked(State())
    private var ended: AtomicWord<Bool> { AtomicWords.word(self, at: Words.endedOffset) }
    /// Set when it ended on its own (a spent limit, a dead target), not by
    /// a cancellation.
    private var expired: AtomicWord<Bool> { AtomicWords.word(self, at: Words.expiredOffset) }

    init(engine: AnyKeyedSlotLists) {
        self.engine = engine
    }

    /// True once cancelled or expired through this registration.
    var isEnded: Bool { ended.load(ordering: .acquiring) }

    /// Records where the box was stored under one of its keys, right after
    /// it was added. When the registration ended meanwhile, removes it again.
    /// Removal goes by that record, never by comparing keys, so it works
    /// whatever the key's `==` and hash do.
    func record(_ slot: KeyedSlot) {
        let accepted = state.withLock { state -> Bool in
            if state.ended { return false }
            state.entries.append(slot)
            return true
        }
        if !accepted { engine.remove(slot) }
    }

    /// Ends the registration and hands back its entries (empty when it had
    /// ended already).
    private func end(expiring: Bool = false) -> [KeyedSlot] {
        state.withLock { state in
            if state.ended { return [] }
            state.ended = true
            if expiring { expired.store(true, ordering: .relaxed) }
            ended.store(true, ordering: .releasing)
            defer { state.entries.removeAll() }
            return state.entries
        }
    }

    /// Expires from a send: removes every key without blocking. Called again
    /// (a later send met the box still stored because a writer lock was busy
    /// the first time), retries the queued removals without blocking.
    func expireFromSendPath() {
        if isEnded {
            engine.retryPendingRemovalsFromSendPath()
            return
        }
        let entries = end(expiring: true)
        guard !entries.isEmpty else { return }
        for slot in entries {
            engine.removeFromSendPath(slot)
        }
    }

    // MARK: SubscriptionCanceller

    override package func cancelSubscription() -> Bool {
        let entries = end()
        var removed = false
        for slot in entries where engine.remove(slot) {
            removed = true
        }
        return removed
    }

    /// Whether a delivery for `key` enqueued by this subscription's box
    /// should still run (see `Delivery.run(ifSubscribed:_:)`): the
    /// subscription ended on its own (its last deliveries were claimed
    /// before), or it is not cancelled and still stored under a key with
    /// `key`'s hash. (Two keys of one subscription whose 64-bit hashes are
    /// equal are not told apart here.)
    func isSubscribed(underKey key: Key) -> Bool {
        if ended.load(ordering: .acquiring) { return expired.load(ordering: .relaxed) }
        let hash = AnyKeyedSlotLists.hash(key)
        let entries = state.withLock { $0.entries }
        if entries.contains(where: { $0.hash == hash && engine.contains($0) }) { return true }
        // Not stored: cancelled, or ended since the first load (`end` sets
        // `ended` before it gives the entries back for removal).
        return ended.load(ordering: .acquiring) && expired.load(ordering: .relaxed)
    }

    override package var isSubscriptionActive: Bool {
        let entries = state.withLock { $0.entries }
        return entries.contains { engine.contains($0) }
    }
}

/// The registration of a subscription stored under one key whose box never
/// ends on its own (a closure without limit or target, as
/// `KeyedEvent.subscribe(key:_:)` makes): its slot is known before its token
/// exists and never changes, so it needs neither a lock nor a list of
/// entries. Cancelling removes that slot by identity; the core issues each
/// handle once, so only the first of concurrent cancels removes it (and
/// returns true), and a later one finds nothing. An object of its own, not
/// the box: a token may be kept long after its subscription ends, and must
/// not keep the handler (and what it captures) alive meanwhile.
final class KeyedSlotRegistration: SubscriptionRegistration, SubscriptionCanceller, @unchecked Sendable {
    // @unchecked: immutable; the engine is internally synchronized.

    /// Strong, for the reason given at ``KeyedRegistration``.
    private let engine: AnyKeyedSlotLists
    private let slot: KeyedSlot

    init(engine: AnyKeyedSlotLists, slot: KeyedSlot) {
        self.engine = engine
        self.slot = slot
    }

    override func cancelSubscription() -> Bool {
        engine.remove(slot)
    }

    override var isSubscriptionActive: Bool {
        engine.contains(slot)
    }
}
