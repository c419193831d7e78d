/// A box an event delivers to: `Event<Value>` stores `EventSubscriber<Void, Value>`
/// boxes (its sends pass `()` as the key), `KeyedEvent<Key, Value>` stores
/// `EventSubscriber<Key, Value>` boxes under each of their keys. Plain
/// closures need no box: both store them as ``HandlerCell``s (an `Event`
/// with no other subscription, as a ``SoleHandler``). Subclasses
/// override ``receive(_:_:)``. A limit and a queued or main-actor delivery
/// are handled by one box both kinds share. A weak target's handler is
/// stored as the caller passed it and called without an adapter: an
/// `Event`'s by ``EventTargetSubscriber``, one key's by
/// `KeyTargetSubscriber`, a ``KeySelection``'s (whose handler takes the
/// key) by ``TargetSubscriber``.
@_documentation(visibility: internal) open class EventSubscriber<Key, Value>: Subscriber, @unchecked Sendable {
    public override init() {}

    open func receive(_ key: Key, _ value: Value) {}
}

/// A closure with a queued or main-actor delivery, or a delivery limit (shared
/// by all of a keyed subscription's keys: `limit: n` means n deliveries in
/// total). Ends on its own through `Ending` once the limit is spent.
@usableFromInline
package final class QueuedOrLimitedSubscriber<Key, Value, Ending: SubscriptionExpiry & ~Copyable>:
    EventSubscriber<Key, Value>, @unchecked Sendable
where Ending.Key == Key {
    /// First stored property: the words of an `Expiry` (see `AtomicWord`;
    /// `Subscriber` and `EventSubscriber` declare no stored properties).
    /// Concrete whatever `Ending` is, so every field's offset is a constant.
    package var expiryWords = Expiry.Words()
    package let handler: (Key, Value) -> Void
    package let delivery: Delivery
    package let limit: DeliveryLimit
    package let expiry: Ending

    /// - Parameter limit: `Int.max` for no limit.
    @usableFromInline
    package init(expiry: consuming Ending, delivery: Delivery, limit: Int, handler: @escaping (Key, Value) -> Void) {
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.expiry = expiry
    }

    package override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    package override var isExpired: Bool { expiry.isExpired(of: self) }

    package override func checkLiveness() -> Bool {
        !expiry.isExpired(of: self) && !limit.isSpent
    }

    package override func receive(_ key: Key, _ value: Value) {
        guard limit.admit(expiry, of: self) else { return }
        if case .synchronous = delivery.route { return handler(key, value) }
        deferDelivery(key, value)
    }

    /// Out of line, so that the synchronous path never looks up `Ending`'s
    /// associated types.
    @inline(never)
    private func deferDelivery(_ key: Key, _ value: Value) {
        let handler = handler
        let scope = expiry.scope(forKey: key)
        let isSubscribed = { [self] in expiry.isSubscribed(in: scope, of: self) }
        delivery.run(ifSubscribed: isSubscribed) { handler(key, value) }
    }
}

/// A handler bound to a target it does not keep alive: stops (and removes
/// itself, from every key) once the target is deallocated. What every
/// weak-target box shares; each subclass stores its handler as the caller
/// passed it and calls it without an adapter: a ``KeySelection``'s (which
/// takes the key) in ``TargetSubscriber``, one key's in
/// ``KeyTargetSubscriber``, an `Event`'s (or an `ObservableValue`'s) in
/// ``EventTargetSubscriber``. Each subclass fixes `Ending`, so that every
/// field's offset, its handler's included, is a constant.
@usableFromInline
package class WeakTargetSubscriber<Target: AnyObject, Key, Value, Ending: SubscriptionExpiry & ~Copyable>:
    EventSubscriber<Key, Value>, @unchecked Sendable
where Ending.Key == Key {
    /// First stored property: the words of an `Expiry` (see `AtomicWord`;
    /// `Subscriber` and `EventSubscriber` declare no stored properties).
    /// A keyed registration keeps its own words and leaves these unused.
    package var expiryWords = Expiry.Words()
    /// The target, taken strong for each call only while it lives (the
    /// runtime's try-retain on native Swift objects; see `UnownedObserver`).
    package let target: UnownedObserver
    /// Nil for the common box, synchronous and without a limit, which so
    /// stays a 72-byte object with an `Event`'s handler (an 80-byte heap
    /// block); otherwise where it delivers and its limit.
    package let terms: DeliveryTerms?
    package let expiry: Ending

    /// - Parameter limit: `Int.max` for no limit.
    @usableFromInline
    package init(target: Target, expiry: consuming Ending, delivery: Delivery, limit: Int) {
        self.target = UnownedObserver(target)
        if case .synchronous = delivery.route, limit == Int.max {
            self.terms = nil
        } else {
            self.terms = DeliveryTerms(delivery: delivery, limit: limit)
        }
        self.expiry = expiry
    }

    package override var hasTarget: Bool { true }
    package override var expiresWithTarget: Bool { true }
    package override func expireIfTargetIsGone() {
        if !expiry.isExpired(of: self) && target.hasStartedDeinit { expiry.expire(of: self) }
    }
    package override func isTarget(_ object: AnyObject) -> Bool { target.refers(to: object) && target.isAlive }
    package override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    package override var isExpired: Bool { expiry.isExpired(of: self) }

    package override func checkLiveness() -> Bool {
        if expiry.isExpired(of: self) || terms?.limit.isSpent == true { return false }
        if !target.isAlive {
            expiry.expire(of: self)
            return false
        }
        return true
    }

    /// One delivery of `key`'s value: with the target taken strong, `call`
    /// on the sending thread, or the handler call `deferredCall` makes, on
    /// the delivery's queue or actor. A gone target ends the subscription; a
    /// spent limit delivers nothing.
    @inline(__always)
    package final func deliver(
        forKey key: Key, calling call: (Target) -> Void, deferred deferredCall: () -> (Target) -> Void
    ) {
        let delivered = target.withLive(Target.self) { target -> Bool in
            guard let terms else {
                call(target)
                return true
            }
            guard terms.limit.admit(expiry, of: self) else { return true }
            if case .synchronous = terms.delivery.route {
                call(target)
            } else {
                deferDelivery(forKey: key, on: terms.delivery, deferredCall())
            }
            return true
        }
        if delivered == nil { expiry.expire(of: self) }
    }

    /// A queued or main-actor delivery, out of line. Re-checks the target
    /// where the handler runs: it may be gone by the time the queue gets to
    /// it.
    @inline(never)
    private final func deferDelivery(forKey key: Key, on delivery: Delivery, _ call: @escaping (Target) -> Void) {
        let scope = expiry.scope(forKey: key)
        let isSubscribed = { [self] in expiry.isSubscribed(in: scope, of: self) }
        delivery.run(ifSubscribed: isSubscribed) { [self] in
            _ = self.target.withLive(Target.self, call)
        }
    }
}

