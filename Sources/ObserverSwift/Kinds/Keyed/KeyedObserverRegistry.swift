import Dispatch
import Foundation

/// Observers of any protocols registered under keys, held weakly, called by
/// key and by the protocol they conform to (Flowduino 2.x's keyed
/// observers): an observable type holds one as a stored property.
///
/// ```swift
/// protocol PriceObserver: AnyObject {
///     func priceChanged(symbol: String, to price: Double)
/// }
/// final class Ticker: PriceObserver, Sendable {
///     func priceChanged(symbol: String, to price: Double) { print(symbol, price) }
/// }
/// let registry = KeyedObserverRegistry()
/// let ticker = Ticker()
/// registry.addKeyedObserver(key: "AAPL", ticker)
/// registry.addKeyedObserver(key: "MSFT", ticker)
/// registry.withKeyedObservers(key: "AAPL") { (symbol, observer: PriceObserver) in
///     observer.priceChanged(symbol: symbol, to: 187.5)   // ticker is called
/// }
/// registry.withKeyedObservers(key: "GOOG") { (symbol, observer: PriceObserver) in
///     observer.priceChanged(symbol: symbol, to: 141.2)   // nobody: a hash and one probe
/// }
/// ```
///
/// **Keys.** Any `Hashable`, inferred at each call; one registry may hold
/// keys of several types (keys of different types never match). A key is
/// compared with `==`, so colliding hashes are only slower, never wrong.
///
/// **Which observers are called.** `withKeyedObservers(key:_:)` calls
/// exactly the observers registered under that key that conform to the type
/// of its closure's second parameter (a protocol, a composition, a class,
/// `AnyObject`). Conformance is decided once per observer, key and protocol
/// (when a protocol is first used with a key, or when an observer is added
/// to a key afterwards), never by a cast per call.
///
/// **How it is stored.** Each key with observers owns an ``ObserverRegistry``
/// (one observer list per protocol used with that key, on the C core),
/// stored as the only box of the key's list in the C core's keymap (an
/// open-addressing table). A call finds the key lock-free in O(1) however many keys
/// exist and iterates the protocol's list without locking. A key is created
/// by its first observer and freed, after every call that might still be
/// reading it has finished, once its last observer is removed.
///
/// **Weak references.** Observers are not retained. A deallocated observer
/// is never called. It is dropped from its keys (and a key left without
/// observers is freed) by the next add or remove call on this registry after
/// a call found it dead, or when ``keyCount`` or
/// ``keyedObserverCount(key:)`` is read; there is no need to remove
/// observers in `deinit`. Adding an observer to a key it is registered
/// under already is a no-op.
///
/// **Threads.** Every method may be called from any thread.
/// `withKeyedObservers` takes no lock and never waits (except the first
/// call for a given key and protocol, which builds that protocol's list);
/// adds and removes never wait for a `withKeyedObservers` in progress. An
/// observer added during a call is not called by it; one removed during it
/// may still be called by it, and is not called by any call that starts
/// afterwards. An observer is called on the thread calling
/// `withKeyedObservers` unless it was added with another ``Delivery``.
///
/// **Reentrancy.** An observer may add or remove keyed observers (itself,
/// the last observer of the key being called, ...) and call
/// `withKeyedObservers` again.
public final class KeyedObserverRegistry: @unchecked Sendable {
    // @unchecked: the keymap is the internally synchronized C core; every
    // writer path runs under `lock`; the dead flag is atomic.

    /// Key → the key's ``KeyObservers``.
    @usableFromInline
    let lists = KeyedSlotLists<KeyObservers>()
    /// Set by a call that finds a dead observer under any key.
    let deadFlag = DeadObserverFlag()
    /// Serializes writers. Recursive: an observer's `deinit` may run inside
    /// a writer call (the last strong reference dropped while a cast or a
    /// liveness probe held it) and remove keyed observers itself.
    let lock = NSRecursiveLock()

    /// Creates an empty registry.
    public init() {}

    // MARK: Adding

