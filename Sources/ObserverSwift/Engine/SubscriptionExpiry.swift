/// How a subscription that can end on its own (a spent `limit:`, a
/// deallocated target) ends, for the boxes `Event` and `KeyedEvent` share
/// (`QueuedOrLimitedSubscriber`, `TargetSubscriber`). An `Event`'s box is
/// stored once, in one list: ``Expiry`` removes that slot. A `KeyedEvent`'s
/// box is stored once under each of its keys: its ``KeyedRegistration``
/// removes every one of them.
@usableFromInline
protocol SubscriptionExpiry: ~Copyable {
    /// The key a box receives with each value (`Void` for `Event`).
    associatedtype Key
    /// What a deferred delivery keeps to check, where it runs, that the
    /// subscription still wants it.
    associatedtype Scope

    /// True once the box will never deliver again and can be swept.
    var isExpired: Bool { get }

    /// Called once, right after the box has been stored under `handle`.
    func didAdd(handle: SlotHandle)

    /// Ends the subscription from a send, without blocking. Called again (a
    /// later send met the box still stored because a writer lock was busy the
    /// first time), it retries the removal.
    func expire()

    /// Taken on the sending thread for a delivery of `key` that runs later.
    func scope(forKey key: Key) -> Scope

    /// Whether a deferred delivery should still run (see
    /// `Delivery.run(ifSubscribed:_:)`): the subscription ended on its own
    /// (its last deliveries were claimed before), or it is still stored
    /// where `scope` says, that is, not cancelled.
    func isSubscribed(in scope: Scope) -> Bool
}

extension Expiry: SubscriptionExpiry {
    @usableFromInline typealias Key = Void

    /// The list, strongly: a deferred delivery may outlive the event, and
    /// `Expiry` holds its list unowned.
    @usableFromInline
    func scope(forKey key: Void) -> AnySlotList { retainedList }
}

extension KeyedRegistration: SubscriptionExpiry {
    var isExpired: Bool { isEnded }

    /// A keyed box records each slot it is stored in through ``record(_:)``.
    func didAdd(handle: SlotHandle) {}

    func expire() { expireFromSendPath() }

    func scope(forKey key: Key) -> Key { key }

    func isSubscribed(in key: Key) -> Bool { isSubscribed(underKey: key) }
}
