import ObserverSwift

/// Flowduino's `KeyedObservable`: a keyed observable with one key type,
/// `TKey`, and Flowduino's `for:` spellings, each forwarding to the
/// ``KeyedObserverRegistry`` the type holds. `KeyedObservableClass<TKey>`
/// and `KeyedObservableThread<TKey>` adopt it.
///
/// With one key type, `for: [a, b]` means the keys `a` and `b`, never a key
/// that is an array. The `key:` / `keys:` forms of
/// ``KeyedProtocolObservable`` stay available beside these.
public protocol KeyedObservable: KeyedProtocolObservable {
    /// The type of this observable's keys.
    associatedtype TKey: Hashable
}

extension KeyedObservable {
    /// Registers `observer` under `key`, held weakly; false when it is
    /// registered there already.
    @discardableResult
    public func addKeyedObserver(
        for key: TKey, _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Bool {
        keyedObserverRegistry.addKeyedObserver(key: key, observer, delivery: delivery)
    }

    /// Registers `observer` under each of `keys`; returns under how many it
    /// was new.
    @discardableResult
    public func addKeyedObserver(
        for keys: [TKey], _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Int {
        keys.reduce(0) { $0 + (addKeyedObserver(for: $1, observer, delivery: delivery) ? 1 : 0) }
    }

    /// Registers every observer of `observers` under `key`; returns how many
    /// were new there.
    @discardableResult
    public func addKeyedObserver(
        for key: TKey, _ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous
    ) -> Int {
        observers.reduce(0) { $0 + (addKeyedObserver(for: key, $1, delivery: delivery) ? 1 : 0) }
    }

    /// Registers every observer of `observers` under each of `keys`; returns
    /// how many (key, observer) registrations were new.
    @discardableResult
    public func addKeyedObserver(
        for keys: [TKey], _ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous
    ) -> Int {
        keys.reduce(0) { $0 + addKeyedObserver(for: $1, observers, delivery: delivery) }
    }

    /// Unregisters `observer` from `key`; false (a no-op) when it was not
    /// registered there.
    @discardableResult
    public func removeKeyedObserver(for key: TKey, _ observer: AnyObject) -> Bool {
        keyedObserverRegistry.removeKeyedObserver(key: key, observer)
    }

    /// Unregisters `observer` from each of `keys`; returns from how many it
    /// was removed.
    @discardableResult
    public func removeKeyedObserver(for keys: [TKey], _ observer: AnyObject) -> Int {
        keys.reduce(0) { $0 + (removeKeyedObserver(for: $1, observer) ? 1 : 0) }
    }

    /// Unregisters every observer of `observers` from `key`; returns how many
    /// were registered there.
    @discardableResult
    public func removeKeyedObserver(for key: TKey, _ observers: [AnyObject]) -> Int {
        observers.reduce(0) { $0 + (removeKeyedObserver(for: key, $1) ? 1 : 0) }
    }

    /// Unregisters every observer of `observers` from each of `keys`; returns
    /// how many (key, observer) registrations were removed.
    @discardableResult
    public func removeKeyedObserver(for keys: [TKey], _ observers: [AnyObject]) -> Int {
        keys.reduce(0) { $0 + removeKeyedObserver(for: $1, observers) }
    }

    /// Calls `body` on this thread with `key` and every synchronous observer
    /// registered under `key` that conforms to `P`, the type of the
    /// closure's second parameter (``KeyedObserverRegistry``'s
    /// `withKeyedObservers(key:_:)`). `body` does not escape.
    @inlinable
    public func withKeyedObservers<P>(for key: TKey, _ body: (TKey, P) -> Void) {
        keyedObserverRegistry.withKeyedObservers(key: key, body)
    }

    /// `withKeyedObservers(for:_:)` for each of `keys`, in order.
    @inlinable
    public func withKeyedObservers<P>(for keys: [TKey], _ body: (TKey, P) -> Void) {
        for key in keys {
            keyedObserverRegistry.withKeyedObservers(key: key, body)
        }
    }
}
