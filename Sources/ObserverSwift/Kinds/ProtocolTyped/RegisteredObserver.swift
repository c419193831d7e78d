/// One observer registered with an ``ObserverRegistry``: the box stored in
/// the registry's list of all observers, and the writer-side record of where
/// the observer is stored (its slot in that list and in each protocol view).
///
/// It holds the observer `unowned`, never strongly: the observer's memory
/// (and so its address) stays allocated while the record exists, but the
/// observer itself may be deallocated at any time.
final class RegisteredObserver: Subscriber, @unchecked Sendable {
    // @unchecked: `observer`, `identifier` and `delivery` are immutable; `handle`, the view handles and `isRemoved` are only touched
    // under the owning registry's writer lock.

    /// The observer, held without owning it (see ``UnownedObserver``).
    let observer: UnownedObserver
    var address: UnsafeRawPointer { observer.address }
    let identifier: ObjectIdentifier
    let delivery: Delivery
    /// Which registration of the observer this is (see `ObserverRegistration`).
    let generation: UInt64

    /// Slot in the registry's list of all observers.
    var handle = SlotHandle.notAdded
    /// Slot in each protocol view this observer conforms to, keyed by view.
    /// Its handles in the protocol views it was stored in: the first one
    /// inline (one protocol used, the common case, allocates nothing), the
    /// others in a dictionary made for the second.
    private var firstViewKey: ObjectIdentifier?
    private var firstViewHandle = SlotHandle.notAdded
    private var otherViewHandles: [ObjectIdentifier: SlotHandle] = [:]
    /// Set once removed, so that a view being built skips it.
    var isRemoved = false

    init(_ observer: AnyObject, delivery: Delivery, generation: UInt64) {
        self.observer = UnownedObserver(observer)
        self.identifier = ObjectIdentifier(observer)
        self.delivery = delivery
        self.generation = generation
    }

    override func didAdd(handle: SlotHandle) { self.handle = handle }
    override var hasTarget: Bool { true }
    // The unowned reference keeps the allocation: no other object can have
    // this address while the record exists, so comparing addresses is exact.
    override func isTarget(_ object: AnyObject) -> Bool {
        UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) == address
    }
    override func checkLiveness() -> Bool { observer.isAlive }

    /// A strong reference to the observer, or nil once it is deallocating.
    func strongObserver() -> AnyObject? { observer.strongObserver() }

    /// Whether it is stored in the view of `key`.
    func isInView(_ key: ObjectIdentifier) -> Bool {
        firstViewKey == key || otherViewHandles[key] != nil
    }

    /// Records its handle in the view of `key` (not recorded before).
    func setViewHandle(_ handle: SlotHandle, for key: ObjectIdentifier) {
        if firstViewKey == nil {
            firstViewKey = key
            firstViewHandle = handle
        } else {
            otherViewHandles[key] = handle
        }
    }

    /// Forgets every view handle, then calls `body` with each (so `body`
    /// may run code that reaches this record again).
    func takeViewHandles(_ body: (ObjectIdentifier, SlotHandle) -> Void) {
        let first = firstViewKey.map { ($0, firstViewHandle) }
        let others = otherViewHandles
        firstViewKey = nil
        firstViewHandle = .notAdded
        otherViewHandles = [:]
        if let first { body(first.0, first.1) }
        for (key, handle) in others { body(key, handle) }
    }
}
