/// How a subscription that can end on its own (a spent `limit:`, a
/// deallocated target) ends, for the boxes `Event` and `KeyedEvent` share
/// (`QueuedOrLimitedSubscriber`, `WeakTargetSubscriber`, whose subclasses
/// each fix one of them). An `Event`'s box is stored once, in one list:
/// ``Expiry`` removes that slot. A `KeyedEvent`'s box is stored once under
/// each of its keys: its ``KeyedRegistration`` removes every one of them.
///
/// Every call names the box (`of: self`): an ``Expiry`` keeps its atomic
/// words in its box (`Expiry.Words`, the box's first stored property; see
/// `AtomicWord`), so that they cost no allocation of their own. A box keeps
/// those words whatever its expiry (a ``KeyedRegistration`` keeps its own
/// and leaves them unused): a first stored property whose type depended on
/// the expiry would make the offset of every later stored property a
/// run-time lookup, on the send path too.
@usableFromInline
package protocol SubscriptionExpiry: ~Copyable {
    /// The key a box receives with each value (`Void` for `Event`).
    associatedtype Key
    /// What a deferred delivery keeps to check, where it runs, that the
    /// subscription still wants it.
    associatedtype Scope

    /// True once the box will never deliver again and can be swept.
    func isExpired(of box: AnyObject) -> Bool

    /// Called once, right after the box has been stored under `handle`.
    func didAdd(handle: SlotHandle, of box: AnyObject)

    /// Ends the subscription from a send, without blocking. Called again (a
    /// later send met the box still stored because a writer lock was busy the
    /// first time), it retries the removal.
    func expire(of box: AnyObject)

    /// Taken on the sending thread for a delivery of `key` that runs later.
    func scope(forKey key: Key) -> Scope

    /// Whether a deferred delivery should still run (see
    /// `Delivery.run(ifSubscribed:_:)`): the subscription ended on its own
    /// (its last deliveries were claimed before), or it is still stored
    /// where `scope` says, that is, not cancelled.
    func isSubscribed(in scope: Scope, of box: AnyObject) -> Bool
}

extension Expiry: SubscriptionExpiry {
    @usableFromInline package typealias Key = Void

    /// The list, strongly: a deferred delivery may outlive the event, and
    /// `Expiry` holds its list unowned.
    @usableFromInline
    package func scope(forKey key: Void) -> AnySlotList { retainedList }
}

/// A registration is an object of its own, shared by the box's keys and its
/// token: its words are its own (`KeyedRegistration.Words`), not the box's.
extension KeyedRegistration: SubscriptionExpiry {
    package func isExpired(of box: AnyObject) -> Bool { isEnded }

    /// A keyed box records each slot it is stored in through ``record(_:)``.
    package func didAdd(handle: SlotHandle, of box: AnyObject) {}

    package func expire(of box: AnyObject) { expireFromSendPath() }

    package func scope(forKey key: Key) -> Key { key }

    package func isSubscribed(in key: Key, of box: AnyObject) -> Bool { isSubscribed(underKey: key) }
}
