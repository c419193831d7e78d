/// A box an `Event<Value>` delivers to. Subclasses override `receive(_:)`.
@usableFromInline
class EventSubscriber<Value>: Subscriber, @unchecked Sendable {
    @usableFromInline
    func receive(_ value: Value) {}
}

/// A closure called synchronously for every send: the hot path, holding
/// nothing but the closure.
@usableFromInline
final class ClosureSubscriber<Value>: EventSubscriber<Value>, @unchecked Sendable {
    let handler: @Sendable (Value) -> Void

    @usableFromInline
    init(_ handler: @escaping @Sendable (Value) -> Void) {
        self.handler = handler
    }

    override func receive(_ value: Value) {
        handler(value)
    }
}

/// A closure with a delivery other than synchronous, or a delivery limit.
@usableFromInline
final class ConfiguredClosureSubscriber<Value>: EventSubscriber<Value>, @unchecked Sendable {
    let handler: @Sendable (Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let expiry: Expiry

    @usableFromInline
    init(list: AnySlotList, delivery: Delivery, limit: Int, handler: @escaping @Sendable (Value) -> Void) {
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.expiry = Expiry(list: list)
    }

    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle) }
    override var isExpired: Bool { expiry.isExpired }

    override func checkLiveness() -> Bool {
        !expiry.isExpired && !limit.isSpent
    }

    override func receive(_ value: Value) {
        if limit.isBounded {
            let claim = limit.claim()
            guard claim.granted else { return expiry.expire() }
            if claim.last { expiry.expire() }
        }
        if case .synchronous = delivery { return handler(value) }
        let handler = handler
        let list = expiry.retainedList
        let isSubscribed = { [self] in expiry.isSubscribed(in: list) }
        delivery.run(ifSubscribed: isSubscribed) { handler(value) }
    }
}

/// A handler bound to a target it does not keep alive: stops (and removes itself) once
/// the target is deallocated; the handler receives the live target.
@usableFromInline
final class TargetSubscriber<Target: AnyObject, Value>: EventSubscriber<Value>, @unchecked Sendable {
    /// The target, taken strong for each call only while it lives (the
    /// runtime's try-retain on native Swift objects; see `UnownedObserver`).
    let target: UnownedObserver
    let handler: @Sendable (Target, Value) -> Void
    let delivery: Delivery
    let limit: DeliveryLimit
    let expiry: Expiry

    @usableFromInline
    init(
        list: AnySlotList, target: Target, delivery: Delivery, limit: Int,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) {
        self.target = UnownedObserver(target)
        self.handler = handler
        self.delivery = delivery
        self.limit = DeliveryLimit(limit)
        self.expiry = Expiry(list: list)
    }

    override var hasTarget: Bool { true }
    override func isTarget(_ object: AnyObject) -> Bool { target.refers(to: object) && target.isAlive }
    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle) }
    override var isExpired: Bool { expiry.isExpired }

    override func checkLiveness() -> Bool {
        if expiry.isExpired || limit.isSpent { return false }
        if !target.isAlive {
            expiry.expire()
            return false
        }
        return true
    }

    override func receive(_ value: Value) {
        let delivered = target.withLive(Target.self) { target -> Bool in
            deliver(to: target, value)
            return true
        }
        if delivered == nil { expiry.expire() }
    }

    @inline(__always)
    private func deliver(to target: Target, _ value: Value) {
        if limit.isBounded {
            let claim = limit.claim()
            guard claim.granted else { return expiry.expire() }
            if claim.last { expiry.expire() }
        }
        switch delivery {
        case .synchronous:
            handler(target, value)
        case .queue, .mainActor:
            // Re-check the target where the handler runs: it may be gone
            // by the time the queue gets to it.
            let list = expiry.retainedList
            let isSubscribed = { [self] in expiry.isSubscribed(in: list) }
            delivery.run(ifSubscribed: isSubscribed) { [self] in
                _ = self.target.withLive(Target.self) { target in self.handler(target, value) }
            }
        }
    }
}
