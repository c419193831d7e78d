import ObserverEngine

/// One key of a ``KeyedEvent`` as an ``ObserverSource``: the source behind
/// `subscribe(key:...)`, so that a keyed subscription has every form an
/// ``Event``'s has, defined once. A key has no current value
/// to replay, so `replaying` is always nil here.
@usableFromInline
struct KeyScope<Key: Hashable, Value>: ObserverSource {
    @usableFromInline let event: KeyedEvent<Key, Value>
    @usableFromInline let key: Key

    @inlinable
    init(_ event: KeyedEvent<Key, Value>, _ key: Key) {
        self.event = event
        self.key = key
    }

    @inlinable
    func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if case .synchronous = delivery.route, limit == nil {
            // The keyed hot path: the event's sole handler, or the closure
            // in a cell of its own, no box.
            return event.observers.subscribe(handler, forKey: key)
        }
        return event.subscribeClosure(CollectionOfOne(key), delivery: delivery, limit: limit) { _, value in
            handler(value)
        }
    }

    @inlinable
    func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        event.subscribeTarget(target, forKey: key, delivery: delivery, limit: limit, handler)
    }
}
