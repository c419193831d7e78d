import Dispatch
import Foundation
import ObserverEngine

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
/// registry.addObserver(ticker, key: "AAPL")
/// registry.addObserver(ticker, key: "MSFT")
/// registry.withObservers(forKey: "AAPL") { (symbol, observer: PriceObserver) in
///     observer.priceChanged(symbol: symbol, to: 187.5)   // ticker is called
/// }
/// registry.withObservers(forKey: "GOOG") { (symbol, observer: PriceObserver) in
///     observer.priceChanged(symbol: symbol, to: 141.2)   // nobody: a hash and one probe
/// }
/// ```
///
/// **Keys.** Any `Hashable`, inferred at each call; one registry may hold
/// keys of several types (keys of different types never match). A key is
/// compared with `==`, so colliding hashes are only slower, never wrong.
///
/// **Which observers are called.** ``withObservers(forKey:_:)`` calls
/// exactly the observers registered under that key that conform to the type
/// of its closure's second parameter (a protocol, a composition, a class,
/// `AnyObject`), each where the ``Delivery`` it was added with says.
/// Conformance is decided once per observer, key and protocol (when a
/// protocol is first used with a key, or when an observer is added to a key
/// afterwards), as ``ObserverRegistry`` decides it (a conformance isolated
/// to the main actor is called there), never by a cast per call.
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
/// ``observerCount(forKey:)`` is read; there is no need to remove
/// observers in `deinit`. Adding an observer to a key it is registered
/// under already is a no-op.
///
/// **Threads.** Every method may be called from any thread.
/// `withObservers(forKey:_:)` takes no lock and never waits (except the first
/// call for a given key and protocol, which builds that protocol's list);
/// adds and removes never wait for a `withObservers(forKey:_:)` in progress. An
/// observer added during a call is not called by it; one removed during it
/// may still be called by it, and is not called by any call that starts
/// afterwards. An observer is called on the thread calling
/// `withObservers(forKey:_:)` unless it was added with another ``Delivery``.
///
/// **Reentrancy.** An observer may add or remove keyed observers (itself,
/// the last observer of the key being called, ...) and call
/// `withObservers(forKey:_:)` again.
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
    /// The generation of the next registration under any key (under
    /// `lock`): unique in this registry, so a token never matches a later
    /// registration, even in a key's registry made again.
    private var nextGeneration: UInt64 = 1

    /// Creates an empty registry.
    public init() {}

    // MARK: Adding

    /// Registers `observer` under `key`, held weakly, and returns the token
    /// of this registration: cancelling it unregisters the observer from
    /// that key, as ``removeObserver(_:key:)`` does (dropping it does not).
    /// When `observer` is registered under `key` already, nothing changes and
    /// the token returned is inactive.
    ///
    /// - Parameters:
    ///   - observer: the observer, held weakly.
    ///   - key: the key whose calls reach the observer.
    ///   - delivery: where this observer's calls run: on the thread
    ///     calling ``withObservers(forKey:_:)`` (the default) or on a queue
    ///     (`.queue(.main)` for the main queue). Every call reaches it
    ///     there; a conformance isolated to an actor runs on that actor.
    ///   - fileID: the file of the call, for ``ObserverCore/liveSubscriptions``
    ///     when tracking is on (leave the default).
    ///   - line: the line of the call (leave the default).
    @discardableResult
    public func addObserver<Key: Hashable & Sendable>(
        _ observer: any AnyObject & Sendable, key: Key, delivery: Delivery = .synchronous,
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> Subscription {
        guard let generation = insert(observer, key: key, delivery: delivery) else { return Subscription.inactive }
        let subscription = Subscription(
            registration: KeyedObserverRegistration(
                registry: UnownedObserver(self), key: key, identifier: ObjectIdentifier(observer),
                generation: generation))
        return TrackedSubscription.trackingRegistryObserver(
            subscription, of: Self.self, delivery: delivery, fileID: fileID, line: line,
            detail: "key \(key), observer \(type(of: observer))")
    }

    /// ``addObserver(_:key:delivery:fileID:line:)`` without a token: whether `observer`
    /// was new under `key` (ObserverSwiftCompat's Flowduino spellings
    /// return this).
    @discardableResult
    package func insertObserver<Key: Hashable>(
        _ observer: any AnyObject & Sendable, key: Key, delivery: Delivery = .synchronous
    ) -> Bool {
        insert(observer, key: key, delivery: delivery) != nil
    }

    /// Registers `observer` under `key`; the registration's generation in
    /// the key's registry, or nil when it is registered there already.
    private func insert<Key: Hashable>(_ observer: AnyObject, key: Key, delivery: Delivery) -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(force: false)
        let generation = nextGeneration
        if let box = boxLocked(forKey: key) {
            let inserted = box.registry.insert(observer, delivery: delivery, generation: generation)
            if inserted != nil { nextGeneration &+= 1 }
            return inserted
        }
        nextGeneration &+= 1
        let box = KeyObservers(registry: ObserverRegistry(reportingDeathsTo: deadFlag), writerLock: lock)
        _ = box.registry.insert(observer, delivery: delivery, generation: generation)
        box.handle = lists.add(box, forKey: key)
        return generation
    }

    /// Unregisters that registration under `key`, if it is still there: a
    /// token's `cancel()`. A key left without observers is freed.
    func cancelRegistration<Key: Hashable>(key: Key, of identifier: ObjectIdentifier, generation: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        sweepLocked(force: false)
        guard let box = boxLocked(forKey: key) else { return false }
        let removed = box.registry.cancelRegistration(of: identifier, generation: generation)
        removeKeyIfEmptyLocked(box, remove: { lists.remove(box.handle, forKey: key) })
        return removed
    }

    /// Whether that registration is still registered and its observer alive.
    func isRegistrationActive<Key: Hashable>(key: Key, of identifier: ObjectIdentifier, generation: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return boxLocked(forKey: key)?.registry.isRegistrationActive(of: identifier, generation: generation) ?? false
    }

    // MARK: Removing

    /// Unregisters `observer` from `key` (its other keys keep it). Returns
    /// false (a no-op) when it was not registered there. A key left without
    /// observers is freed.
    @discardableResult
    public func removeObserver<Key: Hashable>(_ observer: AnyObject, key: Key) -> Bool {
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
    public func removeObserver(_ observer: AnyObject) -> Int {
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
    public func removeAllObservers<Key: Hashable>(key: Key) -> Int {
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
    public func removeAllObservers() -> Int {
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
    public func observerCount<Key: Hashable>(forKey key: Key) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard let box = boxLocked(forKey: key) else { return 0 }
        let count = box.registry.observerCount
        removeKeyIfEmptyLocked(box, remove: { lists.remove(box.handle, forKey: key) })
        return count
    }

    /// Whether `observer` is registered under `key`.
    public func contains<Key: Hashable>(_ observer: AnyObject, key: Key) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return boxLocked(forKey: key)?.registry.contains(observer) ?? false
    }

    // MARK: Calling observers

    /// Calls `body` with `key` and every observer registered under `key`
    /// that conforms to `P`, the type of the closure's second parameter,
    /// each where its ``Delivery`` says (as
    /// ``ObserverRegistry/withObservers(_:)`` does):
    ///
    /// <!-- snippet: fragment of PriceObservers -->
    /// ```swift
    /// registry.withObservers(forKey: "AAPL") { (symbol, observer: PriceObserver) in
    ///     observer.priceChanged(symbol: symbol, to: 187.5)
    /// }
    /// ```
    ///
    /// Synchronous observers are called on this thread before it returns;
    /// the others on their queue or the main actor, so `body` escapes and is
    /// `@Sendable`.
    ///
    /// Takes no lock and never waits. A key without observers costs a hash
    /// and one probe of the keymap. The first call for a given key and `P`
    /// builds that protocol's list for the key (one conformance check per
    /// observer of the key); later calls do no casts.
    @inlinable
    public func withObservers<Key: Hashable & Sendable, P>(
        forKey key: Key, _ body: @escaping @Sendable (Key, P) -> Void
    ) {
        lists.send(forKey: key) { $0.send(key, body) }
    }

    /// Calls `body` on this thread, before returning, with `key` and every
    /// observer under `key` conforming to `P` whose delivery allows a call
    /// here and now; returns how many it could not call (see
    /// ``ObserverRegistry/withObserversCallableHere(_:)``).
    @inlinable
    package func withObserversCallableHere<Key: Hashable, P>(forKey key: Key, _ body: (Key, P) -> Void) -> Int {
        var notCalled = 0
        lists.send(forKey: key) { notCalled &+= $0.sendHere(key, body) }
        return notCalled
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

/// What the token of one ``KeyedObserverRegistry/addObserver(_:key:delivery:fileID:line:)``
/// cancels: that registration of that observer under that key.
final class KeyedObserverRegistration<Key: Hashable & Sendable>: SubscriptionRegistration, @unchecked Sendable {
    // @unchecked: immutable; the registry is thread-safe.
    /// The registry, held without owning it: a token does not keep its
    /// registry alive (its owner may be long gone while an observer still
    /// keeps the token), and a `weak` reference would give the registry a
    /// side table that every later retain and release of it goes through.
    let registry: UnownedObserver
    let key: Key
    let identifier: ObjectIdentifier
    let generation: UInt64

    init(registry: UnownedObserver, key: Key, identifier: ObjectIdentifier, generation: UInt64) {
        self.registry = registry
        self.key = key
        self.identifier = identifier
        self.generation = generation
    }

    override func cancelSubscription() -> Bool {
        registry.withLive(KeyedObserverRegistry.self) {
            $0.cancelRegistration(key: key, of: identifier, generation: generation)
        } ?? false
    }

    override var isSubscriptionActive: Bool {
        registry.withLive(KeyedObserverRegistry.self) {
            $0.isRegistrationActive(key: key, of: identifier, generation: generation)
        } ?? false
    }
}
