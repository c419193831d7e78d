import ObserverSwift

// Flowduino 2.x's forms that take several keys (`for keys:` there, `keys:`
// here): each is the one-key call in a loop over the keys, in order.

extension KeyedObserverRegistry {
    /// Registers `observer` under each of `keys`; returns under how many it
    /// was new.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        keys: some Sequence<Key>, _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Int {
        keys.reduce(0) { $0 + (addKeyedObserver(key: $1, observer, delivery: delivery) ? 1 : 0) }
    }

    /// Unregisters `observer` from each of `keys`; returns from how many it
    /// was removed.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(keys: some Sequence<Key>, _ observer: AnyObject) -> Int {
        keys.reduce(0) { $0 + (removeKeyedObserver(key: $1, observer) ? 1 : 0) }
    }

    /// `withKeyedObservers(key:_:)` for each of `keys`, in order; `body`
    /// receives the key each observer was called for.
    @inlinable
    public func withKeyedObservers<Key: Hashable, P>(keys: some Sequence<Key>, _ body: (Key, P) -> Void) {
        for key in keys {
            withKeyedObservers(key: key, body)
        }
    }

    /// `dispatchToKeyedObservers(key:_:)` for each of `keys`, in order.
    @inlinable
    public func dispatchToKeyedObservers<Key: Hashable & Sendable, P>(
        keys: some Sequence<Key>, _ body: @escaping @Sendable (Key, P) -> Void
    ) {
        for key in keys {
            dispatchToKeyedObservers(key: key, body)
        }
    }
}
