/// `subscribe(keys:)` with a synchronous, unlimited handler of key and value:
/// the keyed hot path, holding nothing but the closure. (`subscribe(key:)`'s
/// handler of the value alone is a `ClosureSubscriber`.)
final class KeyedClosureSubscriber<Key: Hashable, Value>: EventSubscriber<Key, Value>, @unchecked Sendable {
    let handler: (Key, Value) -> Void

    init(_ handler: @escaping (Key, Value) -> Void) {
        self.handler = handler
    }

    override func receive(_ key: Key, _ value: Value) {
        handler(key, value)
    }
}

/// `subscribe(key:_:)`: a synchronous, unlimited handler of the value alone
/// under one key, which is also its token's canceller, so that the
/// subscription is one object besides its token. Its slot is known right
/// after the add, before the token exists, and never changes: cancelling
/// removes that slot by identity, without a lock. The core issues each
/// handle once, so only the first of concurrent cancels removes it (and
/// returns true); a later one finds nothing.
@usableFromInline
final class OneKeyClosureSubscriber<Key, Value>: EventSubscriber<Key, Value>, @unchecked Sendable {
    // @unchecked: `handler` and `engine` are immutable; `slot` is written
    // once, by the subscribing thread before it makes the token, and read
    // only through the token (senders never read it).

    @usableFromInline let handler: (Value) -> Void
    /// Strong, for the reason given at `KeyedRegistration`: the cycle engine →
    /// box → engine ends when the box is removed (cancelled, or every
    /// subscription removed, as a `KeyedEvent` does when deallocated).
    @usableFromInline let engine: AnyKeyedSlotLists
    /// Where the box is stored. Unchecked exclusivity: written once before
    /// the token exists, then only read (a dynamic check would cost more
    /// than the rest of a cancel's Swift side).
    @exclusivity(unchecked)
    @usableFromInline var slot = KeyedSlot.notStored

    @usableFromInline
    init(engine: AnyKeyedSlotLists, _ handler: @escaping (Value) -> Void) {
        self.engine = engine
        self.handler = handler
    }

    override func receive(_ key: Key, _ value: Value) {
        handler(value)
    }

    /// Its token's canceller: itself.
    override var canceller: any SubscriptionCanceller { self }
}

// SPI like the protocol: `OneKeyClosureSubscriber` is `@usableFromInline`.
@_spi(Compatibility)
extension OneKeyClosureSubscriber: SubscriptionCanceller {
    @usableFromInline
    func cancelSubscription() -> Bool {
        engine.remove(slot)
    }

    @usableFromInline
    var isSubscriptionActive: Bool {
        engine.contains(slot)
    }
}
