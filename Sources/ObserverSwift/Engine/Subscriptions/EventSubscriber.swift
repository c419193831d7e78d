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
@usableFromInline
class EventSubscriber<Key, Value>: Subscriber, @unchecked Sendable {
    @usableFromInline
    func receive(_ key: Key, _ value: Value) {}
}

/// A closure with a queued or main-actor delivery, or a delivery limit (shared
/// by all of a keyed subscription's keys: `limit: n` means n deliveries in
/// total). Ends on its own through `Ending` once the limit is spent.
@usableFromInline
final class QueuedOrLimitedSubscriber<Key, Value, Ending: SubscriptionExpiry & ~Copyable>:
    EventSubscriber<Key, Value>, @unchecked Sendable
where Ending.Key == Key {
    /// First stored property: the words of an `Expiry` (see `AtomicWord`;
    /// `Subscriber` and `EventSubscriber` declare no stored properties).
    /// Concrete whatever `Ending` is, so every field's offset is a constant.
    var expiryWords = Expiry.Words()
    let handler: (Key, Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let expiry: Ending

    /// - Parameter limit: `Int.max` for no limit.
    @usableFromInline
    init(expiry: consuming Ending, delivery: Delivery, limit: Int, handler: @escaping (Key, Value) -> Void) {
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.expiry = expiry
    }

    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    override var isExpired: Bool { expiry.isExpired(of: self) }

    override func checkLiveness() -> Bool {
        !expiry.isExpired(of: self) && !limit.isSpent
    }

    override func receive(_ key: Key, _ value: Value) {
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

/// A keyed handler bound to a target it does not keep alive: stops (and
/// removes itself, from every key) once the target is deallocated; the
/// handler receives the live target, the key and the value (a
/// ``KeySelection``'s).
@usableFromInline
final class TargetSubscriber<Target: AnyObject, Key, Value, Ending: SubscriptionExpiry & ~Copyable>:
    EventSubscriber<Key, Value>, @unchecked Sendable
where Ending.Key == Key {
    /// First stored property: the words of an `Expiry` (see `AtomicWord`;
    /// `Subscriber` and `EventSubscriber` declare no stored properties).
    /// Concrete whatever `Ending` is, so every field's offset is a constant.
    var expiryWords = Expiry.Words()
    /// The target, taken strong for each call only while it lives (the
    /// runtime's try-retain on native Swift objects; see `UnownedObserver`).
    let target: UnownedObserver
    let handler: (Target, Key, Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let expiry: Ending

    /// - Parameter limit: `Int.max` for no limit.
    @usableFromInline
    init(
        target: Target, expiry: consuming Ending, delivery: Delivery, limit: Int,
        handler: @escaping (Target, Key, Value) -> Void
    ) {
        self.target = UnownedObserver(target)
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.expiry = expiry
    }

    override var hasTarget: Bool { true }
    override var expiresWithTarget: Bool { true }
    override func expireIfTargetIsGone() {
        if !expiry.isExpired(of: self) && target.hasStartedDeinit { expiry.expire(of: self) }
    }
    override func isTarget(_ object: AnyObject) -> Bool { target.refers(to: object) && target.isAlive }
    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    override var isExpired: Bool { expiry.isExpired(of: self) }

    override func checkLiveness() -> Bool {
        if expiry.isExpired(of: self) || limit.isSpent { return false }
        if !target.isAlive {
            expiry.expire(of: self)
            return false
        }
        return true
    }

    override func receive(_ key: Key, _ value: Value) {
        let delivered = target.withLive(Target.self) { target -> Bool in
            deliver(to: target, key, value)
            return true
        }
        if delivered == nil { expiry.expire(of: self) }
    }

    @inline(__always)
    private func deliver(to target: Target, _ key: Key, _ value: Value) {
        guard limit.admit(expiry, of: self) else { return }
        if case .synchronous = delivery.route { return handler(target, key, value) }
        deferDelivery(key, value)
    }

    /// A queued or main-actor delivery. Out of line, so that the synchronous
    /// path never looks up `Ending`'s associated types.
    @inline(never)
    private func deferDelivery(_ key: Key, _ value: Value) {
        // Re-check the target where the handler runs: it may be gone by the
        // time the queue gets to it.
        let scope = expiry.scope(forKey: key)
        let isSubscribed = { [self] in expiry.isSubscribed(in: scope, of: self) }
        delivery.run(ifSubscribed: isSubscribed) { [self] in
            _ = self.target.withLive(Target.self) { target in self.handler(target, key, value) }
        }
    }
}

/// An `Event`'s (or an `ObservableValue`'s) weak-target subscription: a
/// ``TargetSubscriber`` whose handler takes no key, stored as the caller
/// passed it, so a send calls the user's `(Target, Value)` closure directly
/// (no adapter closure between the box and it).
@usableFromInline
final class EventTargetSubscriber<Target: AnyObject, Value>: EventSubscriber<Void, Value>, @unchecked Sendable {
    /// First stored property: the words of an `Expiry` (see `AtomicWord`).
    var expiryWords = Expiry.Words()
    /// The target, taken strong for each call only while it lives.
    let target: UnownedObserver
    let handler: (Target, Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let expiry: Expiry

    /// - Parameter limit: `Int.max` for no limit.
    @usableFromInline
    init(
        target: Target, expiry: consuming Expiry, delivery: Delivery, limit: Int,
        handler: @escaping (Target, Value) -> Void
    ) {
        self.target = UnownedObserver(target)
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.expiry = expiry
    }

    override var hasTarget: Bool { true }
    override var expiresWithTarget: Bool { true }
    override func expireIfTargetIsGone() {
        if !expiry.isExpired(of: self) && target.hasStartedDeinit { expiry.expire(of: self) }
    }
    override func isTarget(_ object: AnyObject) -> Bool { target.refers(to: object) && target.isAlive }
    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    override var isExpired: Bool { expiry.isExpired(of: self) }

    override func checkLiveness() -> Bool {
        if expiry.isExpired(of: self) || limit.isSpent { return false }
        if !target.isAlive {
            expiry.expire(of: self)
            return false
        }
        return true
    }

    override func receive(_ key: Void, _ value: Value) {
        let delivered = target.withLive(Target.self) { target -> Bool in
            deliver(to: target, value)
            return true
        }
        if delivered == nil { expiry.expire(of: self) }
    }

    @inline(__always)
    private func deliver(to target: Target, _ value: Value) {
        guard limit.admit(expiry, of: self) else { return }
        if case .synchronous = delivery.route { return handler(target, value) }
        deferDelivery(value)
    }

    /// A queued or main-actor delivery, out of line.
    @inline(never)
    private func deferDelivery(_ value: Value) {
        // Re-check the target where the handler runs: it may be gone by the
        // time the queue gets to it.
        let list = expiry.retainedList
        let isSubscribed = { [self] in expiry.isSubscribed(in: list, of: self) }
        delivery.run(ifSubscribed: isSubscribed) { [self] in
            _ = self.target.withLive(Target.self) { target in self.handler(target, value) }
        }
    }
}

/// One key's weak-target subscription (`subscribe(target, key:)`): a
/// ``TargetSubscriber`` whose handler takes no key, stored as the caller
/// passed it, so a send calls the user's `(Target, Value)` closure directly.
final class KeyTargetSubscriber<Target: AnyObject, Key: Hashable, Value>: EventSubscriber<Key, Value>,
    @unchecked Sendable
{
    /// First stored property: unused words (see ``TargetSubscriber``), so
    /// that the fields' offsets match the other boxes'.
    var expiryWords = Expiry.Words()
    /// The target, taken strong for each call only while it lives.
    let target: UnownedObserver
    let handler: (Target, Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let expiry: KeyedRegistration<Key>

    /// - Parameter limit: `Int.max` for no limit.
    init(
        target: Target, expiry: KeyedRegistration<Key>, delivery: Delivery, limit: Int,
        handler: @escaping (Target, Value) -> Void
    ) {
        self.target = UnownedObserver(target)
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.expiry = expiry
    }

    override var hasTarget: Bool { true }
    override var expiresWithTarget: Bool { true }
    override func expireIfTargetIsGone() {
        if !expiry.isExpired(of: self) && target.hasStartedDeinit { expiry.expire(of: self) }
    }
    override func isTarget(_ object: AnyObject) -> Bool { target.refers(to: object) && target.isAlive }
    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    override var isExpired: Bool { expiry.isExpired(of: self) }

    override func checkLiveness() -> Bool {
        if expiry.isExpired(of: self) || limit.isSpent { return false }
        if !target.isAlive {
            expiry.expire(of: self)
            return false
        }
        return true
    }

    override func receive(_ key: Key, _ value: Value) {
        let delivered = target.withLive(Target.self) { target -> Bool in
            deliver(to: target, key, value)
            return true
        }
        if delivered == nil { expiry.expire(of: self) }
    }

    @inline(__always)
    private func deliver(to target: Target, _ key: Key, _ value: Value) {
        guard limit.admit(expiry, of: self) else { return }
        if case .synchronous = delivery.route { return handler(target, value) }
        deferDelivery(key, value)
    }

    /// A queued or main-actor delivery, out of line.
    @inline(never)
    private func deferDelivery(_ key: Key, _ value: Value) {
        // Re-check the target where the handler runs: it may be gone by the
        // time the queue gets to it.
        let isSubscribed = { [self] in expiry.isSubscribed(in: key, of: self) }
        delivery.run(ifSubscribed: isSubscribed) { [self] in
            _ = self.target.withLive(Target.self) { target in self.handler(target, value) }
        }
    }
}

extension DeliveryLimit {
    /// Claims one delivery for a subscription that ends through `expiry`:
    /// false once the budget is spent; the claim that spends it ends the
    /// subscription (its own delivery still goes ahead).
    @inline(__always)
    func admit<Ending: SubscriptionExpiry & ~Copyable>(_ expiry: borrowing Ending, of box: AnyObject) -> Bool {
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
