import ObserverSwift

// Flowduino's array forms: `addObserver([a, b])`, `removeObserver([a, b])`
// and their keyed twins. Each is the single-observer call in a loop, and
// returns how many registrations it changed.

extension ObserverRegistry {
    /// Registers every observer of `observers`; returns how many were new.
    @discardableResult
    public func addObserver(_ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous) -> Int {
        observers.reduce(0) { $0 + (insertObserver($1, delivery: delivery) ? 1 : 0) }
    }

    /// Unregisters every observer of `observers`; returns how many were registered.
    @discardableResult
    public func removeObserver(_ observers: [AnyObject]) -> Int {
        observers.reduce(0) { $0 + (removeObserver($1) ? 1 : 0) }
    }
}

extension ProtocolObservable {
    /// Registers every observer of `observers`; returns how many were new.
    @discardableResult
    public func addObserver(_ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous) -> Int {
        observerRegistry.addObserver(observers, delivery: delivery)
    }

    /// Unregisters every observer of `observers`; returns how many were registered.
    @discardableResult
    public func removeObserver(_ observers: [AnyObject]) -> Int {
        observerRegistry.removeObserver(observers)
    }
}

extension KeyedObserverRegistry {
    /// Registers every observer of `observers` under `key`; returns how many were new there.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        key: Key, _ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous
    ) -> Int {
        observers.reduce(0) { $0 + (insertObserver($1, key: key, delivery: delivery) ? 1 : 0) }
    }

    /// Registers every observer of `observers` under each of `keys`; returns
    /// how many (key, observer) registrations were new.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        keys: some Sequence<Key>, _ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous
    ) -> Int {
        keys.reduce(0) { $0 + addKeyedObserver(key: $1, observers, delivery: delivery) }
    }

    /// Unregisters every observer of `observers` from `key`; returns how many were registered there.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(key: Key, _ observers: [AnyObject]) -> Int {
        observers.reduce(0) { $0 + (removeObserver($1, key: key) ? 1 : 0) }
    }

    /// Unregisters every observer of `observers` from each of `keys`; returns
    /// how many (key, observer) registrations were removed.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(keys: some Sequence<Key>, _ observers: [AnyObject]) -> Int {
        keys.reduce(0) { $0 + removeKeyedObserver(key: $1, observers) }
    }
}

extension KeyedProtocolObservable {
    /// Registers every observer of `observers` under `key`; returns how many were new there.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        key: Key, _ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous
    ) -> Int {
        keyedObserverRegistry.addKeyedObserver(key: key, observers, delivery: delivery)
    }

    /// Registers every observer of `observers` under each of `keys`; returns
    /// how many (key, observer) registrations were new.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        keys: some Sequence<Key>, _ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous
    ) -> Int {
        keyedObserverRegistry.addKeyedObserver(keys: keys, observers, delivery: delivery)
    }

    /// Unregisters every observer of `observers` from `key`; returns how many were registered there.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(key: Key, _ observers: [AnyObject]) -> Int {
        keyedObserverRegistry.removeKeyedObserver(key: key, observers)
    }

    /// Unregisters every observer of `observers` from each of `keys`; returns
    /// how many (key, observer) registrations were removed.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(keys: some Sequence<Key>, _ observers: [AnyObject]) -> Int {
        keyedObserverRegistry.removeKeyedObserver(keys: keys, observers)
    }
}
