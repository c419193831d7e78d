import ObserverSwift

// Flowduino 2.x's keyed spellings over ObserverSwift's `KeyedObserverRegistry`
// (whose own names are those of `ObserverRegistry` with a key:
// `addObserver(_:key:)`, `withObservers(forKey:_:)`, ...), and the forms that
// take several keys (`for keys:` there, `keys:` here): each is the one-key
// call in a loop over the keys, in order.

extension KeyedObserverRegistry {
    /// Registers `observer` under `key`, held weakly; false when it is
    /// registered there already. See
    /// ``ObserverSwift/KeyedObserverRegistry/addObserver(_:key:delivery:fileID:line:)``.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        key: Key, _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Bool {
        insertObserver(observer, key: key, delivery: delivery)
    }

    /// Registers `observer` under each of `keys`; returns under how many it
    /// was new.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        keys: some Sequence<Key>, _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Int {
        keys.reduce(0) { $0 + (insertObserver(observer, key: $1, delivery: delivery) ? 1 : 0) }
    }

    /// Unregisters `observer` from `key`; false (a no-op) when it was not
    /// registered there.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(key: Key, _ observer: AnyObject) -> Bool {
        removeObserver(observer, key: key)
    }

    /// Unregisters `observer` from each of `keys`; returns from how many it
    /// was removed.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(keys: some Sequence<Key>, _ observer: AnyObject) -> Int {
        keys.reduce(0) { $0 + (removeObserver(observer, key: $1) ? 1 : 0) }
    }

    /// Unregisters `observer` from every key; returns from how many keys.
    @discardableResult
    public func removeKeyedObserver(_ observer: AnyObject) -> Int {
        removeObserver(observer)
    }

    /// Unregisters every observer of `key`; returns how many there were.
    @discardableResult
    public func removeAllKeyedObservers<Key: Hashable>(key: Key) -> Int {
        removeAllObservers(key: key)
    }

    /// Unregisters every keyed observer; returns how many (key, observer)
    /// registrations there were.
    @discardableResult
    public func removeAllKeyedObservers() -> Int {
        removeAllObservers()
    }

    /// Live observers registered under `key`.
    public func keyedObserverCount<Key: Hashable>(key: Key) -> Int {
        observerCount(forKey: key)
    }

    /// Whether `observer` is registered under `key`.
    public func containsKeyedObserver<Key: Hashable>(_ observer: AnyObject, key: Key) -> Bool {
        contains(observer, key: key)
    }

    /// Calls `body` on this thread, before returning, with `key` and every
    /// observer under `key` conforming to `P` that can be called here and
    /// now (Flowduino's spelling: `body` does not escape). An observer added
    /// with a queue or main-actor delivery is reached by
    /// ``dispatchToKeyedObservers(key:_:)`` instead; the first time this
    /// call meets one in a process, it says so on standard error.
    @inlinable
    public func withKeyedObservers<Key: Hashable, P>(key: Key, _ body: (Key, P) -> Void) {
        let notCalled = withObserversCallableHere(forKey: key, body)
        if notCalled > 0 {
            ObserversNotCalled.report(
                notCalled, spelling: "withKeyedObservers(key:_:)",
                escapingSpelling: "dispatchToKeyedObservers(key:_:)")
        }
    }

    /// `withKeyedObservers(key:_:)` for each of `keys`, in order; `body`
    /// receives the key each observer was called for.
    @inlinable
    public func withKeyedObservers<Key: Hashable, P>(keys: some Sequence<Key>, _ body: (Key, P) -> Void) {
        for key in keys {
            withKeyedObservers(key: key, body)
        }
    }

    /// Calls `body` with `key` and every observer under `key` conforming to
    /// `P`, each where its delivery says. See
    /// ``ObserverSwift/KeyedObserverRegistry/withObservers(forKey:_:)``.
    @inlinable
    public func dispatchToKeyedObservers<Key: Hashable & Sendable, P>(
        key: Key, _ body: @escaping @Sendable (Key, P) -> Void
    ) {
        withObservers(forKey: key, body)
    }

    /// `dispatchToKeyedObservers(key:_:)` for each of `keys`, in order.
    @inlinable
    public func dispatchToKeyedObservers<Key: Hashable & Sendable, P>(
        keys: some Sequence<Key>, _ body: @escaping @Sendable (Key, P) -> Void
    ) {
        for key in keys {
            withObservers(forKey: key, body)
        }
    }
}
