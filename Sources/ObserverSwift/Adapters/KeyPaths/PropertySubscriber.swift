import ObserverEngine

/// The part of a key-path observer's box that its token switches: whether
/// the token is active now, and the owner gate.
@usableFromInline
class AttachableSubscriber: Subscriber, @unchecked Sendable {
    // @unchecked: all stored state is atomic or immutable.

    /// First stored property: the expiry's words (see `AtomicWord`;
    /// `Subscriber` declares no stored properties).
    var expiryWords = Expiry.Words()

    /// True between the token's `activate()` and `deactivate()`. Checked
    /// again where a queued handler runs, so that nothing is delivered after
    /// `deactivate()` returns.
    let attached = HeapAtomicWord<Bool>(false)
    let gate = OwnerGate()
    let expiry: Expiry

    init(list: AnySlotList) {
        expiry = Expiry(list: list)
    }

    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    override var isExpired: Bool { expiry.isExpired(of: self) }

    override func checkLiveness() -> Bool {
        if expiry.isExpired(of: self) { return false }
        if gate.ownerIsGone {
            expiry.expire(of: self)
            return false
        }
        return true
    }
}

/// A box in a ``PropertyChanges`` slot list: calls the handler with the old
/// and new value where its delivery says, unless the owner of its group died.
@usableFromInline
final class PropertySubscriber<Value>: AttachableSubscriber, @unchecked Sendable {
    let handler: @Sendable (Value, Value) -> Void
    let delivery: Delivery

    init(list: AnySlotList, delivery: Delivery, handler: @escaping @Sendable (Value, Value) -> Void) {
        self.handler = handler
        self.delivery = delivery
        super.init(list: list)
    }

    @usableFromInline
    func receive(old: Value, new: Value) {
        if gate.ownerIsGone {
            // Permanently: the owner cannot come back. Leaves the send path
            // without blocking; re-activation keeps it out (see `Expiry`).
            expiry.expire(of: self)
            return
        }
        guard attached.load(ordering: .relaxed) else { return }
        if case .synchronous = delivery.route { return handler(old, new) }
        let isSubscribed = { [self] in attached.load(ordering: .acquiring) && !gate.ownerIsGone }
        delivery.run(ifSubscribed: isSubscribed) {
            [self] in handler(old, new)
        }
    }
}
