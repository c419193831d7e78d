import ObserverEngine

/// Several keys of a ``KeyedEvent``, subscribed to as one: each
/// subscription is one ``Subscription`` whose `cancel()` removes it from
/// every key, and its handler receives each key with the value sent for it.
///
/// Made by ``KeyedEvent/forKeys(_:)``. Every ``ObserverSource`` form works
/// on it; a `limit` counts deliveries over all the keys. Duplicate keys
/// count once; no keys at all subscribes nothing (an inactive token).
///
/// ```swift
/// let moves = KeyedEvent<String, Int>()
/// let token = moves.forKeys(["north", "south"]).subscribe { direction, steps in
///     print(direction, steps)
/// }
/// moves.send(3, forKey: "north")   // prints "north 3"
/// token.cancel()
/// ```
public struct KeySelection<Key: Hashable, Element> {
    let event: KeyedEvent<Key, Element>
    let keys: [Key]
}

/// Keys have no current value: `replaying` is
/// always nil.
extension KeySelection: ObserverSource {
    /// Each delivery: the key the value was sent for, and the value.
    public typealias Value = (key: Key, value: Element)

    public func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable ((key: Key, value: Element)) -> Void
    ) -> Subscription {
        if case .synchronous = delivery.route, limit == nil {
            return event.register(keys, KeyedClosureSubscriber { key, value in handler((key, value)) })
        }
        return event.subscribeClosure(keys, delivery: delivery, limit: limit) { key, value in handler((key, value)) }
    }

    public func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable (Target, (key: Key, value: Element)) -> Void
    ) -> Subscription {
        event.subscribeTarget(target, keys, delivery: delivery, limit: limit) { target, key, value in
            handler(target, (key, value))
        }
    }
}

extension KeySelection: Sendable where Key: Sendable, Element: Sendable {}

extension KeyedEvent {
    /// The keys `keys` as one source: subscribe to it to receive each of
    /// them with one token, the handler getting the key with the value.
    ///
    /// ```swift
    /// let prices = KeyedEvent<String, Double>()
    /// let tech = prices.forKeys(["MSFT", "GOOG"]).subscribe { symbol, price in print(symbol, price) }
    /// prices.send(412.5, forKey: "MSFT")   // prints "MSFT 412.5"
    /// tech.cancel()
    /// ```
    public func forKeys(_ keys: some Sequence<Key>) -> KeySelection<Key, Value> {
        KeySelection(event: self, keys: Array(keys))
    }
}
