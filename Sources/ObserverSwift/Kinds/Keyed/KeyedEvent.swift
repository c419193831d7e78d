import Dispatch
import ObserverEngine

/// An event whose observers subscribe to keys: ``send(_:forKey:)`` calls
/// exactly the subscriptions of that key.
///
/// ```swift
/// let prices = KeyedEvent<String, Double>()
/// let token = prices.subscribe(key: "AAPL") { price in print("AAPL", price) }
/// let both = prices.forKeys(["MSFT", "GOOG"]).subscribe { symbol, price in print(symbol, price) }
/// prices.send(187.5, forKey: "AAPL")   // only the first handler runs
/// prices.send(402.1, forKey: "MSFT")   // only the second one runs
/// token.cancel()                        // "AAPL" has no subscriber left: its list is freed
/// ```
///
/// Keys are any `Hashable`. Each key with subscribers owns an observer list
/// in the C core; a send finds it through a lock-free hash table in O(1)
/// however many keys exist, compares keys with `==` (colliding hashes are
/// fine), and iterates the list without locking. A key's list is created by
/// its first subscription and freed (after every send that might still be
/// reading it has finished) when its last one goes. Sending to a key that
/// nobody observes hashes the key, probes the table once and allocates
/// nothing. An event whose one subscription is a plain closure (on the
/// sending thread, no limit) under one key keeps that closure with its key
/// and no table: a send compares the key with `==`. The next subscription
/// moves it into the table.
///
/// Keys that are not equal to themselves (`Double.nan`, or a type whose `==`
/// is false for equal values): a send never finds such a key, so
/// `send(_:forKey: .nan)` calls nobody, and `unsubscribeAll(key: .nan)` or
/// `subscribersCount(forKey: .nan)` find nothing. Their subscriptions are
/// stored all the same (each under its own key entry, counted by
/// ``keyCount`` and ``subscribersCount``), and ``Subscription/cancel()``
/// removes them: a token cancels by where its subscription was stored, never
/// by comparing keys or hashing them again.
///
/// Threading: every method may be called from any thread at any time. A
/// handler runs on the sending thread, inside `send`, unless it was given a
/// queue or the main actor. Sends never wait for subscribers being added or
/// removed. The key's `hash(into:)` and `==` may run on any thread.
///
/// Reentrancy: a handler may send again (to any key, of this or any event),
/// subscribe, cancel itself or others, or remove a key's last subscription.
/// A subscription added during a send is not called by that send; one
/// removed during a send may or may not be called by it, and is never called
/// by a send that starts afterwards.
public final class KeyedEvent<Key: Hashable, Value> {
    @usableFromInline
    typealias Lists = KeyedSlotLists<EventSubscriber<Key, Value>>

    /// First stored property: the observers word: nil, the one closure
    /// subscribed with its key, or the keyed lists (see
    /// `KeyedEventObservers`). Nothing else: an event with no subscriber is
    /// 24 bytes (a 32-byte heap block); its keymap is made by the first
    /// subscription that is not a sole plain closure.
    @usableFromInline
    var observersStorage = LazyObjectStorage(nil)

    /// The view of the observers word.
    @usableFromInline
    var observers: KeyedEventObservers<Key, Value> {
        @inline(__always) get { KeyedEventObservers(keptFirstBy: self) }
    }

    /// Creates an event with no subscribers.
    public init() {}

    deinit {
        observers.release()
    }

    /// Calls `body` with the keyed lists borrowed (no retain), or returns
    /// nil when there are none: nobody subscribed, or one plain closure
    /// under one key is the event's sole handler.
    @inlinable @inline(__always)
    func withExistingLists<Result>(_ body: (Lists) -> Result) -> Result? {
        observers.withExistingLists(body)
    }

    /// The keyed lists, made now if there are none (moving a sole handler
    /// into them). Writers only.
    @usableFromInline
    var lists: Lists {
        observers.madeLists.takeUnretainedValue()
    }

    // MARK: Sending

    /// Calls every subscription of `key` that existed when the send started.
    ///
    /// Synchronous subscriptions run on the calling thread before this
    /// returns; queued ones are enqueued.
    @inlinable
    public func send(_ value: Value, forKey key: Key) {
        observers.send(value, forKey: key)
    }

    // MARK: Unsubscribing

    /// Removes every subscription made for `target`, under every key;
    /// returns how many key registrations were removed (a subscription over
    /// three keys counts 3). A target never subscribed is a no-op (0).
    @discardableResult
    public func unsubscribe(_ target: AnyObject) -> Int {
        withExistingLists { $0.removeAll { $0.isTarget(target) } } ?? 0
    }

    /// Removes `target`'s subscriptions from `key` only (a subscription over
    /// several keys keeps the others); returns how many were removed.
    @discardableResult
    public func unsubscribe(_ target: AnyObject, key: Key) -> Int {
        withExistingLists { $0.removeAll(forKey: key) { $0.isTarget(target) } } ?? 0
    }

