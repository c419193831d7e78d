/// A box a `KeyedEvent<Key, Value>` delivers to, stored under each of its
/// subscription's keys. Subclasses override `receive(_:_:)`.
@usableFromInline
class KeyedEventSubscriber<Key: Hashable, Value>: Subscriber, @unchecked Sendable {
    @usableFromInline
    func receive(_ key: Key, _ value: Value) {}
}

/// `subscribe(key:)` with a synchronous, unlimited handler of the value:
/// the hot path, holding nothing but the closure.
final class KeyedValueClosureSubscriber<Key: Hashable, Value>: KeyedEventSubscriber<Key, Value>,
    @unchecked Sendable
{
    let handler: (Value) -> Void

    init(_ handler: @escaping (Value) -> Void) {
        self.handler = handler
    }

    override func receive(_ key: Key, _ value: Value) {
        handler(value)
    }
}

/// `subscribe(keys:)` with a synchronous, unlimited handler of key and value.
final class KeyedClosureSubscriber<Key: Hashable, Value>: KeyedEventSubscriber<Key, Value>,
    @unchecked Sendable
{
    let handler: (Key, Value) -> Void

    init(_ handler: @escaping (Key, Value) -> Void) {
        self.handler = handler
    }

    override func receive(_ key: Key, _ value: Value) {
        handler(key, value)
    }
}

/// A closure with a delivery other than synchronous, or a delivery limit
/// (shared by all its keys: `limit: n` means n deliveries in total).
final class KeyedConfiguredClosureSubscriber<Key: Hashable, Value>: KeyedEventSubscriber<Key, Value>,
    @unchecked Sendable
{
    let handler: (Key, Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let registration: KeyedRegistration<Key>

    init(
        registration: KeyedRegistration<Key>, delivery: Delivery, limit: Int,
        handler: @escaping (Key, Value) -> Void
    ) {
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.registration = registration
    }

    override var isExpired: Bool { registration.isEnded }

    override func checkLiveness() -> Bool {
        !registration.isEnded && !limit.isSpent
    }

    override func receive(_ key: Key, _ value: Value) {
        if limit.isBounded {
            let claim = limit.claim()
            guard claim.granted else { return registration.expireFromSendPath() }
            if claim.last { registration.expireFromSendPath() }
        }
        if case .synchronous = delivery { return handler(key, value) }
        let handler = handler
        let isSubscribed = { [registration] in registration.isSubscribed(underKey: key) }
        delivery.run(ifSubscribed: isSubscribed) {
            handler(key, value)
        }
    }
}

/// A handler bound to a weakly held target: stops (and removes itself from
/// every key) once the target is deallocated; the handler gets the target.
final class KeyedTargetSubscriber<Target: AnyObject, Key: Hashable, Value>: KeyedEventSubscriber<Key, Value>,
    @unchecked Sendable
{
    weak var target: Target?
    let handler: (Target, Key, Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let registration: KeyedRegistration<Key>

    init(
        registration: KeyedRegistration<Key>, target: Target, delivery: Delivery, limit: Int,
        handler: @escaping (Target, Key, Value) -> Void
    ) {
        self.target = target
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.registration = registration
    }

    override var hasTarget: Bool { true }
    override func isTarget(_ object: AnyObject) -> Bool { target.map { $0 === object } ?? false }
    override var isExpired: Bool { registration.isEnded }

    override func checkLiveness() -> Bool {
        if registration.isEnded || limit.isSpent { return false }
        if target == nil {
            registration.expireFromSendPath()
            return false
        }
        return true
    }

    override func receive(_ key: Key, _ value: Value) {
        guard let target else {
            registration.expireFromSendPath()
            return
        }
        if limit.isBounded {
            let claim = limit.claim()
            guard claim.granted else { return registration.expireFromSendPath() }
            if claim.last { registration.expireFromSendPath() }
        }
        switch delivery {
        case .synchronous:
            handler(target, key, value)
        case .queue, .mainActor:
            // Re-check the target where the handler runs: it may be gone
            // by the time the queue gets to it.
            let isSubscribed = { [registration] in registration.isSubscribed(underKey: key) }
            delivery.run(ifSubscribed: isSubscribed) { [self] in
                if let target = self.target { self.handler(target, key, value) }
            }
        }
    }
}