/// A ``KeySelection``'s weak-target subscription: the handler receives the
/// live target, the key and the value.
package final class TargetSubscriber<Target: AnyObject, Key: Hashable, Value>:
    WeakTargetSubscriber<Target, Key, Value, KeyedRegistration<Key>>, @unchecked Sendable
{
    package let handler: (Target, Key, Value) -> Void

    /// - Parameter limit: `Int.max` for no limit.
    package init(
        target: Target, expiry: KeyedRegistration<Key>, delivery: Delivery, limit: Int,
        handler: @escaping (Target, Key, Value) -> Void
    ) {
        self.handler = handler
        super.init(target: target, expiry: expiry, delivery: delivery, limit: limit)
    }

    package override func receive(_ key: Key, _ value: Value) {
        deliver(
            forKey: key, calling: { handler($0, key, value) }, deferred: { [handler] in { handler($0, key, value) } })
    }
}

/// An `Event`'s (or an `ObservableValue`'s) weak-target subscription: the
/// handler takes no key, so a send calls the user's `(Target, Value)`
/// closure directly.
@usableFromInline
package final class EventTargetSubscriber<Target: AnyObject, Value>:
    WeakTargetSubscriber<Target, Void, Value, Expiry>, @unchecked Sendable
{
    package let handler: (Target, Value) -> Void

    /// - Parameter limit: `Int.max` for no limit.
    @usableFromInline
    package init(
        target: Target, expiry: consuming Expiry, delivery: Delivery, limit: Int,
        handler: @escaping (Target, Value) -> Void
    ) {
        self.handler = handler
        super.init(target: target, expiry: expiry, delivery: delivery, limit: limit)
    }

    package override func receive(_ key: Void, _ value: Value) {
        deliver(forKey: key, calling: { handler($0, value) }, deferred: { [handler] in { handler($0, value) } })
    }
}

/// One key's weak-target subscription (`subscribe(target, key:)`): the
/// handler takes no key, so a send calls the user's `(Target, Value)`
/// closure directly.
package final class KeyTargetSubscriber<Target: AnyObject, Key: Hashable, Value>:
    WeakTargetSubscriber<Target, Key, Value, KeyedRegistration<Key>>, @unchecked Sendable
{
    package let handler: (Target, Value) -> Void

    /// - Parameter limit: `Int.max` for no limit.
    package init(
        target: Target, expiry: KeyedRegistration<Key>, delivery: Delivery, limit: Int,
        handler: @escaping (Target, Value) -> Void
    ) {
        self.handler = handler
        super.init(target: target, expiry: expiry, delivery: delivery, limit: limit)
    }

    package override func receive(_ key: Key, _ value: Value) {
        deliver(forKey: key, calling: { handler($0, value) }, deferred: { [handler] in { handler($0, value) } })
    }
}

extension DeliveryLimit {
    /// Claims one delivery for a subscription that ends through `expiry`:
    /// false once the budget is spent; the claim that spends it ends the
    /// subscription (its own delivery still goes ahead).
    @inline(__always)
    package func admit<Ending: SubscriptionExpiry & ~Copyable>(_ expiry: borrowing Ending, of box: AnyObject) -> Bool {
        guard isBounded else { return true }
        let claim = claim()
        guard claim.granted else {
            expiry.expire(of: box)
            return false
        }
        if claim.last { expiry.expire(of: box) }
        return true
    }
}

/// A weak-target box's delivery and limit when either is not the default
/// (synchronous, no limit): made only for such boxes. Immutable.
package final class DeliveryTerms: @unchecked Sendable {
    // @unchecked: immutable; the limit's word is only accessed atomically.
    package let delivery: Delivery
    package let limit: DeliveryLimit

    /// - Parameter limit: `Int.max` for no limit.
    package init(delivery: Delivery, limit: Int) {
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
    }
}
