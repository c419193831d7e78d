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
/// <!-- snippet: fragment of IntEvent -->
/// ```swift
/// let bag = SubscriptionBag()
/// event.subscribe { print($0) }.store(in: bag)
/// // ... when `bag` is deallocated, the subscription is cancelled.
/// ```
public final class Subscription: Hashable, @unchecked Sendable {
    // @unchecked: every stored property is immutable but the first, whose
    // word is only accessed atomically.

    // The fields are ordered so that the token is 40 bytes (a 48-byte heap
    // block): a flag byte and the handle's index share one 8-byte word.

    /// First stored property: `cancelsOnRelease`' word (see `AtomicWord`).
    package var cancelsOnReleaseWord = AtomicWordStorage<Bool>(false)
    /// The handle's slot index; for a token that is not one slot of one
    /// list (`handleSequence` 0), what `owner` is (see `OwnerKind`).
    private let handleIndex: UInt32
    /// The handle's sequence; 0 (never issued) when `owner` is not a list
    /// (or the token never was active: then neither kind is in the index).
    private let handleSequence: UInt64
    /// The slot list of a one-slot subscription (`handleSequence` not 0);
    /// otherwise nil or unused (an inactive token) or what cancels it: a keyed
    /// subscription spans one slot per key; a producer stream's token
    /// (ObserverSwiftCompat's `IndefiniteObservable`) runs its disconnect once.
    ///
    /// Strong, not weak: a weak reference would give the list a side table
    /// and send every retain/release of it down the runtime's slow path. A
    /// token keeps only the (emptied) C list alive after its source is gone:
    /// sources remove all their observers when they are deallocated.
    private let owner: AnyObject?
    /// Set by `store(in: &set)`. Relaxed: read only by `deinit`, which the
    /// release of the last reference orders after every store.
    private var cancelsOnRelease: AtomicWord<Bool> { AtomicWords.first(self) }

    @usableFromInline
    package init(list: AnySlotList?, handle: SlotHandle) {
        self.handleIndex = handle.index
        self.handleSequence = handle.sequence
        self.owner = list
    }

    /// A token that cancels through `registration` (a keyed subscription, a
    /// sole handler).
    @usableFromInline
    package init(registration: SubscriptionRegistration) {
        self.handleIndex = OwnerKind.registration
        self.handleSequence = 0
        self.owner = registration
    }

    /// A token that cancels through `canceller` (ObserverSwiftCompat's
    /// producer streams).
    package init(canceller: any SubscriptionCanceller) {
        self.handleSequence = 0
        if let registration = canceller as? SubscriptionRegistration {
            self.handleIndex = OwnerKind.registration
            self.owner = registration
        } else {
            self.handleIndex = OwnerKind.canceller
            self.owner = canceller
        }
    }

    /// The handle of a one-slot subscription (``SlotHandle/notAdded`` for
    /// any other token).
    package var handle: SlotHandle {
        handleSequence == 0 ? SlotHandle.notAdded : SlotHandle(sequence: handleSequence, index: handleIndex)
    }

    deinit {
        if cancelsOnRelease.load(ordering: .relaxed) { cancel() }
    }

    /// A token that never was active (for example `limit: 0`).
    @usableFromInline
    package static var inactive: Subscription { Subscription(list: nil, handle: SlotHandle.notAdded) }

