import CObserverCore

/// A token for one subscription.
///
/// ``cancel()`` is idempotent and may be called from any thread, any number
/// of times, also after the source is gone. A token is a handle, not a
/// lifetime: dropping it does not cancel (the compiler warns when a closure
/// subscription's token is ignored). To cancel with an owner, store it in a
/// ``SubscriptionBag`` the owner holds, or in a `Set<Subscription>` with
/// ``store(in:)-(Set<Subscription>)``, which makes the token cancel when released.
///
/// ```swift
/// let bag = SubscriptionBag()
/// event.subscribe { print($0) }.store(in: bag)
/// // ... when `bag` is deallocated, the subscription is cancelled.
/// ```
public final class Subscription: Hashable, @unchecked Sendable {
    // @unchecked: every stored property is immutable but the first, whose
    // word is only accessed atomically.

    /// First stored property: `cancelsOnRelease`' word (see `AtomicWord`).
    var cancelsOnReleaseWord = AtomicWordStorage<Bool>(false)

    // Strong, not weak: a weak reference would give the list a side table and
    // send every retain/release of it down the runtime's slow path. A token
    // keeps only the (emptied) C list alive after its source is gone: sources
    // remove all their observers when they are deallocated.
    private let list: AnySlotList?
    let handle: SlotHandle
    /// Set instead of `list` for subscriptions that are not one slot of one
    /// list: a keyed subscription spans one slot per key; a producer
    /// stream's token (ObserverSwiftCompat's `IndefiniteObservable`) runs its
    /// disconnect once.
    private let canceller: (any SubscriptionCanceller)?
    /// Set by `store(in: &set)`. Relaxed: read only by `deinit`, which the
    /// release of the last reference orders after every store.
    private var cancelsOnRelease: AtomicWord<Bool> { AtomicWords.first(self) }

    @usableFromInline
    init(list: AnySlotList?, handle: SlotHandle) {
        self.list = list
        self.handle = handle
        self.canceller = nil
    }

    /// A token that cancels through `canceller` (ObserverSwiftCompat's
    /// producer streams).
    package init(canceller: any SubscriptionCanceller) {
        self.list = nil
        self.handle = SlotHandle.notAdded
        self.canceller = canceller
    }

    deinit {
        if cancelsOnRelease.load(ordering: .relaxed) { cancel() }
    }

    /// A token that never was active (for example `limit: 0`).
    @usableFromInline
    static var inactive: Subscription { Subscription(list: nil, handle: SlotHandle.notAdded) }

    /// Whether the subscription is still stored (not cancelled, not expired
    /// and removed, source alive).
    public var isActive: Bool {
        if let canceller { return canceller.isSubscriptionActive }
        return list?.contains(handle) ?? false
    }

    /// Cancels the subscription. Returns true when this call removed it;
    /// false when it was already cancelled, expired or its source is gone.
    /// A send that starts after this returns does not call the handler, and
    /// neither does a queued or main-actor delivery that has not started
    /// yet (it is dropped). A send or queued delivery already running on
    /// another thread may still be calling it (see ``cancelAndWait()``).
    /// Deliveries a spent `limit:` subscription claimed before it expired
    /// still run.
    @discardableResult
    public func cancel() -> Bool {
        if let canceller { return canceller.cancelSubscription() }
        return list?.remove(handle) ?? false
    }

    /// Cancels, then waits until no send that might still call the handler
    /// is running on any thread, and no queued or main-actor delivery of it
    /// that has started is still running, so that what the handler uses can
    /// be torn down safely.
    ///
    /// - Throws: ``ObserverError/waitInsideDelivery`` when called from inside
    ///   a handler (or any send) on this thread, where waiting would never
    ///   end. The subscription is cancelled all the same.
    public func cancelAndWait() throws(ObserverError) {
        cancel()
        try ObserverCore.waitForDeliveriesInFlight()
    }

    /// What identifies the subscription, without the token: for an owner
    /// that must check or end it without keeping the token alive (an actor
    /// mailbox: the token's release may be what cancels).
    var reference: SubscriptionReference {
        SubscriptionReference(list: list, handle: handle, canceller: canceller)
    }

    /// Adds this subscription to `bag`, which cancels it when deallocated.
    public func store(in bag: SubscriptionBag) {
        bag.insert(self)
    }

    /// Inserts this subscription into `set` (Combine's habit) and makes the
    /// token cancel its subscription when it is released, as Combine's
    /// `AnyCancellable` does: when the set's owner is deallocated (or the
    /// token is removed from the set and not kept elsewhere), the
    /// subscription ends.
    ///
    /// ```swift
    /// var subscriptions = Set<Subscription>()
    /// event.subscribe { print($0) }.store(in: &subscriptions)
    /// ```
    public func store(in set: inout Set<Subscription>) {
        cancelsOnRelease.store(true, ordering: .relaxed)
        set.insert(self)
    }

    /// Tokens are equal only when they are the same object.
    public static func == (lhs: Subscription, rhs: Subscription) -> Bool { lhs === rhs }
    /// Hashes the token's identity, so tokens can be kept in a `Set`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A subscription as its token sees it, without the token: the same
/// `isActive` and `cancel()`.
struct SubscriptionReference: Sendable {
    fileprivate let list: AnySlotList?
    fileprivate let handle: SlotHandle
    fileprivate let canceller: (any SubscriptionCanceller)?

    /// Same contract as ``Subscription/isActive``.
    var isActive: Bool {
        if let canceller { return canceller.isSubscriptionActive }
        return list?.contains(handle) ?? false
    }

    /// Same contract as ``Subscription/cancel()``.
    @discardableResult
    func cancel() -> Bool {
        if let canceller { return canceller.cancelSubscription() }
        return list?.remove(handle) ?? false
    }
}

/// What a ``Subscription`` cancels when it is not one slot of a `AnySlotList`.
package protocol SubscriptionCanceller: AnyObject, Sendable {
    /// Same contract as ``Subscription/cancel()``.
    func cancelSubscription() -> Bool
    /// Same contract as ``Subscription/isActive``.
    var isSubscriptionActive: Bool { get }
}

/// Cancels the subscriptions it holds when it is deallocated (or on
/// ``cancelAll()``). Give one to an owner to tie subscriptions to its life.
public final class SubscriptionBag: Sendable {
    private let subscriptions = Locked<[Subscription]>([])

    /// Creates an empty bag.
    ///
    /// ```swift
    /// let bag = SubscriptionBag()
    /// event.subscribe { print($0) }.store(in: bag)
    /// ```
    public init() {}

    deinit {
        cancelAll()
    }

    /// Keeps `subscription` until the bag is cancelled or deallocated
    /// (`Subscription.store(in:)` is the public spelling).
    func insert(_ subscription: Subscription) {
        subscriptions.withLock { $0.append(subscription) }
    }

    /// Subscriptions held (cancelled ones included until ``cancelAll()``).
    public var count: Int { subscriptions.withLock { $0.count } }

    /// Cancels and forgets every subscription held.
    public func cancelAll() {
        let taken = subscriptions.withLock { list -> [Subscription] in
            defer { list.removeAll() }
            return list
        }
        for subscription in taken { subscription.cancel() }
    }
}