    /// Registers `observer` under `key`, held weakly. Returns false (and
    /// changes nothing) when it is registered under that key already.
    ///
    /// - Parameters:
    ///   - key: the key whose calls reach the observer (any `Hashable`).
    ///   - observer: the observer, held weakly.
    ///   - delivery: where this observer's calls run: on the thread
    ///     calling `withKeyedObservers` (the default), on a queue, or on the
    ///     main actor.
    @discardableResult
    public func addKeyedObserver<Key: Hashable>(
        key: Key, _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous
    ) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(force: false)
        if let box = boxLocked(forKey: key) {
            return box.registry.addObserver(observer, delivery: delivery)
        }
        let box = KeyObservers(registry: ObserverRegistry(reportingDeathsTo: deadFlag), writerLock: lock)
        box.registry.addObserver(observer, delivery: delivery)
        box.handle = lists.add(box, forKey: key)
        return true
    }

    // MARK: Removing

    /// Unregisters `observer` from `key` (its other keys keep it). Returns
    /// false (a no-op) when it was not registered there. A key left without
    /// observers is freed.
    @discardableResult
    public func removeKeyedObserver<Key: Hashable>(key: Key, _ observer: AnyObject) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(force: false)
        guard let box = boxLocked(forKey: key) else { return false }
        let removed = box.registry.removeObserver(observer)
        removeKeyIfEmptyLocked(box, remove: { lists.remove(box.handle, forKey: key) })
        return removed
    }

    /// Unregisters `observer` from every key, of every key type; returns from
    /// how many keys. Visits every key.
    @discardableResult
    public func removeKeyedObserver(_ observer: AnyObject) -> Int {
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(force: false)
        var removed = 0
        for (keyBox, box) in entriesLocked() where box.registry.removeObserver(observer) {
            removed += 1
            removeKeyIfEmptyLocked(box, remove: { removeEntryLocked(keyBox, box) })
        }
        return removed
    }

    /// Unregisters every observer of `key` and frees the key; returns how
    /// many were registered there.
    @discardableResult
    public func removeAllKeyedObservers<Key: Hashable>(key: Key) -> Int {
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(force: false)
        guard let box = boxLocked(forKey: key) else { return 0 }
        let removed = box.registry.removeAllObservers()
        removeKeyIfEmptyLocked(box, remove: { lists.remove(box.handle, forKey: key) })
        return removed
    }

    /// Unregisters every observer from every key and frees every key;
    /// returns how many (key, observer) registrations there were.
    @discardableResult
    public func removeAllKeyedObservers() -> Int {
        lock.lock()
        defer { lock.unlock() }
        var removed = 0
        for (keyBox, box) in entriesLocked() {
            removed += box.registry.removeAllObservers()
            removeKeyIfEmptyLocked(box, remove: { removeEntryLocked(keyBox, box) })
        }
        return removed
    }

    // MARK: Inspecting

    /// Keys that have at least one live observer. Reading it first drops
    /// deallocated observers, and the keys they leave empty, under every
    /// key: O(keys + observers).
    public var keyCount: Int {
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(force: true)
        return lists.keyCount
    }

    /// Live observers registered under `key`. Drops the key's deallocated
    /// observers first (and the key, if none is left).
    public func keyedObserverCount<Key: Hashable>(key: Key) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard let box = boxLocked(forKey: key) else { return 0 }
        let count = box.registry.observerCount
        removeKeyIfEmptyLocked(box, remove: { lists.remove(box.handle, forKey: key) })
        return count
    }

    /// Whether `observer` is registered under `key`.
    public func containsKeyedObserver<Key: Hashable>(_ observer: AnyObject, key: Key) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return boxLocked(forKey: key)?.registry.contains(observer) ?? false
    }

    // MARK: Calling observers

    /// Calls `body` on this thread, before returning, with `key` and every
    /// synchronous observer registered under `key` that conforms to `P`, the
    /// type of the closure's second parameter:
    ///
    /// <!-- snippet: fragment of PriceObservers -->
    /// ```swift
    /// registry.withKeyedObservers(key: "AAPL") { (symbol, observer: PriceObserver) in
    ///     observer.priceChanged(symbol: symbol, to: 187.5)
    /// }
    /// ```
    ///
    /// `body` does not escape. Observers added with a queue or the main
    /// actor are reached by ``dispatchToKeyedObservers(key:_:)`` only.
    ///
    /// Takes no lock and never waits. A key without observers costs a hash
    /// and one probe of the keymap. The first call for a given key and `P`
    /// builds that protocol's list for the key (one cast per observer of the
    /// key); later calls do no casts.
    @inlinable
    public func withKeyedObservers<Key: Hashable, P>(key: Key, _ body: (Key, P) -> Void) {
        lists.send(forKey: key) { $0.sendSynchronously(key, body) }
    }

    /// Calls `body` with `key` and every observer registered under `key`
    /// that conforms to `P`, each where its ``Delivery`` says (synchronous
    /// ones on this thread, the others enqueued). `body` escapes and may run
    /// on several threads at once.
    @inlinable
    public func dispatchToKeyedObservers<Key: Hashable & Sendable, P>(
        key: Key, _ body: @escaping @Sendable (Key, P) -> Void
    ) {
        lists.send(forKey: key) { $0.send(key, body) }
    }

    // MARK: Writer internals (lock held)

    /// The box stored under `key`, or nil. Stable while the lock is held:
    /// only this registry's writers change the keymap.
    private func boxLocked<Key: Hashable>(forKey key: Key) -> KeyObservers? {
        var found: KeyObservers?
        lists.forEach(forKey: key) { found = $0 }
        return found
    }

    /// Every key with its box (a snapshot).
    private func entriesLocked() -> [(key: AnyKeyBox, box: KeyObservers)] {
        var entries: [(key: AnyKeyBox, box: KeyObservers)] = []
        lists.forEachEntry { keyBox, box in entries.append((keyBox, box)) }
        return entries
    }

    /// Frees the key of `box` (through `remove`) when it has no observer
    /// left.
    private func removeKeyIfEmptyLocked(_ box: KeyObservers, remove: () -> Void) {
        guard !box.isRemoved, box.registry.isEmpty else { return }
        box.isRemoved = true
        remove()
    }

    private func removeEntryLocked(_ keyBox: AnyKeyBox, _ box: KeyObservers) {
        lists.remove(box.handle, underKeyOf: keyBox)
    }

    /// Drops deallocated observers, and frees the keys they leave empty:
    /// under every key when `force`, otherwise only when a call has found a
    /// dead observer since the last sweep.
    private func sweepLocked(force: Bool) {
        guard deadFlag.take() || force else { return }
        for (keyBox, box) in entriesLocked() where box.registry.observerCount == 0 {
            removeKeyIfEmptyLocked(box, remove: { removeEntryLocked(keyBox, box) })
        }
    }
}