    /// Removes every subscription under every key; returns how many key
    /// registrations were stored. Every key's list is freed.
    @discardableResult
    public func unsubscribeAll() -> Int {
        observers.removeAll()
    }

    /// Removes every subscription from `key` (subscriptions over several
    /// keys keep their other keys) and frees the key's list; returns how
    /// many were removed.
    @discardableResult
    public func unsubscribeAll(key: Key) -> Int {
        observers.removeAll(forKey: key)
    }

    // MARK: Counting

    /// Live subscriptions, each counted once however many keys it covers:
    /// not cancelled, target alive, limit not spent. Reading it also frees
    /// the slots of dead targets. Visits every key: O(keys + subscriptions).
    public var subscribersCount: Int {
        switch observers.current {
        case .none: return 0
        case .sole: return 1
        // A subscription over several keys is one box under each of them.
        case .lists(let lists): return Set(lists._withUnsafeGuaranteedRef { $0.liveContexts() }).count
        }
    }

    /// Live subscriptions that receive `key`'s sends.
    public func subscribersCount(forKey key: Key) -> Int {
        switch observers.current {
        case .none: return 0
        case .sole(_, _, let soleKey): return soleKey == key ? 1 : 0
        case .lists(let lists): return lists._withUnsafeGuaranteedRef { $0.liveContexts(forKey: key).count }
        }
    }

    /// Keys that have at least one subscription stored. A key whose last
    /// subscription is cancelled is gone at once; one whose subscribers
    /// expired (dead target, spent limit) goes when a send or a count
    /// notices it, or at the next subscribe or unsubscribe call if a lock
    /// was busy then.
    public var keyCount: Int {
        switch observers.current {
        case .none: return 0
        case .sole: return 1
        case .lists(let lists): return lists._withUnsafeGuaranteedRef { $0.keyCount }
        }
    }

    /// The keys that have at least one subscription stored, in no order.
    public var keys: [Key] {
        switch observers.current {
        case .none: return []
        case .sole(_, _, let soleKey): return [soleKey]
        case .lists(let lists): return lists._withUnsafeGuaranteedRef { $0.keys(of: Key.self) }
        }
    }

    // MARK: Internals

    /// Stores `box` under each distinct key and returns its token.
    func register(
        _ keys: some Sequence<Key>, _ box: EventSubscriber<Key, Value>,
        registration: KeyedRegistration<Key>? = nil
    ) -> Subscription {
        let lists = lists
        let registration = registration ?? KeyedRegistration(engine: lists)
        var seen = Set<Key>()
        for key in keys where seen.insert(key).inserted {
            registration.record(lists.addSlot(box, forKey: key))
        }
        if seen.isEmpty { return Subscription.inactive }
        return Subscription(canceller: registration)
    }

    // The adapters below take plain closures: every caller builds them from a
    // `@Sendable` handler of the public API and captures nothing else but
    // Sendable state (a `@Sendable` literal here would capture `Key.Type`,
    // which is not Sendable for every key type).
    @usableFromInline
    func subscribeClosure(
        _ keys: some Sequence<Key>, delivery: Delivery, limit: Int?, _ handler: @escaping (Key, Value) -> Void
    ) -> Subscription {
        let registration = KeyedRegistration<Key>(engine: lists)
        let box = QueuedOrLimitedSubscriber(
            expiry: registration, delivery: delivery, limit: limit ?? Int.max, handler: handler)
        return register(keys, box, registration: registration)
    }

    @usableFromInline
    func subscribeTarget<Target: AnyObject>(
        _ target: Target, _ keys: some Sequence<Key>, delivery: Delivery, limit: Int?,
        _ handler: @escaping (Target, Key, Value) -> Void
    ) -> Subscription {
        let registration = KeyedRegistration<Key>(engine: lists)
        let box = TargetSubscriber(
            target: target, expiry: registration, delivery: delivery, limit: limit ?? Int.max, handler: handler)
        return register(keys, box, registration: registration)
    }

    /// One key's weak target, whose handler takes no key: stored as it is,
    /// called without an adapter.
    @usableFromInline
    func subscribeTarget<Target: AnyObject>(
        _ target: Target, forKey key: Key, delivery: Delivery, limit: Int?,
        _ handler: @escaping (Target, Value) -> Void
    ) -> Subscription {
        let registration = KeyedRegistration<Key>(engine: lists)
        let box = KeyTargetSubscriber(
            target: target, expiry: registration, delivery: delivery, limit: limit ?? Int.max, handler: handler)
        return register(CollectionOfOne(key), box, registration: registration)
    }
}

extension KeyedEvent: @unchecked Sendable where Key: Sendable, Value: Sendable {}
// @unchecked: all state is the internally synchronized C keymap.