    /// Whether the subscription is still stored (not cancelled, not expired
    /// and removed, source alive).
    public var isActive: Bool {
        isSubscriptionActive(owner: owner, index: handleIndex, sequence: handleSequence)
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
        // A one-slot token first, its list borrowed: this token keeps it
        // (a downcast of the `let` would retain and release it).
        if handleSequence != 0 {
            let list = Unmanaged<AnySlotList>.fromOpaque(Unmanaged.passUnretained(owner.unsafelyUnwrapped).toOpaque())
            let handle = SlotHandle(sequence: handleSequence, index: handleIndex)
            return withExtendedLifetime(self) { list._withUnsafeGuaranteedRef { $0.remove(handle) } }
        }
        return cancelSubscription(owner: owner, index: handleIndex, sequence: handleSequence)
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
    package var reference: SubscriptionReference {
        SubscriptionReference(owner: owner, index: handleIndex, sequence: handleSequence)
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
    /// <!-- snippet: fragment of IntEvent -->
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

    /// What is known of the subscription: whether it is active and, when it
    /// was made while ``ObserverCore/isTrackingSubscriptions`` was on, its
    /// kind, source type, delivery, creation site and deliveries.
    ///
    /// `Subscription(active, closure on Event<Int>, synchronous, made at App/Model.swift:12, 3 deliveries)`
    public var debugDescription: String {
        let state = isActive ? "active" : "inactive"
        if let record = SubscriptionTracking.record(of: reference) {
            return "Subscription(\(state), \(record.snapshot))"
        }
        return "Subscription(\(state), not tracked)"
    }
}

// The members are in the class body: the symbol graph of ObserverSwift, which
// re-exports the type, takes in no member an extension declares.
extension Subscription: CustomDebugStringConvertible {}

/// A subscription as its token sees it, without the token: the same
/// `isActive` and `cancel()`.
package struct SubscriptionReference: @unchecked Sendable {
    // @unchecked: the owner is a slot list or a registration (both Sendable)
    // or a `SubscriptionCanceller` (Sendable), held as `AnyObject`.
    fileprivate let owner: AnyObject?
    fileprivate let index: UInt32
    fileprivate let sequence: UInt64

    /// Same contract as ``Subscription/isActive``.
    package var isActive: Bool { isSubscriptionActive(owner: owner, index: index, sequence: sequence) }

    /// Same contract as ``Subscription/cancel()``.
    @discardableResult
    package func cancel() -> Bool { cancelSubscription(owner: owner, index: index, sequence: sequence) }

    /// Whether both identify the same subscription.
    package func isSame(as other: SubscriptionReference) -> Bool {
        owner === other.owner && index == other.index && sequence == other.sequence
    }
}

/// ``Subscription/isActive`` of a token's fields.
@inline(__always)
private func isSubscriptionActive(owner: AnyObject?, index: UInt32, sequence: UInt64) -> Bool {
    guard let owner else { return false }
    if sequence != 0 {
        return unsafeDowncast(owner, to: AnySlotList.self).contains(SlotHandle(sequence: sequence, index: index))
    }
    if index == OwnerKind.registration {
        return unsafeDowncast(owner, to: SubscriptionRegistration.self).isSubscriptionActive
    }
    guard index == OwnerKind.canceller else { return false }
    return (owner as! any SubscriptionCanceller).isSubscriptionActive
}

/// ``Subscription/cancel()`` of a token's fields.
@inline(__always)
private func cancelSubscription(owner: AnyObject?, index: UInt32, sequence: UInt64) -> Bool {
    guard let owner else { return false }
    if sequence != 0 {
        return unsafeDowncast(owner, to: AnySlotList.self).remove(SlotHandle(sequence: sequence, index: index))
    }
    if index == OwnerKind.registration {
        return unsafeDowncast(owner, to: SubscriptionRegistration.self).cancelSubscription()
    }
    guard index == OwnerKind.canceller else { return false }
    return (owner as! any SubscriptionCanceller).cancelSubscription()
}

/// What a token's owner is when its handle's sequence is 0, stored in the
/// handle's index.
private enum OwnerKind {
    /// An engine registration: cancelled through its class, no cast.
    package static var registration: UInt32 { 1 }
    /// Any other `SubscriptionCanceller` (ObserverSwiftCompat's).
    package static var canceller: UInt32 { 2 }
}

/// The engine's own ``SubscriptionCanceller``s (a keyed subscription's
/// registration) derive from this class, so that a token cancels them with a
/// class call rather than a cast to the protocol. Subclasses override both
/// members; the class declares no stored properties (a subclass's first
/// stored property may hold its atomic words, see `AtomicWord`).
@_documentation(visibility: internal) open class SubscriptionRegistration: @unchecked Sendable {
    public init() {}

    /// Same contract as ``Subscription/cancel()``.
    open func cancelSubscription() -> Bool { false }
    /// Same contract as ``Subscription/isActive``.
    open var isSubscriptionActive: Bool { false }
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
    /// <!-- snippet: fragment of IntEvent -->
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
    package func insert(_ subscription: Subscription) {
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
