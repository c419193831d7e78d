import Dispatch
import ObserverSwift

/// A type whose observers are registered under keys and called by key and
/// protocol, through a ``KeyedObserverRegistry`` it holds: adopt it to get
/// Flowduino 2.x's keyed observer API (`addKeyedObserver`,
/// `removeKeyedObserver`, `withKeyedObservers`) without inheriting from
/// ``KeyedObservableClass``. Adopt ``ProtocolObservable`` too for plain
/// (unkeyed) observers.
///
/// <!-- snippet: fragment of PriceObservers -->
/// ```swift
/// final class Quotes: SomeFrameworkBaseClass, KeyedProtocolObservable {
///     let keyedObserverRegistry = KeyedObserverRegistry()
///     func update(_ symbol: String, _ price: Double) {
///         withKeyedObservers(key: symbol) { (symbol, observer: PriceObserver) in
///             observer.priceChanged(symbol: symbol, to: price)
///         }
///     }
/// }
/// ```
public protocol KeyedProtocolObservable: AnyObject {
    /// The registry holding this object's keyed observers.
    var keyedObserverRegistry: KeyedObserverRegistry { get }
}

extension KeyedProtocolObservable {
    /// Registers `observer` under `key`, held weakly; false when it is
    /// registered there already. See
    /// ``KeyedObserverRegistry/addKeyedObserver(key:_:delivery:)``.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        key: Key, _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Bool {
        keyedObserverRegistry.addKeyedObserver(key: key, observer, delivery: delivery)
    }

    /// Registers `observer` under each of `keys`; returns under how many it
    /// was new.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        keys: some Sequence<Key>, _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Int {
        keyedObserverRegistry.addKeyedObserver(keys: keys, observer, delivery: delivery)
    }

    /// Unregisters `observer` from `key`; false (a no-op) when it was not
    /// registered there. A key left without observers is freed.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(key: Key, _ observer: AnyObject) -> Bool {
        keyedObserverRegistry.removeKeyedObserver(key: key, observer)
    }

    /// Unregisters `observer` from each of `keys`; returns from how many it
    /// was removed.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(keys: some Sequence<Key>, _ observer: AnyObject) -> Int {
        keyedObserverRegistry.removeKeyedObserver(keys: keys, observer)
    }

    /// Unregisters `observer` from every key; returns from how many keys.
    @discardableResult
    public func removeKeyedObserver(_ observer: AnyObject) -> Int {
        keyedObserverRegistry.removeKeyedObserver(observer)
    }

    /// Unregisters every observer of `key`; returns how many there were.
    @discardableResult
    public func removeAllKeyedObservers<Key: Hashable>(key: Key) -> Int {
        keyedObserverRegistry.removeAllKeyedObservers(key: key)
    }

    /// Unregisters every keyed observer; returns how many (key, observer)
    /// registrations there were.
    @discardableResult
    public func removeAllKeyedObservers() -> Int {
        keyedObserverRegistry.removeAllKeyedObservers()
    }

    /// Live observers registered under `key`.
    public func keyedObserverCount<Key: Hashable>(key: Key) -> Int {
        keyedObserverRegistry.keyedObserverCount(key: key)
    }

    /// Calls `body` on this thread with `key` and every synchronous observer
    /// registered under `key` that conforms to `P`, the type of the closure's
    /// second parameter. See ``KeyedObserverRegistry/withKeyedObservers(key:_:)``.
    ///
    /// <!-- snippet: fragment of KeyedProtocolObservableMethod -->
    /// ```swift
    /// withKeyedObservers(key: symbol) { (symbol, observer: PriceObserver) in
    ///     observer.priceChanged(symbol: symbol, to: price)
    /// }
    /// ```
    @inlinable
    public func withKeyedObservers<Key: Hashable, P>(key: Key, _ body: (Key, P) -> Void) {
        keyedObserverRegistry.withKeyedObservers(key: key, body)
    }

    /// ``withKeyedObservers(key:_:)`` for each of `keys`, in order.
    @inlinable
    public func withKeyedObservers<Key: Hashable, P>(keys: some Sequence<Key>, _ body: (Key, P) -> Void) {
        keyedObserverRegistry.withKeyedObservers(keys: keys, body)
    }

    /// Calls `body` with `key` and every observer under `key` conforming to
    /// `P`, each where its delivery says. See
    /// ``KeyedObserverRegistry/dispatchToKeyedObservers(key:_:)``.
    @inlinable
    public func dispatchToKeyedObservers<Key: Hashable & Sendable, P>(
        key: Key, _ body: @escaping @Sendable (Key, P) -> Void
    ) {
        keyedObserverRegistry.dispatchToKeyedObservers(key: key, body)
    }

    /// ``dispatchToKeyedObservers(key:_:)`` for each of `keys`, in order.
    @inlinable
    public func dispatchToKeyedObservers<Key: Hashable & Sendable, P>(
        keys: some Sequence<Key>, _ body: @escaping @Sendable (Key, P) -> Void
    ) {
        keyedObserverRegistry.dispatchToKeyedObservers(keys: keys, body)
    }
}
